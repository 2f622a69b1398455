package controllers

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/kinds"
	"github.com/bastion-dev/bastion/internal/nsaccess"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
	"github.com/bastion-dev/bastion/internal/watchretry"
)

// Options configure the reconcilers.
type Options struct {
	// ManagerNamespace is the manager's own namespace (global id counters,
	// user password Secrets).
	ManagerNamespace string
	// IDs allocates integer ids; nil makes one. The API server allocates
	// too: sharing one Allocator lets the controllers know the counters'
	// values without reading them again.
	IDs *ids.Allocator
	// Clock tells reconcilers the time; nil is the wall clock. The envtest
	// suite injects a fake one to drive schedules.
	Clock clock.WithTicker

	// Launcher runs tasks: a JobLauncher on a cluster, a LocalLauncher
	// under `bastion dev`.
	Launcher launch.Launcher
	// GlobalMaxParallelTasks caps running tasks across projects; 0 = none.
	GlobalMaxParallelTasks int
	// Store keeps task summaries (and output); finished tasks are saved
	// there before retention may delete them.
	Store store.Store
	// TaskKeepLast is how many finished tasks of a template are kept as
	// objects unless the template says otherwise (0 = DefaultTaskKeepLast).
	TaskKeepLast int
	// TaskInputGrace is how long a new task waits for its template and
	// inputs before it fails (0 = DefaultInputGrace).
	TaskInputGrace time.Duration
	// RunTokens is shared with the API's runner endpoint: see
	// TaskReconciler.Tokens.
	RunTokens *runtoken.Book
	// TaskWorkers is how many tasks are reconciled at once (default 16:
	// a burst of tasks starts side by side, each start mostly waiting on the
	// apiserver and on its runner process; see docs/benchmarks.md, P1).
	TaskWorkers int
	// ManagerURL is where runners stream output.
	ManagerURL string
	// Alerts sends the alerts of finished tasks; nil sends none.
	Alerts Alerter
	// TaskPods is what projects and templates may choose for their task
	// pods; the zero value allows no runner image or service account.
	TaskPods taskpods.Policy
	// RunnerNetworkPolicy, when set, confines task pods in every project
	// namespace to its egress rules.
	RunnerNetworkPolicy *networkingv1.NetworkPolicySpec
	// Keys follows key Secrets per project namespace; nil makes one.
	Keys *SecretWatches
	// Namespaces grants the manager Secrets and ConfigMaps in each project
	// namespace; nil (or an empty role) grants nothing, for credentials
	// that already allow them.
	Namespaces *nsaccess.Granter
	// AllowLocalRepositories: see ScheduleReconciler.
	AllowLocalRepositories bool
}

// ClientOptions is the manager client's setup: Secrets and ConfigMaps are
// read from the apiserver, never from a cache, so that no process keeps
// every Secret of the cluster in memory (keys are watched as metadata only,
// see KeyReconciler).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}}
}

