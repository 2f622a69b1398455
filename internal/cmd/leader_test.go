package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestManagerFlags_leaderElectionDefaultsAndRefusals(t *testing.T) {
	opts, _, err := parseManagerFlags([]string{"--leader-elect"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.LeaderElection != defaultLeaderElection || defaultLeaderElection != (leaderElection{10 * time.Second, 7 * time.Second, 750 * time.Millisecond}) {
		t.Fatalf("defaults %+v", opts.LeaderElection)
	}
	// The worst takeover after a SIGKILL (see leaderElection) is within 15 s,
	// with 1.5 s to spare for a busy node's late timers; and the leader
	// gives up at least 2 s before a standby may take over.
	le := opts.LeaderElection
	if worst := le.LeaseDuration + le.RetryPeriod*44/10; worst > 15*time.Second-1500*time.Millisecond {
		t.Fatalf("worst-case takeover %s", worst)
	}
	if margin := le.LeaseDuration - (le.RetryPeriod + le.RenewDeadline); margin < 2*time.Second {
		t.Fatalf("the leader gives up %s before a standby may take over", margin)
	}
	opts, _, err = parseManagerFlags([]string{"--leader-elect", "--leader-elect-lease-duration", "20s",
		"--leader-elect-renew-deadline", "12s", "--leader-elect-retry-period", "3s"}, io.Discard)
	if err != nil || opts.LeaderElection != (leaderElection{20 * time.Second, 12 * time.Second, 3 * time.Second}) {
		t.Fatalf("%+v, %v", opts.LeaderElection, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// The leader gives up at 2 + 9 s, a standby may take over at 10 s.
		{[]string{"--leader-elect-renew-deadline", "9s", "--leader-elect-retry-period", "2s"}, "must exceed --leader-elect-renew-deadline plus"},
		{[]string{"--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "2s"}, "1.2 × --leader-elect-retry-period"},
		{[]string{"--leader-elect-retry-period", "0s"}, "must be positive"},
		{[]string{"--leader-elect-lease-duration", "10500ms"}, "whole seconds"},
	} {
		_, _, err := parseManagerFlags(append([]string{"--leader-elect"}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
		// Without --leader-elect the timings are not used, so not refused.
		if _, _, err := parseManagerFlags(tc.args, io.Discard); err != nil {
			t.Errorf("%v without --leader-elect: %v", tc.args, err)
		}
	}
}

func TestReplicaIdentity_isThePodNameElseHostPidAndARandomSuffix(t *testing.T) {
	t.Setenv("POD_NAME", "bastion-7d9f-abcde")
	if got := replicaIdentity(); got != "bastion-7d9f-abcde" {
		t.Fatalf("identity %q", got)
	}
	t.Setenv("POD_NAME", "")
	host, _ := os.Hostname()
	first, second := replicaIdentity(), replicaIdentity()
	if prefix := host + "_" + strconv.Itoa(os.Getpid()) + "_"; !strings.HasPrefix(first, prefix) || len(first) != len(prefix)+8 {
		t.Fatalf("identity %q, want %q and 8 random characters", first, prefix)
	}
	if first == second {
		t.Fatalf("two identities on one host in one process are both %q", first)
	}
}

// candidate is a replica of the manager with only what leader election
// decides: a leader-only runnable that records when it runs.
type candidate struct {
	*replica
	name             string
	cancel           context.CancelFunc
	done             chan error
	mu               sync.Mutex
	started, stopped time.Time
}

func newCandidate(t *testing.T, cfg *rest.Config, name string, le leaderElection) *candidate {
	t.Helper()
	r := electedReplica(t, cfg, name, "bastion-system", le)
	c := &candidate{replica: r, name: name, done: make(chan error, 1)}
	mgr := r.Manager
	must(t, mgr.Add(elected{r.lease}))
	must(t, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		c.mu.Lock()
		c.started = time.Now()
		c.mu.Unlock()
		<-ctx.Done()
		c.mu.Lock()
		c.stopped = time.Now()
		c.mu.Unlock()
		return nil
	})))
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { c.done <- c.Start(ctx) }()
	t.Cleanup(c.stop)
	return c
}

// electedReplica is a replica named name that takes part in leader
// election on the Lease in namespace, with nothing else to run.
func electedReplica(t *testing.T, cfg *rest.Config, name, namespace string, le leaderElection) *replica {
	t.Helper()
	t.Setenv("POD_NAME", name)
	options, lease, err := electionOptions(cfg, managerOptions{LeaderElect: true, LeaderElection: le, Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = "0"
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{Manager: mgr, lease: lease, store: io.NopCloser(nil)}
}

func (c *candidate) stop() {
	c.cancel()
	<-c.done
	c.done <- nil // stop again is a no-op
}

func (c *candidate) times() (started, stopped time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started, c.stopped
}

func startEnvtest(t *testing.T) *rest.Config {
	t.Helper()
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (is KUBEBUILDER_ASSETS set?): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bastion-system"}}))
	return cfg
}

func leaseHolder(t *testing.T, c client.Client) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "bastion-system", Name: leaseName}, lease); err != nil {
		return "(" + err.Error() + ")"
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// Two replicas on one Lease: one leads (its leader-only runnables run, the
// other's do not); a graceful stop of the leader hands the Lease over at
// once, after its leader-only runnables have returned, so a standby
// takes over long before the Lease would have expired, and the two never
// lead at once.
func TestLeaderElection_oneLeadsAndAGracefulStopHandsOverAtOnce(t *testing.T) {
	cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A Lease that expires only after a minute: a takeover sooner than
	// that is the release's doing.
	le := leaderElection{LeaseDuration: time.Minute, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second}
	a := newCandidate(t, cfg, "replica-a", le)
	waitFor(t, "replica-a leads", func() error {
		select {
		case <-a.Elected():
			return nil
		default:
			return errors.New("not elected")
		}
	})
	b := newCandidate(t, cfg, "replica-b", le)
	// b has read the Lease and found replica-a leading.
	waitFor(t, "replica-b to see the leader", func() error {
		b.lease.mu.Lock()
		defer b.lease.mu.Unlock()
		if b.lease.leader != "replica-a" {
			return fmt.Errorf("replica-b saw %q lead", b.lease.leader)
		}
		return nil
	})
	if started, _ := b.times(); !started.IsZero() {
		t.Fatal("the standby ran a leader-only runnable while another replica led")
	}
	if holder := leaseHolder(t, c); holder != "replica-a" {
		t.Fatalf("Lease held by %q, want replica-a", holder)
	}

	stoppedAt := time.Now()
	a.stop()
	waitFor(t, "replica-b leads", func() error {
		if started, _ := b.times(); started.IsZero() {
			return fmt.Errorf("not yet; the Lease is held by %q", leaseHolder(t, c))
		}
		return nil
	})
	bStarted, _ := b.times()
	_, aStopped := a.times()
	t.Logf("takeover %s after the leader's graceful stop (Lease duration %s)", bStarted.Sub(stoppedAt).Round(time.Millisecond), le.LeaseDuration)
	if !aStopped.Before(bStarted) {
		t.Fatalf("replica-b led from %s, before replica-a stopped leading at %s", bStarted, aStopped)
	}
	if bStarted.Sub(stoppedAt) >= le.LeaseDuration/2 {
		t.Fatal("the standby waited for the Lease to expire: the Lease was not handed over")
	}
	if holder := leaseHolder(t, c); holder != "replica-b" {
		t.Fatalf("Lease held by %q, want replica-b", holder)
	}
}

// release never frees a Lease another replica holds, such as one that
// took over while this replica could not renew.
func TestLeaseRelease_leavesAnotherReplicasLeaseAlone(t *testing.T) {
	cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	must(t, c.Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bastion-system", Name: leaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("replica-b"), LeaseDurationSeconds: ptr.To[int32](10),
			AcquireTime: &now, RenewTime: &now},
	}))
	lock, err := newLeaseLock(cfg, "bastion-system", "replica-a", defaultLeaderElection, ctrl.Log)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if holder := leaseHolder(t, c); holder != "replica-b" {
		t.Fatalf("Lease held by %q after replica-a's release, want replica-b", holder)
	}
}

// TestLeaderElection_aMissingNamespaceIsCreatedSoAReplicaCanLead: off a
// cluster's install (a manager run from a laptop or a VM, whose namespace
// defaults to bastion-system) the manager's namespace may not exist. The
// Lease lives in it, and the namespace was created only by a leader-only
// runnable: no replica could ever lead, and the controllers never ran.
// The lock creates the namespace when the Lease cannot be created for
// want of it.
func TestLeaderElection_aMissingNamespaceIsCreatedSoAReplicaCanLead(t *testing.T) {
	cfg := startEnvtest(t)
	r := electedReplica(t, cfg, "replica-a", "not-made-yet", defaultLeaderElection)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-r.Elected():
	case err := <-done:
		t.Fatalf("the manager stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no replica leads after 20 s when the manager's namespace does not exist yet")
	}
}

// TestLeaderElection_replicasWithoutAPodNameNeverShareAnIdentity: without
// POD_NAME (a manager run off the chart: containers under docker compose
// with one host name, or pods on the host network) the identity was host
// and pid, and containers' managers are all pid 1 or near it. Two
// replicas with one identity both lead: each takes the Lease's holder for
// itself. Here two replicas in one process (one host, one pid): the
// second must stand by.
func TestLeaderElection_replicasWithoutAPodNameNeverShareAnIdentity(t *testing.T) {
	cfg := startEnvtest(t)
	le := leaderElection{LeaseDuration: time.Minute, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second}
	start := func(r *replica) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Start(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	a := electedReplica(t, cfg, "", "bastion-system", le)
	start(a)
	<-a.Elected()
	b := electedReplica(t, cfg, "", "bastion-system", le)
	if a.lease.Identity() == b.lease.Identity() {
		t.Errorf("two replicas on one host in one process are both %q", a.lease.Identity())
	}
	start(b)
	// b reads the Lease every second; a renews it every second. Three
	// periods are enough for b to take a's Lease for its own.
	select {
	case <-b.Elected():
		t.Fatalf("two replicas lead at once, both as %q", b.lease.Identity())
	case <-time.After(3 * le.RetryPeriod):
	}
}
