package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// Issue #19 (local runs): nothing a run leaves outside its own directory
// meets another run. The attack: a run plants, in /var/tmp, a private file
// (mode 0600) and a copy of cat made set-user-id to its own uid, and ends.
// A victim run of another task with a secret starts next (before round-robin
// ids, it got the planter's uid back and with it the private file); then a
// thief run, concurrent with the victim, runs the planted cat on the
// victim's secret (before no_new_privs and nosuid, it became the victim's
// user). Now each run has a fresh /var/tmp, no program of a run gains
// privileges, and the victim's uid is not the planter's.
func TestLocalLauncher_aRunFindsNothingAnEarlierRunLeftOutsideItsDirectory(t *testing.T) {
	users := isolatedRunUsers(t)
	if users == nil {
		return
	}
	plant := filepath.Join("/var/tmp", "bastion-plant-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	t.Cleanup(func() { _ = os.RemoveAll(plant) })

	repo := gittest.NewRepo(t)
	repo.WriteFile("plant.sh", `#!/bin/bash
mkdir -p "$PLANT" && chmod 755 "$PLANT"
cp /bin/cat "$PLANT/cat" && chmod 4755 "$PLANT/cat"
echo "private note of run user $(id -u)" > "$PLANT/leftover" && chmod 600 "$PLANT/leftover"
echo planted
`, true)
	repo.WriteFile("victim.sh", `#!/bin/bash
if cat "$PLANT/leftover" 2>/dev/null; then echo "READ-LEFTOVER"; else echo "DENIED-LEFTOVER"; fi
echo holding
sleep 300
`, true)
	repo.WriteFile("thief.sh", `#!/bin/bash
echo "thief is $(id -u)"
if "$PLANT/cat" "$VICTIM_SECRET" 2>/dev/null; then echo; echo "READ-VICTIM-SECRET"; else echo "DENIED-VICTIM-SECRET"; fi
`, true)

	l := newIsolatedLauncher(t, users)
	ctx := context.Background()
	start := func(r isolatedRun) { startIsolated(t, l, r) }
	env := func(extra ...string) map[string]string {
		m := map[string]string{"PLANT": plant}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}

	// 1. Project A's run plants, ends and is released.
	planter := newIsolatedRun("planter", nil, runspec.Spec{App: "bash", Playbook: "plant.sh",
		Repository: runspec.Repository{URL: repo.Path}, Env: env()})
	start(planter)
	waitPhase(t, l, planter.run, PhaseSucceeded)
	planterUID, _ := readUID(l.runDir(planter.run))
	t.Logf("planter's output:\n%s", readFile(t, filepath.Join(l.runDir(planter.run), logFile)))
	if err := l.Release(ctx, planter.run); err != nil {
		t.Fatal(err)
	}

	// 2. Project B's run, with a production secret, gets the id back.
	victim := newIsolatedRun("victim", map[string]string{"SECRET": "s3cret-of-the-victim"},
		runspec.Spec{App: "bash", Playbook: "victim.sh", Repository: runspec.Repository{URL: repo.Path}, Env: env()})
	start(victim)
	victimDir := l.runDir(victim.run)
	victimOut := waitLog(t, filepath.Join(victimDir, logFile), "holding")
	victimUID, _ := readUID(victimDir)
	t.Logf("planter uid %d, victim uid %d; victim's output:\n%s", planterUID, victimUID, victimOut)

	// 3. Project A's next run, under another id, uses what it planted.
	thief := newIsolatedRun("thief", nil, runspec.Spec{App: "bash", Playbook: "thief.sh",
		Repository: runspec.Repository{URL: repo.Path},
		Env:        env("VICTIM_SECRET", filepath.Join(victimDir, "secrets", "victim-secret", "SECRET"))})
	start(thief)
	waitPhase(t, l, thief.run, PhaseSucceeded)
	thiefOut := readFile(t, filepath.Join(l.runDir(thief.run), logFile))
	t.Logf("thief's output:\n%s", thiefOut)

	if victimUID == planterUID {
		t.Errorf("the victim run was given uid %d, the id of the run that just ended", victimUID)
	}
	if strings.Contains(victimOut, "READ-LEFTOVER") || strings.Contains(victimOut, "private note") {
		t.Errorf("a run of another task, reusing uid %d, read the private file the last run of that uid left in %s", victimUID, plant)
	}
	if strings.Contains(thiefOut, "s3cret-of-the-victim") {
		t.Errorf("a concurrent run became the victim's user %d through a set-user-id program a previous run of that id left in %s, and read the victim's secret", victimUID, plant)
	}
}

// An isolated run's programs have no_new_privs; /var/tmp and /dev/shm are
// empty tmpfs of the run's own, nosuid; the run's own directory is mounted
// nosuid; its IPC namespace is not the manager's. /tmp stays the host's
// (where runs' directories and shared files live).
func TestLocalLauncher_aRunHasPrivateTemporaryDirsAndGainsNoPrivileges(t *testing.T) {
	users := isolatedRunUsers(t)
	if users == nil {
		return
	}
	hostFile := filepath.Join("/var/tmp", "bastion-host-file-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.WriteFile(hostFile, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(hostFile) })
	repo := gittest.NewRepo(t)
	repo.WriteFile("look.sh", `#!/bin/bash
grep NoNewPrivs /proc/self/status
echo "ipc $(readlink /proc/self/ns/ipc)"
if [ -e "$HOST_FILE" ]; then echo "SEES-HOST-TMP"; fi
for point in /var/tmp /dev/shm "$RUN_DIR"; do
  awk -v p="$point" '$5 == p { print "mount", $5, $6, $(NF-2) }' /proc/self/mountinfo | tail -n 1
done
`, true)
	l := newIsolatedLauncher(t, users)
	runDir := l.runDir(newIsolatedRun("look", nil, runspec.Spec{}).run) // named after the task
	look := newIsolatedRun("look", nil, runspec.Spec{App: "bash", Playbook: "look.sh",
		Repository: runspec.Repository{URL: repo.Path}, Env: map[string]string{"HOST_FILE": hostFile, "RUN_DIR": runDir}})
	startIsolated(t, l, look)
	waitPhase(t, l, look.run, PhaseSucceeded)
	out := readFile(t, filepath.Join(l.runDir(look.run), logFile))
	t.Logf("the run's output:\n%s", out)

	if !regexp.MustCompile(`NoNewPrivs:\s+1`).MatchString(out) {
		t.Errorf("the run's programs do not have no_new_privs")
	}
	managerIPC, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ipc ipc:") || strings.Contains(out, "ipc "+managerIPC) {
		t.Errorf("the run is not in an IPC namespace of its own (the manager's is %s)", managerIPC)
	}
	if strings.Contains(out, "SEES-HOST-TMP") {
		t.Errorf("the run sees the host's /var/tmp")
	}
	for _, point := range []string{"/var/tmp", "/dev/shm"} {
		if !regexp.MustCompile(`mount ` + regexp.QuoteMeta(point) + ` \S*nosuid\S* tmpfs`).MatchString(out) {
			t.Errorf("%s is not a nosuid tmpfs of the run's own", point)
		}
	}
	if !regexp.MustCompile(`mount ` + regexp.QuoteMeta(runDir) + ` \S*nosuid`).MatchString(out) {
		t.Errorf("the run's own directory %s is not mounted nosuid", runDir)
	}
}

// Ids go round the range: the id of a run that just ended is the last to
// be handed out again; ids a run directory holds are skipped; a manager
// starts somewhere in the range.
func TestLocalLauncher_runUsersGoRoundTheRange(t *testing.T) {
	base := t.TempDir()
	users := &RunUsers{First: 2_100_000_000, Count: 4}
	l := &LocalLauncher{Users: users, BaseDir: base}
	next := func() uint32 {
		t.Helper()
		uid, err := l.allocateUser()
		if err != nil {
			t.Fatal(err)
		}
		return uid
	}
	first := next()
	if first < users.First || first >= users.First+users.Count {
		t.Fatalf("id %d is outside the range", first)
	}
	following := func(uid uint32) uint32 { return users.First + (uid-users.First+1)%users.Count }
	held := filepath.Join(base, "ns_held_uid")
	if err := os.MkdirAll(held, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(held, uidFile), []byte(strconv.Itoa(int(following(first)))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second := next()
	if want := following(following(first)); second != want {
		t.Fatalf("after %d, with %d held: %d, want %d", first, following(first), second, want)
	}
	if err := os.RemoveAll(held); err != nil {
		t.Fatal(err)
	}
	// Round the range, the first id comes back only after every other.
	for _, want := range []uint32{following(second), first, following(first)} {
		if got := next(); got != want {
			t.Fatalf("next id %d, want %d", got, want)
		}
	}
}

// newIsolatedLauncher is a launcher of isolated runs of the real `bastion
// runner`, with its data dir private as the manager makes it (so runs move
// under /tmp), reading Secrets from a fake client.
func newIsolatedLauncher(t *testing.T, users *RunUsers) *LocalLauncher {
	t.Helper()
	bastion := buildBastion(t)
	dataDir := t.TempDir()
	if err := os.Chmod(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	l := &LocalLauncher{Users: users, BaseDir: filepath.Join(dataDir, "runs"), GracePeriod: time.Second,
		Command: []string{bastion, "runner"}}
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(l.BaseDir) })
	l.Client = fake.NewClientBuilder().WithScheme(testScheme()).Build()
	return l
}

// startIsolated creates the run's Secrets and starts it; it is released
// when the test ends.
func startIsolated(t *testing.T, l *LocalLauncher, r isolatedRun) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range r.objects {
		if err := l.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Start(ctx, r.run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(ctx, r.run) })
}

// An id that a process runs as is never handed out, whoever started the
// process (a crashed manager's run, one that escaped its kill): a look at
// the processes a few seconds old is enough (processScanEvery), and a
// launcher's first start looks.
func TestLocalLauncher_anIdAProcessRunsAsIsNotHandedOut(t *testing.T) {
	if isolatedRunUsers(t) == nil {
		return
	}
	users := &RunUsers{First: 2_100_000_100, Count: 3}
	for _, uid := range []uint32{users.First + 1, users.First + 2} {
		stranger := exec.Command("sleep", "60")
		stranger.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
		if err := stranger.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stranger.Process.Kill(); _ = stranger.Wait() })
	}
	l := &LocalLauncher{Users: users, BaseDir: t.TempDir()}
	for range 4 {
		if uid, err := l.allocateUser(); err != nil || uid != users.First {
			t.Fatalf("allocateUser = %d, %v; want %d, the one id no process runs as", uid, err, users.First)
		}
	}
}