// Setup registers every reconciler and cache index with the manager. The
// manager command, `bastion dev` and the envtest suites all call it, so they
// run the same set.
func Setup(mgr ctrl.Manager, opts Options) error {
	alloc, err := setupIDs(mgr, opts)
	if err != nil {
		return err
	}
	keys := opts.Keys
	if keys == nil {
		if keys, err = NewSecretWatches(mgr.GetConfig()); err != nil {
			return err
		}
		if err := mgr.Add(keys); err != nil {
			return err
		}
	}
	projects := &ProjectReconciler{Client: mgr.GetClient(), IDs: alloc, ManagerNamespace: opts.ManagerNamespace,
		RunnerNetworkPolicy: opts.RunnerNetworkPolicy, Keys: keys, Namespaces: opts.Namespaces}
	if err := projects.SetupWithManager(mgr); err != nil {
		return err
	}
	workers := opts.TaskWorkers
	if workers == 0 {
		workers = 16
	}
	tasks := &TaskReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), IDs: alloc, Launcher: opts.Launcher,
		GlobalMaxParallel: opts.GlobalMaxParallelTasks, ManagerURL: opts.ManagerURL,
		KeepLast: opts.TaskKeepLast, Store: opts.Store, Alerts: opts.Alerts, InputGrace: opts.TaskInputGrace, Secrets: keys,
		TaskPods: opts.TaskPods, Tokens: opts.RunTokens,
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &bastionv1.Task{}, TaskTemplateField, indexTaskTemplate); err != nil {
		return err
	}
	if opts.Clock != nil {
		tasks.Now = opts.Clock.Now
	}
	if err := tasks.SetupWithManager(mgr, workers); err != nil {
		return err
	}
	schedules := &ScheduleReconciler{
		Client: mgr.GetClient(), Clock: opts.Clock, Recorder: mgr.GetEventRecorder("bastion-schedule"), IDs: alloc,
		AllowLocalRepositories: opts.AllowLocalRepositories,
	}
	if err := schedules.SetupWithManager(mgr); err != nil {
		return err
	}
	idOnly := []reconcilerSetup{
		&UserReconciler{Client: mgr.GetClient(), IDs: alloc, ManagerNamespace: opts.ManagerNamespace, Store: opts.Store},
		&KeyReconciler{Client: mgr.GetClient(), IDs: alloc, Keys: keys},
	}
	for _, r := range append(resourceReconcilers(mgr.GetClient(), alloc, keys, opts.Store), idOnly...) {
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// setupIDs makes the id allocator, indexes every kind by id and makes sure
// the global counters have a namespace to live in.
func setupIDs(mgr ctrl.Manager, opts Options) (*ids.Allocator, error) {
	// Counters are read from the apiserver, not the cache (see ids.Allocator),
	// so that ConfigMaps are not cached cluster-wide either.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	alloc := opts.IDs
	if alloc == nil {
		alloc = &ids.Allocator{Client: direct}
	}
	numbered := []client.Object{&bastionv1.Project{}, &bastionv1.User{}, &bastionv1.Task{}}
	for _, kind := range kinds.All() {
		// Keys (Secrets) are not cached, so not indexed: they are found by
		// label (see SecretWatches).
		if obj := kind.NewObject(); !isSecret(obj) {
			numbered = append(numbered, obj)
		}
	}
	if err := ids.IndexByID(context.Background(), mgr.GetFieldIndexer(), numbered...); err != nil {
		return nil, err
	}
	if err := kinds.IndexReferences(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	// On a cluster the install creates the manager's namespace; a manager run
	// from a laptop, or an envtest suite, may find none.
	if opts.ManagerNamespace == "" {
		return alloc, nil
	}
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// A failure is logged, not returned: it would stop the manager, while
		// the Projects and Users that cannot get an id say so themselves.
		if err := ensureNamespace(ctx, direct, opts.ManagerNamespace); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "the global id counters have no namespace")
		}
		return nil
	}))
	return alloc, err
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// CacheOptions limit what the manager caches of kinds it does not own: only
// the runner's Jobs and Pods, never every Pod and Job of the cluster; and
// Secrets (the User controller's watch of password Secrets, as metadata)
// only in the manager's namespace, where its namespace role is bound.
// Without a manager namespace (a laptop, envtest) Secrets are watched
// wherever the credentials allow. Every cache lists and watches through
// watchretry, so that it catches up within seconds of a kube-apiserver that
// comes back from a restart.
func CacheOptions(managerNamespace string) cache.Options {
	runners := labels.SelectorFromSet(labels.Set{launch.LabelRunner: launch.RunnerName})
	opts := cache.Options{NewInformer: watchretry.NewInformer, ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:  {Label: runners},
		&batchv1.Job{}: {Label: runners},
	}}
	if managerNamespace != "" {
		opts.ByObject[&corev1.Secret{}] = cache.ByObject{Namespaces: map[string]cache.Config{managerNamespace: {}}}
	}
	return opts
}

func isSecret(obj client.Object) bool {
	_, ok := obj.(*corev1.Secret)
	return ok
}
