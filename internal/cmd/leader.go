package cmd

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apicorev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// leaseName is the Lease the replicas of `bastion manager` take turns on.
const leaseName = "bastion-manager.automation.bastion.dev"

// leaderElection is how replicas take turns running the controllers: the
// leader renews the Lease every RetryPeriod and gives up (the process
// exits) when it could not for RenewDeadline; a standby takes the Lease
// when it saw no renewal for LeaseDuration.
//
// The defaults bound the takeover after a SIGKILL of the leader by 15 s.
// A standby reads the Lease every RetryPeriod plus up to 120% jitter
// (client-go), so it may see the last renewal up to 2.2 × RetryPeriod
// late, and try again up to 2.2 × RetryPeriod after the lease expired:
// LeaseDuration + 4.4 × RetryPeriod = 10 + 3.3 = 13.3 s at worst (about
// 10.8 s on average). A RetryPeriod of 1 s gave 14.4 s, too close to the
// 15 s promise for a busy node, whose timers fire late; the shorter period
// costs a Lease write and a read per replica a third more often, a few
// requests a second.
// controller-runtime's 15 s / 10 s / 2 s would give up to 23.8 s.
//
// The leader must stop before anyone can take over: it gives up at its
// last renewal + RetryPeriod + RenewDeadline (7.75 s), a standby takes
// over no sooner than LeaseDuration (10 s) after it: 2.25 s for the old
// process to exit. check refuses settings without a margin.
//
// RenewDeadline is what an apiserver hiccup may last before the leader
// gives up, exits and is restarted by its Deployment while a standby
// takes over (a needless failover: running tasks are not affected, but the
// console on that replica restarts). 7 s covers an apiserver restarting
// behind a load balancer; a longer outage stops every controller anyway.
type leaderElection struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

var defaultLeaderElection = leaderElection{LeaseDuration: 10 * time.Second, RenewDeadline: 7 * time.Second, RetryPeriod: 750 * time.Millisecond}

func (le *leaderElection) register(fs *flag.FlagSet) {
	*le = defaultLeaderElection
	fs.DurationVar(&le.LeaseDuration, "leader-elect-lease-duration", le.LeaseDuration,
		"with --leader-elect: how long a standby waits, after it last saw the leader renew its Lease, before it takes over")
	fs.DurationVar(&le.RenewDeadline, "leader-elect-renew-deadline", le.RenewDeadline,
		"with --leader-elect: how long the leader keeps trying to renew its Lease before it gives up and exits")
	fs.DurationVar(&le.RetryPeriod, "leader-elect-retry-period", le.RetryPeriod,
		"with --leader-elect: how often the leader renews its Lease and a standby checks it")
}

// check refuses timings under which two replicas could lead at once, or
// that client-go refuses.
func (le leaderElection) check() error {
	switch {
	case le.RetryPeriod <= 0 || le.RenewDeadline <= 0 || le.LeaseDuration <= 0:
		return errors.New("the --leader-elect-* durations must be positive")
	case le.LeaseDuration%time.Second != 0:
		// The Lease records whole seconds, and standbys go by the record.
		return errors.New("--leader-elect-lease-duration must be whole seconds")
	case le.RenewDeadline <= le.RetryPeriod*12/10:
		return errors.New("--leader-elect-renew-deadline must exceed 1.2 × --leader-elect-retry-period (a renewal's jitter)")
	case le.LeaseDuration <= le.RenewDeadline+le.RetryPeriod:
		return errors.New("--leader-elect-lease-duration must exceed --leader-elect-renew-deadline plus --leader-elect-retry-period: " +
			"a leader that cannot renew must stop before a standby may take over")
	}
	return nil
}

// replicaIdentity names this replica in the Lease and in the log: the pod's
// name on a cluster (the chart sets POD_NAME), else host, pid and a random
// suffix. A container restarted in the same pod has the same name and so
// takes its Lease back at once: Kubernetes restarts a container only once
// the last one has exited, so no two processes hold it. Without a pod
// name, host and pid alone may be shared by two live replicas
// (containers are pid 1 or near it, and share a host name on the host's
// network or when one is set), and two replicas with one identity both
// lead: each takes the Lease's holder for itself.
func replicaIdentity() string {
	if pod := os.Getenv("POD_NAME"); pod != "" {
		return pod
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return host + "_" + strconv.Itoa(os.Getpid()) + "_" + rand.Text()[:8]
}

// leaseLock is this replica's hold on the Lease. It logs each change of
// leader it reads, so that every replica's log says who leads.
type leaseLock struct {
	resourcelock.Interface
	log       logr.Logger
	namespace string
	core      corev1.CoreV1Interface

	mu     sync.Mutex
	leader string
}

// newLeaseLock makes the Lease lock in namespace with its own clients,
// whose requests time out within half the renew deadline, so that one
// hung request does not cost the leader its Lease (as controller-runtime
// does for its own lock).
func newLeaseLock(cfg *rest.Config, namespace, identity string, le leaderElection, log logr.Logger) (*leaseLock, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = max(le.RenewDeadline/2, time.Second)
	core, err := corev1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	coordination, err := coordinationv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, leaseName, core, coordination,
		resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return nil, err
	}
	return &leaseLock{Interface: lock, log: log, namespace: namespace, core: core}, nil
}