// A run cannot keep its processes alive, nor hang the manager, by stopping
// the shell that kills its user: the shell has a bound, and then the
// manager kills every process of the user itself.
func TestLocalLauncher_aRunThatStopsItsKillerIsKilledAllTheSame(t *testing.T) {
	if isolatedRunUsers(t) == nil {
		return
	}
	const uid = 2_100_000_200
	stopper := exec.Command("/bin/sh", "-c", "while :; do kill -STOP -1; done")
	stopper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	if err := stopper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = stopper.Wait(); close(exited) }()
	t.Cleanup(func() { _ = stopper.Process.Kill() })

	killed := make(chan struct{})
	go func() { killUser(uid); close(killed) }()
	select {
	case <-killed:
	case <-time.After(30 * time.Second):
		t.Fatal("killUser still waits 30 s later: the run stopped its shell")
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the run's process outlived killUser")
	}
	if processUsers()[uid] {
		t.Fatal("a process of the run's user is left")
	}
}

// processUsers is the set of real user ids of the host's processes.
func processUsers() map[uint32]bool {
	users := map[uint32]bool{}
	forEachProcess(func(pid int, uid uint32) { users[uid] = true })
	return users
}

// isolatedRunUsers gives the run users where runs can be isolated (the
// manager is root). Elsewhere no run can be isolated, and what must hold
// instead is that the launcher says so plainly: it checks that and gives
// nil, and the test ends there.
func isolatedRunUsers(t *testing.T) *RunUsers {
	t.Helper()
	users, why := Isolation()
	if users == nil {
		t.Logf("local runs cannot be isolated here (%s): checking the warning instead", why)
		l := &LocalLauncher{}
		if !strings.Contains(l.Describe(), "local runs share the manager's user") || why == "" {
			t.Fatalf("the notice does not say that runs share the manager's user: %q (%q)", l.Describe(), why)
		}
	}
	return users
}
