package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/kinds"
	"github.com/bastion-dev/bastion/internal/store"
)

// ResourceReconciler reconciles one of the kinds whose controller only
// numbers them and checks what they refer to (Inventory, Environment,
// Repository, Template, View, Integration, IntegrationAlias): it gives the
// object its id and reports in Ready whether every object it refers to
// exists. The kinds differ only in the
// references they hold, so one implementation serves them all, each
// registered as its own controller.
type ResourceReconciler[T readyObject] struct {
	client.Client
	IDs *ids.Allocator
	// Secrets tells of Secrets appearing in project namespaces, for the
	// kinds that refer to keys or secrets.
	Secrets *SecretWatches
	Kind    ResourceKind[T]
}

// ResourceKind is one kind's descriptor (internal/kinds: type, counter,
// references, conditions), with what only its reconciler does.
type ResourceKind[T readyObject] struct {
	kinds.Kind[T]
	// ReconcileSpec, when set, writes to the object's spec before the
	// references are checked (Integration gives its list items ids).
	ReconcileSpec func(ctx context.Context, r *ResourceReconciler[T], obj T) error
	// Cascade, when set, deals with what depends on an object of the kind
	// when it is deleted (cascade.go); the object carries CascadeFinalizer
	// until it says done. Not done yet is asked again shortly.
	Cascade func(ctx context.Context, r *ResourceReconciler[T], obj T) (done bool, err error)
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=inventories;environments;repositories;templates;views;integrations;integrationaliases,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=inventories/status;environments/status;repositories/status;templates/status;views/status;integrations/status;integrationaliases/status,verbs=patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=schedules;tasks;integrationaliases,verbs=delete
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=templates/finalizers;views/finalizers;integrations/finalizers,verbs=update

// Reconcile gives the object an id and reports whether its references exist.
func (r *ResourceReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	obj := r.Kind.New()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		if r.Kind.Cascade == nil {
			return ctrl.Result{}, nil
		}
		return r.finalize(ctx, obj)
	}

	// The steps that write the object itself come before the status is
	// taken in hand, so that the status patch carries only status.
	if r.Kind.Cascade != nil {
		if result, err := r.patchFinalizer(ctx, obj, true); err != nil || !result.IsZero() {
			return result, err
		}
	}
	if _, err := ids.Assign(ctx, r.Client, r.IDs, obj, obj.GetNamespace(), r.Kind.Name); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.Kind.ReconcileSpec != nil {
		if err := r.Kind.ReconcileSpec(ctx, r, obj); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}

	before := obj.DeepCopyObject().(T)
	defer writeStatus(ctx, r.Client, before, obj, &result, &err)
	defer readyOnError(obj, &err)
	return ctrl.Result{}, r.reconcileReferences(ctx, obj)
}

// reconcileReferences sets Ready: True when every referenced object exists,
// False naming each one that does not.
func (r *ResourceReconciler[T]) reconcileReferences(ctx context.Context, obj T) error {
	refs := r.Kind.ReferencesOf(obj)
	var missing []string
	for _, ref := range refs {
		problem, err := r.checkReference(ctx, obj.GetNamespace(), ref)
		if err != nil {
			return err
		}
		if problem != "" {
			missing = append(missing, problem)
		}
	}
	switch {
	case len(missing) > 0:
		setReady(obj, metav1.ConditionFalse, bastionv1.ReasonMissingReference, strings.Join(missing, "; "))
	case len(refs) > 0:
		setReady(obj, metav1.ConditionTrue, bastionv1.ReasonReconciled, "every referenced object exists")
	default:
		setReady(obj, metav1.ConditionTrue, bastionv1.ReasonReconciled, "reconciled")
	}
	return nil
}

// checkReference says what is wrong with ref, or "" if nothing is.
func (r *ResourceReconciler[T]) checkReference(ctx context.Context, namespace string, ref kinds.Reference) (string, error) {
	target := newTarget(ref.Target)
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, target)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s %q not found", ref.Target.Noun, ref.Name), nil
	case err != nil:
		return "", err
	case ref.Target.IsKey && !isKey(target):
		return fmt.Sprintf("secret %q is not a key (it has no %s label)", ref.Name, bastionv1.LabelKeyType), nil
	}
	return "", nil
}

// SetupWithManager registers the kind's controller and a watch on every
// kind it refers to. The index of its references is registered for every
// kind at once (kinds.IndexReferences, in Setup): the API reads it too.
func (r *ResourceReconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.New(), builder.WithPredicates(specOrLabelsChanged)).
		Named(r.Kind.Name)
	for _, kind := range r.Kind.Referenced {
		// Appearing, disappearing and (for keys) gaining the key label are
		// what can change a reference's answer.
		if kind.IsSecret() {
			// Secrets are watched per project namespace (SecretWatches),
			// which passes on only creations, deletions and label changes.
			b = b.WatchesRawSource(r.secretSource(kind))
			continue
		}
		b = b.Watches(kind.Object, handler.EnqueueRequestsFromMapFunc(r.referencing(kind)),
			builder.WithPredicates(predicate.LabelChangedPredicate{}))
	}
	return b.Complete(r)
}

