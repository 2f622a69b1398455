package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
	"github.com/bastion-dev/bastion/internal/store"
)

// ResourceReconciler reconciles one of the kinds that only hold data for
// tasks (Inventory, Environment, Repository, View, Integration,
// IntegrationAlias): it gives the object its id and reports in Ready
// whether every object it refers to exists. The kinds differ only in the
// references they hold, so one implementation serves them all, each
// registered as its own controller.
type ResourceReconciler[T client.Object] struct {
	client.Client
	IDs *ids.Allocator
	// Secrets tells of Secrets appearing in project namespaces, for the
	// kinds that refer to keys or secrets.
	Secrets *SecretWatches
	Kind    ResourceKind[T]
}

// ResourceKind describes one kind to a ResourceReconciler.
type ResourceKind[T client.Object] struct {
	// Name names the controller and the kind's id counter.
	Name string
	// New returns an empty object; NewList an empty list of the kind.
	New     func() T
	NewList func() client.ObjectList
	// Conditions points into the object's status.
	Conditions func(T) *[]metav1.Condition
	// References lists the objects this one refers to.
	References func(T) []Reference
	// Referenced are the kinds References may name; they are watched, so
	// that an object is checked again when something it names appears.
	Referenced []RefKind
	// ReconcileSpec, when set, writes to the object's spec before the
	// references are checked (Integration gives its list items ids).
	ReconcileSpec func(ctx context.Context, r *ResourceReconciler[T], obj T) error
	// Cascade, when set, deals with what depends on an object of the kind
	// when it is deleted (cascade.go); the object carries CascadeFinalizer
	// until it says done. Not done yet is asked again shortly.
	Cascade func(ctx context.Context, r *ResourceReconciler[T], obj T) (done bool, err error)
}

// Reference names an object in the referring object's namespace.
type Reference struct {
	Kind RefKind
	Name string
}

// RefKind is a kind of referenced object.
type RefKind struct {
	// Noun names it in a Ready message ("key", "repository").
	Noun string
	// Object is its type. Secrets are watched and read as metadata only:
	// the reconcilers need to know that a Secret exists, never its data,
	// and so never hold every Secret of the cluster in memory.
	Object client.Object
	// IsKey: the Secret must also carry LabelKeyType.
	IsKey bool
}

// The kinds of referenced objects.
var (
	RefKey         = RefKind{Noun: "key", Object: &corev1.Secret{}, IsKey: true}
	RefSecret      = RefKind{Noun: "secret", Object: &corev1.Secret{}}
	RefRepository  = RefKind{Noun: "repository", Object: &bastionv1.Repository{}}
	RefTemplate    = RefKind{Noun: "template", Object: &bastionv1.Template{}}
	RefIntegration = RefKind{Noun: "integration", Object: &bastionv1.Integration{}}
	RefEnvironment = RefKind{Noun: "environment", Object: &bastionv1.Environment{}}
	RefInventory   = RefKind{Noun: "inventory", Object: &bastionv1.Inventory{}}
	RefView        = RefKind{Noun: "view", Object: &bastionv1.View{}}
)

// referencesField indexes objects by what they refer to, as
// "<type>/<name>", so that an appearing Secret or Repository finds the
// objects that wait for it in the cache.
const referencesField = ".spec.references"

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=inventories;environments;repositories;views;integrations;integrationaliases,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=inventories/status;environments/status;repositories/status;views/status;integrations/status;integrationaliases/status,verbs=patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=templates,verbs=get;list;watch;patch
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
	defer func() {
		if err != nil {
			r.setReady(obj, metav1.ConditionFalse, bastionv1.ReasonReconcileError, err.Error())
		}
		if patchErr := r.patchStatus(ctx, before, obj); patchErr != nil {
			err = patchErr
		}
	}()
	return ctrl.Result{}, r.reconcileReferences(ctx, obj)
}

// reconcileReferences sets Ready: True when every referenced object exists,
// False naming each one that does not.
func (r *ResourceReconciler[T]) reconcileReferences(ctx context.Context, obj T) error {
	refs := r.Kind.References(obj)
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
		r.setReady(obj, metav1.ConditionFalse, bastionv1.ReasonMissingReference, strings.Join(missing, "; "))
	case len(refs) > 0:
		r.setReady(obj, metav1.ConditionTrue, bastionv1.ReasonReconciled, "every referenced object exists")
	default:
		r.setReady(obj, metav1.ConditionTrue, bastionv1.ReasonReconciled, "reconciled")
	}
	return nil
}

