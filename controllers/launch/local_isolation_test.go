package launch

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// The attack of issue #19 on local runs, with the real `bastion runner`:
// a bash task tries to read the data dir's database, another live run's
// secret and input, that run's environment through /proc, to list the
// runs and to write into its own run directory. As root, each run is its
// own unprivileged user and all of that is denied, while the task itself
// still works (a tool on a PATH directory under a 0700 directory runs, and
// HOME and TMPDIR are its own). Release kills every process of a run's
// user, including one that left the run's process group.
//
// Not as root, runs cannot be isolated: the test then checks that the
// launcher says so plainly.
func TestLocalLauncher_isolatedRunsReachNothingButTheirOwn(t *testing.T) {
	users := isolatedRunUsers(t)
	if users == nil {
		return
	}
	t.Log("running as root: each run is its own user")
	bastion := buildBastion(t)

	// The data dir: private to the manager (as bastion dev makes it), with
	// a database in it.
	dataDir := t.TempDir()
	if err := os.Chmod(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dataDir, "bastion.db")
	if err := os.WriteFile(db, []byte("DATABASE"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tool on PATH that only root could reach (~/.cache under /root).
	hidden := t.TempDir()
	if err := os.Chmod(hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(hidden, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "hidden-tool"), []byte("#!/bin/sh\necho TOOL-RAN-AS-$(id -u)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))

	repo := gittest.NewRepo(t)
	repo.WriteFile("hold.sh", "#!/bin/bash\nsetsid sleep 300 >/dev/null 2>&1 &\necho holding\nsleep 300\n", true)
	repo.WriteFile("attack.sh", attackScript, true)

	l := &LocalLauncher{Users: users, BaseDir: filepath.Join(dataDir, "runs"), GracePeriod: time.Second}
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(l.BaseDir) })
	if strings.HasPrefix(l.BaseDir, dataDir) {
		t.Fatalf("the runs stayed in the private data dir %s, out of the runs' reach", l.BaseDir)
	}
	victim := newIsolatedRun("victim", map[string]string{"SECRET": "s3cret-of-the-victim"},
		runspec.Spec{App: "bash", Playbook: "hold.sh", Repository: runspec.Repository{URL: repo.Path}})
	l.Command = []string{bastion, "runner"}
	l.Client = fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(victim.objects...).Build()
	if err := os.WriteFile(filepath.Join(dataDir, "kubeconfig"), []byte("KUBECONFIG"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	victimDir := l.runDir(victim.run)
	if err := l.Start(ctx, victim.run); err != nil {
		t.Fatal(err)
	}
	waitLog(t, filepath.Join(victimDir, logFile), "holding")
	victimUID, _ := readUID(victimDir)
	var victimPids []string
	forEachProcess(func(pid int, uid uint32) {
		if uid == victimUID {
			victimPids = append(victimPids, strconv.Itoa(pid))
		}
	})

	// The attacker is told where everything is.
	attacker := newIsolatedRun("attacker", nil, runspec.Spec{
		App: "bash", Playbook: "attack.sh", Repository: runspec.Repository{URL: repo.Path},
		Env: map[string]string{
			"DB": db, "KUBECONFIG_FILE": filepath.Join(dataDir, "kubeconfig"),
			"VICTIM_SECRET": filepath.Join(victimDir, "secrets", "victim-secret", "SECRET"),
			"VICTIM_INPUT":  filepath.Join(victimDir, "input", runspec.TaskFile),
			"VICTIM_WORK":   filepath.Join(victimDir, "work"),
			"VICTIM_PIDS":   strings.Join(victimPids, " "),
			"RUNS":          l.BaseDir,
		},
	})
	for _, obj := range attacker.objects {
		if err := l.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Start(ctx, attacker.run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, l, attacker.run, PhaseSucceeded)
	out := readFile(t, filepath.Join(l.runDir(attacker.run), logFile))
	t.Logf("attacker's output:\n%s", out)

	uid, _ := readUID(l.runDir(attacker.run))
	for _, want := range []string{
		"who: " + strconv.Itoa(int(uid)) + " groups: " + strconv.Itoa(int(uid)) + " name: bastion-run",
		"DENIED db", "DENIED kubeconfig", "DENIED victim-secret", "DENIED victim-input", "DENIED victim-work",
		"DENIED list-runs", "DENIED write-own-run-dir", "DENIED environ",
		"TOOL-RAN-AS-" + strconv.Itoa(int(uid)),
		"OWN-HOME-AND-TMP",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the attacker's output lacks %q", want)
		}
	}
	for _, leak := range []string{"DATABASE", "KUBECONFIG", "s3cret-of-the-victim", "READ "} {
		if strings.Contains(out, leak) {
			t.Errorf("the attacker's output has %q", leak)
		}
	}
	if uid == victimUID || uid < users.First || victimUID < users.First {
		t.Errorf("uids: attacker %d, victim %d, range from %d", uid, victimUID, users.First)
	}
	if len(victimPids) < 2 {
		t.Fatalf("the victim's processes: %v", victimPids)
	}

	// Releasing the victim ends every process of its user, the one that
	// left the process group (setsid) too, and frees its directory.
	if err := l.Release(ctx, victim.run); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, attacker.run); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for processUsers()[victimUID] {
		if time.Now().After(deadline) {
			t.Fatalf("a process of the victim's user %d outlived Release", victimUID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, _ := os.ReadDir(l.BaseDir); len(left) != 0 {
		t.Fatalf("left in the runs directory: %v", left)
	}
}

// attackScript prints DENIED or READ for each thing it must not reach.
const attackScript = `#!/bin/bash
echo "who: $(id -u) groups: $(id -G) name: $(id -un)"
try() { if cat "$2" >/dev/null 2>&1; then echo "READ $1"; cat "$2"; echo; else echo "DENIED $1"; fi; }
try db "$DB"
try kubeconfig "$KUBECONFIG_FILE"
try victim-secret "$VICTIM_SECRET"
try victim-input "$VICTIM_INPUT"
if ls "$VICTIM_WORK" >/dev/null 2>&1; then echo "READ victim-work"; else echo "DENIED victim-work"; fi
if ls "$RUNS" >/dev/null 2>&1; then echo "READ list-runs"; ls "$RUNS"; else echo "DENIED list-runs"; fi
if touch "$(dirname "$HOME")/../x" 2>/dev/null; then echo "READ write-own-run-dir"; else echo "DENIED write-own-run-dir"; fi
for pid in $VICTIM_PIDS; do
  if cat /proc/$pid/environ >/dev/null 2>&1; then echo "READ environ of $pid"; else echo "DENIED environ"; fi
done
hidden-tool
touch "$HOME/x" "$TMPDIR/x" && echo OWN-HOME-AND-TMP
`

type isolatedRun struct {
	run     Run
	objects []runtimeObject
}

type runtimeObject = client.Object

// newIsolatedRun is a task with its input Secret and one Secret of its own.
func newIsolatedRun(name string, secret map[string]string, spec runspec.Spec) isolatedRun {
	spec.Namespace, spec.Name = "ns", name
	data, _ := json.Marshal(spec)
	objects := []runtimeObject{&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-input"},
		Data:       map[string][]byte{runspec.TaskFile: data, runspec.TokenFile: []byte("token-" + name)},
	}}
	run := Run{Name: name, InputSecret: name + "-input",
		Task: &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}}}
	if secret != nil {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-secret"}, Data: map[string][]byte{}}
		for k, v := range secret {
			s.Data[k] = []byte(v)
		}
		objects = append(objects, s)
		run.Secrets = []string{name + "-secret"}
	}
	return isolatedRun{run: run, objects: objects}
}

func testScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	return scheme
}

// buildBastion is $BASTION_BIN, or the binary built from this checkout
// into a directory only root can reach (the runner starts as root).
func buildBastion(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("BASTION_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "bastion")
	build := exec.Command("go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building bastion: %v\n%s", err, out)
	}
	return bin
}

// waitLog waits for a run's log to contain want, and returns it.
func waitLog(t *testing.T, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said %q:\n%s", path, want, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