// secretSource queues the objects that refer to a Secret of kind when one
// appears, goes or is relabelled.
func (r *ResourceReconciler[T]) secretSource(kind kinds.Target) source.Source {
	referencing := r.referencing(kind)
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.Secrets.Listen(func(secret *metav1.PartialObjectMetadata) {
			for _, req := range referencing(ctx, secret) {
				q.Add(req)
			}
		})
		return nil
	})
}

// specOrLabelsChanged lets through every event but updates of status only,
// which this controller writes itself; and every update of an object being
// deleted, whose cascade may wait for the last finalizer but its own.
var specOrLabelsChanged = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
	predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }})

// referencing maps an object of a referenced kind to the objects of this
// kind that refer to it.
func (r *ResourceReconciler[T]) referencing(kind kinds.Target) handler.MapFunc {
	return func(ctx context.Context, target client.Object) []reconcile.Request {
		list := r.Kind.NewList()
		err := r.List(ctx, list, client.InNamespace(target.GetNamespace()),
			client.MatchingFields{kinds.ReferencesField: kind.IndexKey(target.GetName())})
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects that refer to", "kind", kind.Noun, "name", target.GetName())
			return nil
		}
		var requests []reconcile.Request
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
			return nil
		})
		return requests
	}
}

// newTarget is what a reference is read into: metadata only for Secrets.
func newTarget(t kinds.Target) client.Object {
	if t.IsSecret() {
		return secretMetadata()
	}
	return t.Object.DeepCopyObject().(client.Object)
}

// secretMetadata is an empty Secret read as metadata only. Controllers need
// to know that a Secret exists and what its labels say, never its data; a
// full Secret read through the cache would keep every Secret of the
// cluster in the manager's memory.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// reconcilerSetup is a reconciler that registers itself with a manager.
type reconcilerSetup interface{ SetupWithManager(ctrl.Manager) error }

// resourceReconcilers returns the ResourceReconcilers, one per kind.
func resourceReconcilers(c client.Client, alloc *ids.Allocator, secrets *SecretWatches, st store.Store) []reconcilerSetup {
	return []reconcilerSetup{
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.Inventory]{Kind: kinds.Inventory}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.Environment]{Kind: kinds.Environment}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.Repository]{Kind: kinds.Repository}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.Template]{
			Kind: kinds.Template, Cascade: templateCascade{store: st}.run}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.View]{Kind: kinds.View, Cascade: viewCascade}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.Integration]{
			Kind: kinds.Integration, ReconcileSpec: assignIntegrationItemIDs, Cascade: integrationCascade}),
		resourceReconciler(c, alloc, secrets, ResourceKind[*bastionv1.IntegrationAlias]{Kind: kinds.IntegrationAlias}),
	}
}

func resourceReconciler[T readyObject](c client.Client, alloc *ids.Allocator, secrets *SecretWatches, kind ResourceKind[T]) *ResourceReconciler[T] {
	if (kind.Cascade != nil) != kind.Cascades {
		// The API sets the finalizer at create by kinds.Kind.Cascades; a
		// finalizer no cascade removes would hold the object for ever.
		panic(fmt.Sprintf("kind %s: a cascade must go with kinds.Kind.Cascades, and only with it", kind.Name))
	}
	return &ResourceReconciler[T]{Client: c, IDs: alloc, Secrets: secrets, Kind: kind}
}

// assignIntegrationItemIDs gives every matcher and extracted value without
// an id (or with the id of an earlier item in its list) one from the
// project's counters. Items with ids keep them, and those ids are reserved.
// The patch is conditional on the read resourceVersion: it replaces whole
// lists, and must not drop an item that someone added meanwhile.
func assignIntegrationItemIDs(ctx context.Context, r *ResourceReconciler[*bastionv1.Integration], in *bastionv1.Integration) error {
	before := in.DeepCopy()
	matchers := make([]*int64, len(in.Spec.Matchers))
	for i := range in.Spec.Matchers {
		matchers[i] = &in.Spec.Matchers[i].ID
	}
	values := make([]*int64, len(in.Spec.ExtractValues))
	for i := range in.Spec.ExtractValues {
		values[i] = &in.Spec.ExtractValues[i].ID
	}
	changedMatchers, err := fillItemIDs(ctx, r.IDs, in.Namespace, ids.CounterIntegrationMatcher, matchers)
	if err != nil {
		return err
	}
	changedValues, err := fillItemIDs(ctx, r.IDs, in.Namespace, ids.CounterIntegrationValue, values)
	if err != nil || !(changedMatchers || changedValues) {
		return err
	}
	return r.Patch(ctx, in, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// fillItemIDs sets every item id that is unset or repeats an earlier one.
func fillItemIDs(ctx context.Context, alloc *ids.Allocator, namespace, counter string, items []*int64) (changed bool, err error) {
	seen := map[int64]bool{}
	var highest int64
	var need []*int64
	for _, id := range items {
		if *id <= 0 || seen[*id] {
			need = append(need, id)
			continue
		}
		seen[*id] = true
		highest = max(highest, *id)
	}
	if highest > 0 {
		if err := alloc.Reserve(ctx, namespace, counter, highest); err != nil {
			return false, err
		}
	}
	for _, id := range need {
		if *id, err = alloc.Next(ctx, namespace, counter); err != nil {
			return false, err
		}
	}
	return len(need) > 0, nil
}