// checkReference says what is wrong with ref, or "" if nothing is.
func (r *ResourceReconciler[T]) checkReference(ctx context.Context, namespace string, ref Reference) (string, error) {
	target := ref.Kind.newObject()
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, target)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s %q not found", ref.Kind.Noun, ref.Name), nil
	case err != nil:
		return "", err
	case ref.Kind.IsKey && !isKey(target):
		return fmt.Sprintf("secret %q is not a key (it has no %s label)", ref.Name, bastionv1.LabelKeyType), nil
	}
	return "", nil
}

func (r *ResourceReconciler[T]) setReady(obj T, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(r.Kind.Conditions(obj), metav1.Condition{
		Type:               bastionv1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
}

// patchStatus writes the conditions if they changed; most reconciles (a
// Secret appearing elsewhere in the namespace) change nothing.
func (r *ResourceReconciler[T]) patchStatus(ctx context.Context, before, obj T) error {
	if equality.Semantic.DeepEqual(*r.Kind.Conditions(before), *r.Kind.Conditions(obj)) {
		return nil
	}
	err := r.Status().Patch(ctx, obj, client.MergeFrom(before))
	return client.IgnoreNotFound(err)
}

// SetupWithManager registers the kind's controller, the index of its
// references and a watch on every kind it refers to.
func (r *ResourceReconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), r.Kind.New(), referencesField, func(o client.Object) []string {
		var keys []string
		for _, ref := range r.Kind.References(o.(T)) {
			keys = append(keys, ref.Kind.indexKey(ref.Name))
		}
		return keys
	})
	if err != nil {
		return fmt.Errorf("indexing %s references: %w", r.Kind.Name, err)
	}

	b := ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.New(), builder.WithPredicates(specOrLabelsChanged)).
		Named(r.Kind.Name)
	for _, kind := range r.Kind.Referenced {
		// Appearing, disappearing and (for keys) gaining the key label are
		// what can change a reference's answer.
		if kind.isSecret() {
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
func (r *ResourceReconciler[T]) secretSource(kind RefKind) source.Source {
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
func (r *ResourceReconciler[T]) referencing(kind RefKind) handler.MapFunc {
	return func(ctx context.Context, target client.Object) []reconcile.Request {
		list := r.Kind.NewList()
		err := r.List(ctx, list, client.InNamespace(target.GetNamespace()),
			client.MatchingFields{referencesField: kind.indexKey(target.GetName())})
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

func (k RefKind) isSecret() bool {
	_, ok := k.Object.(*corev1.Secret)
	return ok
}

// newObject is what a reference is read into: metadata only for Secrets.
func (k RefKind) newObject() client.Object {
	if k.isSecret() {
		return secretMetadata()
	}
	return k.Object.DeepCopyObject().(client.Object)
}

// indexKey is a referenced object's key in referencesField. Keys and plain
// Secrets share one: both are Secrets, and one watch serves both.
func (k RefKind) indexKey(name string) string {
	return fmt.Sprintf("%T/%s", k.Object, name)
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

// resourceReconcilers returns the reconcilers of the kinds that only hold
// data for tasks, one per kind.
func resourceReconcilers(c client.Client, alloc *ids.Allocator, secrets *SecretWatches, st store.Store) []reconcilerSetup {
	return []reconcilerSetup{
		&ResourceReconciler[*bastionv1.Inventory]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.Inventory]{
			Name:       ids.CounterInventory,
			New:        func() *bastionv1.Inventory { return &bastionv1.Inventory{} },
			NewList:    func() client.ObjectList { return &bastionv1.InventoryList{} },
			Conditions: func(o *bastionv1.Inventory) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(o *bastionv1.Inventory) []Reference {
				return slices.Concat(ref(RefKey, &o.Spec.SSHKeyRef), ref(RefKey, o.Spec.BecomeKeyRef), ref(RefRepository, o.Spec.RepositoryRef))
			},
			Referenced: []RefKind{RefKey, RefRepository},
		}},
		&ResourceReconciler[*bastionv1.Environment]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.Environment]{
			Name:       ids.CounterEnvironment,
			New:        func() *bastionv1.Environment { return &bastionv1.Environment{} },
			NewList:    func() client.ObjectList { return &bastionv1.EnvironmentList{} },
			Conditions: func(o *bastionv1.Environment) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(o *bastionv1.Environment) []Reference { return ref(RefSecret, o.Spec.SecretRef) },
			Referenced: []RefKind{RefSecret},
		}},
		&ResourceReconciler[*bastionv1.Repository]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.Repository]{
			Name:       ids.CounterRepository,
			New:        func() *bastionv1.Repository { return &bastionv1.Repository{} },
			NewList:    func() client.ObjectList { return &bastionv1.RepositoryList{} },
			Conditions: func(o *bastionv1.Repository) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(o *bastionv1.Repository) []Reference { return ref(RefKey, &o.Spec.SSHKeyRef) },
			Referenced: []RefKind{RefKey},
		}},
		&ResourceReconciler[*bastionv1.Template]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.Template]{
			Name:       ids.CounterTemplate,
			New:        func() *bastionv1.Template { return &bastionv1.Template{} },
			NewList:    func() client.ObjectList { return &bastionv1.TemplateList{} },
			Conditions: func(o *bastionv1.Template) *[]metav1.Condition { return &o.Status.Conditions },
			References: templateReferences,
			Referenced: []RefKind{RefRepository, RefEnvironment, RefInventory, RefView, RefTemplate, RefKey},
			Cascade:    templateCascade{store: st}.run,
		}},
		&ResourceReconciler[*bastionv1.View]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.View]{
			Name:       ids.CounterView,
			New:        func() *bastionv1.View { return &bastionv1.View{} },
			NewList:    func() client.ObjectList { return &bastionv1.ViewList{} },
			Conditions: func(o *bastionv1.View) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(*bastionv1.View) []Reference { return nil },
			Cascade:    viewCascade,
		}},
		&ResourceReconciler[*bastionv1.Integration]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.Integration]{
			Name:       ids.CounterIntegration,
			New:        func() *bastionv1.Integration { return &bastionv1.Integration{} },
			NewList:    func() client.ObjectList { return &bastionv1.IntegrationList{} },
			Conditions: func(o *bastionv1.Integration) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(o *bastionv1.Integration) []Reference {
				return slices.Concat(ref(RefTemplate, o.Spec.TemplateRef), ref(RefKey, o.Spec.AuthSecretRef))
			},
			Referenced:    []RefKind{RefTemplate, RefKey},
			ReconcileSpec: assignIntegrationItemIDs,
			Cascade:       integrationCascade,
		}},
		&ResourceReconciler[*bastionv1.IntegrationAlias]{Client: c, IDs: alloc, Secrets: secrets, Kind: ResourceKind[*bastionv1.IntegrationAlias]{
			Name:       ids.CounterIntegrationAlias,
			New:        func() *bastionv1.IntegrationAlias { return &bastionv1.IntegrationAlias{} },
			NewList:    func() client.ObjectList { return &bastionv1.IntegrationAliasList{} },
			Conditions: func(o *bastionv1.IntegrationAlias) *[]metav1.Condition { return &o.Status.Conditions },
			References: func(o *bastionv1.IntegrationAlias) []Reference { return ref(RefIntegration, o.Spec.IntegrationRef) },
			Referenced: []RefKind{RefIntegration},
		}},
	}
}

// templateReferences are what a template runs with: its repository,
// environment, inventory, view, build template and vault keys.
func templateReferences(o *bastionv1.Template) []Reference {
	refs := slices.Concat(
		ref(RefRepository, &o.Spec.RepositoryRef), ref(RefEnvironment, &o.Spec.EnvironmentRef),
		ref(RefInventory, o.Spec.InventoryRef), ref(RefView, o.Spec.ViewRef), ref(RefTemplate, o.Spec.BuildTemplateRef))
	for i := range o.Spec.Vaults {
		refs = append(refs, ref(RefKey, &o.Spec.Vaults[i].KeyRef)...)
	}
	return refs
}

// ref is the reference an optional *ObjectRef makes, if it is set.
func ref(kind RefKind, r *bastionv1.ObjectRef) []Reference {
	if r == nil || r.Name == "" {
		return nil
	}
	return []Reference{{Kind: kind, Name: r.Name}}
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
