package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// Issue #21 items 2 and 5: three managers on one store, 20 tasks running
// and a schedule firing every minute.
//
//  1. A standby is killed with SIGKILL: nothing changes; the leader keeps
//     its Lease and every task keeps running.
//  2. The schedule fires its first minute, and at once the leader is
//     killed with SIGKILL (found from the Lease's holder, the replica's
//     name). The last replica takes the Lease within 15 s (measured and
//     printed), adopts the runs the old leader started, and finishes them.
//
// Every task ends once, with exactly the lines its script printed; the
// schedule fires once for its first minute (the one the dead leader
// claimed) and once for the next (the new leader's), never twice.
func TestHAFailover_leaderKilledDuringTwentyTasksAndAScheduleLosesNothingAndRunsNothingTwice(t *testing.T) {
	// Not t.Parallel: the worst takeover by design is 13.3 s against the
	// 15 s bound (internal/cmd/leader.go), too little margin to share the
	// machine with the other tests of this package.
	const tasks, bursts = 20, 200 // 1,000 lines of 40 s or more per task
	h := startHA(t, 3)
	leases := leaseReader(t, h.cluster.kubeconfig)
	leader := h.waitLeader(30 * time.Second)
	if holder := leases.holder(); holder != leader.name {
		t.Fatalf("the Lease names %q, the metric %s", holder, leader.name)
	}
	followers := h.followers()
	standby, survivor := followers[0], followers[1]
	api := h.signIn(survivor.url) // the replica that lives to the end
	cp := newCounterProject(t, api, bursts)
	ticks := newTickTemplate(t, api, cp)

	// The schedule's first minute must come while the tasks run: start
	// them in the last 25 s of a minute.
	waitForSecond(t, 35, 42)
	api.must("POST", cp.path+"/schedules", map[string]any{"name": "every minute", "template_id": ticks,
		"cron_format": "* * * * *", "active": true}, http.StatusCreated, nil)
	started := map[string]int64{}
	for n := 1; n <= tasks; n++ {
		label := fmt.Sprintf("f%02d", n)
		started[label] = cp.startTask(api, label)
	}
	waitRunning(t, api, cp, started)

	// 1. A standby dies: the leader keeps leading, renewing its Lease.
	killedAt := time.Now()
	standby.kill()
	eventually(t, 10*time.Second, "the leader renews after a standby's death", func() error {
		lease := leases.get()
		if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != leader.name {
			return fmt.Errorf("the Lease moved to %q", holder)
		}
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(killedAt) {
			return fmt.Errorf("not renewed since the standby died")
		}
		return nil
	})
	if ptr.Deref(leases.get().Spec.LeaseTransitions, 0) != 0 {
		t.Fatal("the Lease changed hands when a standby died")
	}
	assertRunning(t, api, cp, started)
	t.Logf("%s (standby) killed: %s still leads, %d tasks still running", standby.name, leader.name, tasks)

	// 2. The schedule fires its first minute; the leader dies at once.
	var first tickRun
	eventually(t, 70*time.Second, "the schedule's first run", func() error {
		runs := tickRuns(t, api, cp, ticks)
		if len(runs) == 0 {
			return fmt.Errorf("no run yet")
		}
		first = runs[0]
		return nil
	})
	leader.kill()
	killedAt = time.Now()
	t.Logf("the schedule fired for %s (task #%d); %s (leader) killed %s later", first.minute(), first.ID,
		leader.name, killedAt.Sub(first.Created).Round(time.Millisecond))
	// No leader now, so no status moves: this is what the kill met.
	assertRunning(t, api, cp, started)
	eventually(t, 30*time.Second, "a new leader", func() error {
		if holder := leases.holder(); holder != survivor.name {
			return fmt.Errorf("the Lease names %q", holder)
		}
		return nil
	})
	takeover := time.Since(killedAt)
	fmt.Fprintf(os.Stderr, "HA failover: %s took the Lease %s after SIGKILL of the leader %s\n",
		survivor.name, takeover.Round(10*time.Millisecond), leader.name)
	t.Logf("%s took the Lease %s after SIGKILL of the leader", survivor.name, takeover.Round(10*time.Millisecond))
	if takeover > 15*time.Second {
		t.Errorf("takeover took %s, want within 15 s", takeover)
	}
	// The endpoints catch up: the dead replicas leave the Service.
	h.proxy.only(survivor.url)

	cp.checkTasks(t, api, started, bursts*5, 4*time.Minute)

	// The next minute fires once, from the new leader; the first never
	// again.
	next := first.Created.UTC().Truncate(time.Minute).Add(time.Minute)
	var runs []tickRun
	eventually(t, time.Until(next)+45*time.Second, "the schedule's next run, finished", func() error {
		runs = tickRuns(t, api, cp, ticks)
		if len(runs) < 2 {
			return fmt.Errorf("%d runs", len(runs))
		}
		for _, r := range runs {
			if r.Status != "success" {
				return fmt.Errorf("run #%d is %s", r.ID, r.Status)
			}
		}
		return nil
	})
	perMinute := map[string]int{}
	for _, r := range runs {
		perMinute[r.minute()]++
	}
	for minute, n := range perMinute {
		if n > 1 {
			t.Errorf("the schedule fired %d times for %s", n, minute)
		}
	}
	if perMinute[first.minute()] != 1 || perMinute[next.Format("15:04")] != 1 {
		t.Errorf("runs per minute %v, want one for %s and one for %s", perMinute, first.minute(), next.Format("15:04"))
	}
	fired, err := os.ReadFile(filepath.Join(cp.records, "ticks"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(fired), "tick\n"); n != len(runs) {
		t.Errorf("the tick script ran %d times for %d scheduled tasks", n, len(runs))
	}
	t.Logf("scheduled runs per minute: %v", perMinute)
}

// newTickTemplate adds to cp's project a template whose script records
// each run in cp.records/ticks.
func newTickTemplate(t *testing.T, api *apiClient, cp *counterProject) int64 {
	t.Helper()
	// Writable by every run's own user, as sharedRecords makes "runs".
	record := filepath.Join(cp.records, "ticks")
	if err := os.WriteFile(record, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(record, 0o666); err != nil { // whatever the umask
		t.Fatal(err)
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("tick.sh", "#!/bin/bash\necho tick >> \"$1/ticks\"\necho tick\n", true)
	keyID := api.idNamed(cp.path+"/keys", "nothing")
	api.must("POST", cp.path+"/repositories", map[string]any{"name": "ticks", "git_url": repo.Path, "ssh_key_id": keyID}, http.StatusNoContent, nil)
	var template struct {
		ID int64 `json:"id"`
	}
	api.must("POST", cp.path+"/templates", map[string]any{
		"name": "Tick", "playbook": "tick.sh", "app": "bash", "repository_id": api.idNamed(cp.path+"/repositories", "ticks"),
		"inventory_id": api.idNamed(cp.path+"/inventory", "here"), "environment_id": api.idNamed(cp.path+"/environment", "none"),
		"arguments": fmt.Sprintf(`[%q]`, cp.records),
	}, http.StatusCreated, &template)
	return template.ID
}

// tickRun is a task the schedule started.
type tickRun struct {
	ID         int64     `json:"id"`
	TemplateID int64     `json:"template_id"`
	ScheduleID *int64    `json:"schedule_id"`
	Status     string    `json:"status"`
	Created    time.Time `json:"created"`
}

// minute is the scheduled minute the run is for: the schedule creates it
// within moments of the minute's start.
func (r tickRun) minute() string { return r.Created.UTC().Format("15:04") }

// tickRuns lists the schedule's tasks, oldest first.
func tickRuns(t *testing.T, api *apiClient, cp *counterProject, template int64) []tickRun {
	t.Helper()
	var all []tickRun
	api.must("GET", cp.path+"/tasks", nil, http.StatusOK, &all)
	var runs []tickRun
	for _, r := range all {
		if r.TemplateID == template {
			if r.ScheduleID == nil {
				t.Fatalf("task #%d of the scheduled template has no schedule", r.ID)
			}
			runs = append(runs, r)
		}
	}
	for i := 1; i < len(runs); i++ { // the list is newest first; a few at most
		for j := i; j > 0 && runs[j].Created.Before(runs[j-1].Created); j-- {
			runs[j], runs[j-1] = runs[j-1], runs[j]
		}
	}
	return runs
}

// waitForSecond waits until the wall clock's second of the minute is in
// [from, to].
func waitForSecond(t *testing.T, from, to int) {
	t.Helper()
	for {
		now := time.Now()
		s := now.Second()
		if s >= from && s <= to {
			return
		}
		wait := time.Duration((from-s+60)%60) * time.Second
		t.Logf("waiting %s for second %d of a minute", wait, from)
		time.Sleep(wait - time.Duration(now.Nanosecond()))
	}
}

// taskStatuses is the status of each task of cp's project, by id.
func taskStatuses(t *testing.T, api *apiClient, cp *counterProject) map[int64]string {
	t.Helper()
	var list []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	api.must("GET", cp.path+"/tasks", nil, http.StatusOK, &list)
	statuses := map[int64]string{}
	for _, task := range list {
		statuses[task.ID] = task.Status
	}
	return statuses
}

func waitRunning(t *testing.T, api *apiClient, cp *counterProject, tasks map[string]int64) {
	t.Helper()
	eventually(t, 60*time.Second, "every task running", func() error {
		return notRunning(taskStatuses(t, api, cp), tasks)
	})
}

func assertRunning(t *testing.T, api *apiClient, cp *counterProject, tasks map[string]int64) {
	t.Helper()
	if err := notRunning(taskStatuses(t, api, cp), tasks); err != nil {
		t.Fatal(err)
	}
}

func notRunning(statuses map[int64]string, tasks map[string]int64) error {
	var other []string
	for label, id := range tasks {
		if statuses[id] != "running" {
			other = append(other, fmt.Sprintf("%s(#%d) %s", label, id, statuses[id]))
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("%d tasks not running: %v", len(other), other)
	}
	return nil
}

// leases reads the managers' Lease straight from the apiserver.
type leases struct {
	t *testing.T
	c client.Client
}

func leaseReader(t *testing.T, kubeconfig string) leases {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return leases{t: t, c: c}
}

func (l leases) get() *coordinationv1.Lease {
	l.t.Helper()
	lease := &coordinationv1.Lease{}
	if err := l.c.Get(context.Background(), client.ObjectKey{Namespace: "bastion-system", Name: leaseName}, lease); err != nil {
		l.t.Fatalf("reading the Lease: %v", err)
	}
	return lease
}

// holder is the identity of the replica the Lease names (its POD_NAME).
func (l leases) holder() string { return ptr.Deref(l.get().Spec.HolderIdentity, "") }

// A graceful stop of the leader (SIGTERM: a rolling upgrade, a drain)
// hands its Lease over once its controllers have stopped: a standby takes
// over at once, not when the Lease expires (30 s here, so that the
// difference cannot hide), and the old leader exits cleanly.
func TestHAFailover_aGracefulStopOfTheLeaderHandsTheLeaseOverAtOnce(t *testing.T) {
	t.Parallel()
	const lease = 30 * time.Second
	h := startHA(t, 2, "--leader-elect-lease-duration", lease.String())
	leases := leaseReader(t, h.cluster.kubeconfig)
	leader := h.waitLeader(30 * time.Second)
	standby := h.followers()[0]
	eventually(t, 10*time.Second, "the standby sees the leader", func() error {
		if holder := leases.holder(); holder != leader.name {
			return fmt.Errorf("the Lease names %q", holder)
		}
		return nil
	})

	stopped := time.Now()
	leader.stop() // SIGTERM, and wait for the exit
	if code := leader.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the leader exited with code %d after SIGTERM", code)
	}
	exited := time.Since(stopped)
	eventually(t, lease+10*time.Second, "the standby leads", func() error {
		if holder := leases.holder(); holder != standby.name {
			return fmt.Errorf("the Lease names %q", holder)
		}
		return nil
	})
	takeover := time.Since(stopped)
	t.Logf("SIGTERM: the leader exited after %s; %s took the Lease %s after the signal (the Lease lasts %s)",
		exited.Round(10*time.Millisecond), standby.name, takeover.Round(10*time.Millisecond), lease)
	if takeover >= lease/2 {
		t.Errorf("the standby took over %s after SIGTERM: the Lease was not handed over", takeover)
	}
	if h.waitLeader(10*time.Second) != standby {
		t.Error("the standby holds the Lease but does not run the controllers")
	}
	// Its log says who led, then that it leads.
	logged, err := os.ReadFile(standby.logPath(standby.starts))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"msg":"standing by: another replica leads","leader":"` + leader.name + `","replica":"` + standby.name + `"`,
		`"msg":"this replica is now the leader: it runs the controllers, schedules and retention","replica":"` + standby.name + `"`,
	} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("%s's log does not say %s", standby.name, want)
		}
	}
}

// An apiserver hiccup shorter than the renew deadline (7 s) costs no
// failover: kube-apiserver is frozen (SIGSTOP) for 4 s under two managers,
// every request in flight hanging; the leader keeps its Lease, renews it
// once the apiserver answers again, and nobody exits.
func TestHAFailover_anAPIServerHiccupShorterThanTheRenewDeadlineKeepsTheLeader(t *testing.T) {
	// Not t.Parallel: 3 s between the hiccup and the renew deadline, which
	// the load of other tests must not eat.
	const hiccup = 4 * time.Second
	h := startHA(t, 2)
	leases := leaseReader(t, h.cluster.kubeconfig)
	leader := h.waitLeader(30 * time.Second)
	before := leases.get()
	h.cluster.freezeAPIServer(hiccup)
	thawed := time.Now()
	eventually(t, 10*time.Second, "the leader renews after the hiccup", func() error {
		lease := leases.get()
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(thawed) {
			return fmt.Errorf("not renewed since the apiserver came back")
		}
		return nil
	})
	after := leases.get()
	if holder := ptr.Deref(after.Spec.HolderIdentity, ""); holder != leader.name ||
		ptr.Deref(after.Spec.LeaseTransitions, 0) != ptr.Deref(before.Spec.LeaseTransitions, 0) {
		t.Errorf("the Lease moved to %q (transitions %d → %d) over a %s hiccup", holder,
			ptr.Deref(before.Spec.LeaseTransitions, 0), ptr.Deref(after.Spec.LeaseTransitions, 0), hiccup)
	}
	for _, m := range h.managers {
		if !m.alive() {
			t.Errorf("%s exited over a %s hiccup", m.name, hiccup)
		}
	}
	if h.waitLeader(10*time.Second) != leader {
		t.Errorf("%s no longer leads", leader.name)
	}
}

// freezeAPIServer stops kube-apiserver (SIGSTOP) for d, then lets it go
// on: its clients' requests hang meanwhile, as behind a stalled network.
func (c *cluster) freezeAPIServer(d time.Duration) {
	c.t.Helper()
	pids := c.apiServerPids()
	if len(pids) != 1 {
		c.t.Fatalf("found kube-apiserver processes %v, want one", pids)
	}
	pid := pids[0]
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	time.Sleep(d) // the hiccup itself
}