func (l *leaseLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	record, raw, err := l.Interface.Get(ctx)
	if err == nil {
		l.observe(record.HolderIdentity)
	}
	return record, raw, err
}

// Create makes the Lease, and first the manager's namespace if it is
// missing (a manager run off the chart: from a laptop, on a VM). The
// namespace is otherwise made by a leader-only runnable, which could not
// run before a replica leads: none ever would.
func (l *leaseLock) Create(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, record)
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, nsErr := l.core.Namespaces().Create(ctx, &apicorev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.namespace}}, metav1.CreateOptions{})
	if nsErr != nil && !apierrors.IsAlreadyExists(nsErr) {
		return fmt.Errorf("the Lease's namespace %s is missing and could not be made: %w", l.namespace, nsErr)
	}
	l.log.Info("made the manager's namespace, where the Lease lives", "namespace", l.namespace)
	return l.Interface.Create(ctx, record)
}

func (l *leaseLock) observe(holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if holder == l.leader {
		return
	}
	l.leader = holder
	switch holder {
	case "":
		l.log.Info("the Lease is free: the replicas elect a leader")
	case l.Identity():
		// Said by the elected runnable, once this replica leads.
	default:
		l.log.Info("standing by: another replica leads", "leader", holder, "replica", l.Identity())
	}
}

// release hands the Lease over at once on a graceful stop (SIGTERM), so a
// standby need not wait for it to expire. It is called only once the
// manager has stopped (every controller has returned and renewing has
// ended) and only updates a Lease this replica still holds, against the
// version it read: never one another replica took meanwhile.
// controller-runtime's LeaderElectionReleaseOnCancel is not used: it
// releases also after a failed renewal, before the controllers stop, and
// against a Lease it may no longer hold.
func (l *leaseLock) release(ctx context.Context) error {
	record, _, err := l.Interface.Get(ctx)
	if err != nil {
		return err
	}
	if record.HolderIdentity != l.Identity() {
		return nil
	}
	now := metav1.Now()
	return l.Interface.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: record.LeaderTransitions, LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now,
	})
}

// elected is a leader-election runnable: it says, when this replica
// becomes the leader, that it now runs the controllers.
type elected struct{ lease *leaseLock }

func (e elected) Start(ctx context.Context) error {
	e.lease.log.Info("this replica is now the leader: it runs the controllers, schedules and retention", "replica", e.lease.Identity())
	<-ctx.Done()
	return nil
}

var _ manager.Runnable = elected{}

// electionOptions are the manager options of a replica that takes part in
// leader election (--leader-elect), with its lock on the Lease; none (and
// no lock) without it.
func electionOptions(cfg *rest.Config, opts managerOptions) (ctrl.Options, *leaseLock, error) {
	if !opts.LeaderElect {
		return ctrl.Options{}, nil, nil
	}
	le, identity := opts.LeaderElection, replicaIdentity()
	log := ctrl.Log.WithName("leader-election")
	lock, err := newLeaseLock(cfg, opts.Namespace, identity, le, log)
	if err != nil {
		return ctrl.Options{}, nil, fmt.Errorf("leader election: %w", err)
	}
	log.Info(fmt.Sprintf("taking part in leader election on Lease %s/%s as %s (lease %s, renew deadline %s, retry %s): "+
		"this replica serves the API at once and runs the controllers while it leads",
		opts.Namespace, leaseName, identity, le.LeaseDuration, le.RenewDeadline, le.RetryPeriod))
	return ctrl.Options{
		LeaderElection:                      true,
		LeaderElectionResourceLockInterface: lock,
		// Names the elector, and so the leader_election_master_status
		// metric; the Lease itself is the lock's.
		LeaderElectionID: leaseName,
		LeaseDuration:    &le.LeaseDuration,
		RenewDeadline:    &le.RenewDeadline,
		RetryPeriod:      &le.RetryPeriod,
	}, lock, nil
}
