package kinds

import (
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// The targets of references.
var (
	RefKey         = Target{Noun: "key", Object: &corev1.Secret{}, IsKey: true}
	RefSecret      = Target{Noun: "secret", Object: &corev1.Secret{}}
	RefRepository  = Target{Noun: "repository", Object: &bastionv1.Repository{}}
	RefTemplate    = Target{Noun: "template", Object: &bastionv1.Template{}}
	RefIntegration = Target{Noun: "integration", Object: &bastionv1.Integration{}}
	RefEnvironment = Target{Noun: "environment", Object: &bastionv1.Environment{}}
	RefInventory   = Target{Noun: "inventory", Object: &bastionv1.Inventory{}}
	RefView        = Target{Noun: "view", Object: &bastionv1.View{}}
)

// The project resource kinds. Every reference field of a kind's spec is
// listed in its References (kinds_test.go fails otherwise).
var (
	// Key is a core Secret labelled with its type: keys have no CRD, so
	// that Pods can mount them.
	Key = Kind[*corev1.Secret]{
		Name:    ids.CounterKey,
		New:     func() *corev1.Secret { return &corev1.Secret{} },
		NewList: func() client.ObjectList { return &corev1.SecretList{} },
		Display: func(o *corev1.Secret) string { return KeyName(o) },
		Self:    RefKey,
	}
	Repository = Kind[*bastionv1.Repository]{
		Name:       ids.CounterRepository,
		New:        func() *bastionv1.Repository { return &bastionv1.Repository{} },
		NewList:    func() client.ObjectList { return &bastionv1.RepositoryList{} },
		Display:    func(o *bastionv1.Repository) string { return o.Spec.DisplayName },
		References: func(o *bastionv1.Repository) []Reference { return ref(RefKey, Needs, &o.Spec.SSHKeyRef) },
		Referenced: []Target{RefKey},
		Self:       RefRepository,
	}
	Inventory = Kind[*bastionv1.Inventory]{
		Name:    ids.CounterInventory,
		New:     func() *bastionv1.Inventory { return &bastionv1.Inventory{} },
		NewList: func() client.ObjectList { return &bastionv1.InventoryList{} },
		Display: func(o *bastionv1.Inventory) string { return o.Spec.DisplayName },
		References: func(o *bastionv1.Inventory) []Reference {
			return slices.Concat(ref(RefKey, Needs, &o.Spec.SSHKeyRef), ref(RefKey, Needs, o.Spec.BecomeKeyRef),
				ref(RefRepository, Needs, o.Spec.RepositoryRef))
		},
		Referenced: []Target{RefKey, RefRepository},
		Self:       RefInventory,
	}
	// Environment's Secret holds its secret variables; it is the
	// environment's own, not a key.
	Environment = Kind[*bastionv1.Environment]{
		Name:       ids.CounterEnvironment,
		New:        func() *bastionv1.Environment { return &bastionv1.Environment{} },
		NewList:    func() client.ObjectList { return &bastionv1.EnvironmentList{} },
		Display:    func(o *bastionv1.Environment) string { return o.Spec.DisplayName },
		References: func(o *bastionv1.Environment) []Reference { return ref(RefSecret, Needs, o.Spec.SecretRef) },
		Referenced: []Target{RefSecret},
		Self:       RefEnvironment,
	}
	View = Kind[*bastionv1.View]{
		Name:     ids.CounterView,
		New:      func() *bastionv1.View { return &bastionv1.View{} },
		NewList:  func() client.ObjectList { return &bastionv1.ViewList{} },
		Display:  func(o *bastionv1.View) string { return o.Spec.Title },
		Self:     RefView,
		Cascades: true,
	}
	Template = Kind[*bastionv1.Template]{
		Name:       ids.CounterTemplate,
		New:        func() *bastionv1.Template { return &bastionv1.Template{} },
		NewList:    func() client.ObjectList { return &bastionv1.TemplateList{} },
		Display:    func(o *bastionv1.Template) string { return o.Spec.DisplayName },
		References: templateReferences,
		Referenced: []Target{RefRepository, RefEnvironment, RefInventory, RefView, RefTemplate, RefKey},
		Self:       RefTemplate,
		Cascades:   true,
	}
	// Schedule: a schedule is its template's, and goes with it; the
	// repository whose commits it watches must stay while it does.
	Schedule = Kind[*bastionv1.Schedule]{
		Name:    ids.CounterSchedule,
		New:     func() *bastionv1.Schedule { return &bastionv1.Schedule{} },
		NewList: func() client.ObjectList { return &bastionv1.ScheduleList{} },
		Display: ScheduleName,
		References: func(o *bastionv1.Schedule) []Reference {
			return slices.Concat(ref(RefTemplate, BelongsTo, &o.Spec.TemplateRef), ref(RefRepository, Needs, o.Spec.RepositoryRef))
		},
		Referenced: []Target{RefTemplate, RefRepository},
	}
	Integration = Kind[*bastionv1.Integration]{
		Name:    ids.CounterIntegration,
		New:     func() *bastionv1.Integration { return &bastionv1.Integration{} },
		NewList: func() client.ObjectList { return &bastionv1.IntegrationList{} },
		Display: func(o *bastionv1.Integration) string { return o.Spec.DisplayName },
		References: func(o *bastionv1.Integration) []Reference {
			return slices.Concat(ref(RefTemplate, Needs, o.Spec.TemplateRef), ref(RefKey, Needs, o.Spec.AuthSecretRef))
		},
		Referenced: []Target{RefTemplate, RefKey},
		Self:       RefIntegration,
		Cascades:   true,
	}
	// IntegrationAlias: an alias is its integration's (a credential that
	// reaches nothing is dead), and goes with it.
	IntegrationAlias = Kind[*bastionv1.IntegrationAlias]{
		Name:    ids.CounterIntegrationAlias,
		New:     func() *bastionv1.IntegrationAlias { return &bastionv1.IntegrationAlias{} },
		NewList: func() client.ObjectList { return &bastionv1.IntegrationAliasList{} },
		Display: func(o *bastionv1.IntegrationAlias) string { return o.Name },
		References: func(o *bastionv1.IntegrationAlias) []Reference {
			return ref(RefIntegration, BelongsTo, o.Spec.IntegrationRef)
		},
		Referenced: []Target{RefIntegration},
	}
)

// All is every project resource kind, referenced kinds before the kinds
// that refer to them (the order a restore creates them in).
func All() []Descriptor {
	return []Descriptor{Key, Repository, Inventory, Environment, View, Template, Schedule, Integration, IntegrationAlias}
}

// For is the descriptor of obj's kind, or nil when it has none.
func For(obj client.Object) Descriptor {
	for _, kind := range All() {
		if reflect.TypeOf(kind.NewObject()) == reflect.TypeOf(obj) {
			return kind
		}
	}
	return nil
}

// NotProjectResources are the CRD kinds that have no descriptor, and why.
// kinds_test.go fails for a CRD kind that is in neither list.
var NotProjectResources = map[string]string{
	"Project": "the project itself: its namespace holds the resources; it has routes and a reconciler of its own",
	"User":    "global, not in a project",
	"Task":    "a run, not a definition: history with its own routes, lifecycle and template index (IndexTaskTemplate)",
}

// templateReferences are what a template runs with: its repository,
// environment, inventory, build template and vault keys, and the view it
// is shown in, which it leaves when the view goes.
func templateReferences(o *bastionv1.Template) []Reference {
	refs := slices.Concat(
		ref(RefRepository, Needs, &o.Spec.RepositoryRef), ref(RefEnvironment, Needs, &o.Spec.EnvironmentRef),
		ref(RefInventory, Needs, o.Spec.InventoryRef), ref(RefView, Optional, o.Spec.ViewRef),
		ref(RefTemplate, Needs, o.Spec.BuildTemplateRef))
	for i := range o.Spec.Vaults {
		refs = append(refs, ref(RefKey, Needs, &o.Spec.Vaults[i].KeyRef)...)
	}
	return refs
}

// ref is the reference an optional *ObjectRef makes, if it is set.
func ref(target Target, use Use, r *bastionv1.ObjectRef) []Reference {
	if r == nil || r.Name == "" {
		return nil
	}
	return []Reference{{Target: target, Name: r.Name, Use: use}}
}

// KeyName is a key's name in the console: its display-name annotation,
// else (a key made with kubectl) the Secret's name.
func KeyName(secret client.Object) string {
	if name := secret.GetAnnotations()[bastionv1.AnnotationDisplayName]; name != "" {
		return name
	}
	return secret.GetName()
}

// ScheduleName is how a schedule is named: its name, else its cron.
func ScheduleName(s *bastionv1.Schedule) string {
	if s.Spec.DisplayName != "" {
		return s.Spec.DisplayName
	}
	return s.Spec.CronFormat
}
