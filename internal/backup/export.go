package backup

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// Export reads the project's objects from its namespace into a Backup.
//
// c should read around any cache: Export lists key Secrets as metadata
// only, but reads each environment's Secret whole to learn its variables'
// names, and a cached client would start watching every Secret.
//
// Names in the file are display names. Two objects of a kind with the
// same display name are told apart as "Deploy", "Deploy (2)", ..., in the
// order the file lists them (by id), because a reference by name must
// name one object. A reference to
// an object that does not exist fails the export, naming each one: such a
// file could not be restored, and the project's Ready conditions already
// point at the culprits.
func Export(ctx context.Context, c client.Reader, project *bastionv1.Project) (*Backup, error) {
	ns := bastionv1.ProjectNamespace(project.Name)
	x := &exporter{ctx: ctx, c: c, ns: ns, names: map[string]map[string]string{}}
	b := &Backup{
		Meta: Meta{
			Name:             project.Spec.DisplayName,
			Alert:            project.Spec.Alert,
			MaxParallelTasks: project.Spec.MaxParallelTasks,
			Type:             project.Spec.Type,
		},
		Templates: []Template{}, Repositories: []Repository{}, Keys: []Key{}, Views: []View{},
		Inventories: []Inventory{}, Environments: []Environment{}, Integrations: []Integration{},
		IntegrationAliases: []string{}, Schedules: []Schedule{},
	}
	if project.Spec.AlertChat != "" {
		b.Meta.AlertChat = &project.Spec.AlertChat
	}

	keys := &metav1.PartialObjectMetadataList{}
	keys.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, keys, client.InNamespace(ns), client.HasLabels{bastionv1.LabelKeyType}); err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	var (
		templates    bastionv1.TemplateList
		repositories bastionv1.RepositoryList
		inventories  bastionv1.InventoryList
		environments bastionv1.EnvironmentList
		views        bastionv1.ViewList
		schedules    bastionv1.ScheduleList
		integrations bastionv1.IntegrationList
		aliases      bastionv1.IntegrationAliasList
	)
	for what, list := range map[string]client.ObjectList{
		"templates": &templates, "repositories": &repositories, "inventories": &inventories,
		"environments": &environments, "views": &views, "schedules": &schedules,
		"integrations": &integrations, "integration aliases": &aliases,
	} {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
	}

	keyItems := live(keys.Items)
	x.names[kinds.Key.Name] = names(keyItems, func(s *metav1.PartialObjectMetadata) string { return kinds.KeyName(s) })
	repoItems := track(x, kinds.Repository, repositories.Items)
	invItems := track(x, kinds.Inventory, inventories.Items)
	envItems := track(x, kinds.Environment, environments.Items)
	viewItems := track(x, kinds.View, views.Items)
	tplItems := track(x, kinds.Template, templates.Items)
	schedItems := track(x, kinds.Schedule, schedules.Items)
	intItems := track(x, kinds.Integration, integrations.Items)
	aliasItems := track(x, kinds.IntegrationAlias, aliases.Items)
	if missing := x.missingReferences(); len(missing) > 0 {
		return nil, fmt.Errorf("the project cannot be backed up, because objects refer to objects that do not exist: %s",
			strings.Join(missing, "; "))
	}

	for _, s := range keyItems {
		b.Keys = append(b.Keys, Key{Name: x.names[kinds.Key.Name][s.Name], Type: s.Labels[bastionv1.LabelKeyType]})
	}
	for _, r := range repoItems {
		b.Repositories = append(b.Repositories, Repository{
			Name: x.name(kinds.Repository, r), GitURL: r.Spec.GitURL, GitBranch: r.Spec.GitBranch,
			SSHKey: x.ref(kinds.Key, &r.Spec.SSHKeyRef),
		})
	}
	for _, i := range invItems {
		b.Inventories = append(b.Inventories, Inventory{
			Name: x.name(kinds.Inventory, i), Type: string(i.Spec.Type), Inventory: i.Spec.Inventory,
			SSHKey:     x.ref(kinds.Key, &i.Spec.SSHKeyRef),
			BecomeKey:  x.ref(kinds.Key, i.Spec.BecomeKeyRef),
			Repository: x.ref(kinds.Repository, i.Spec.RepositoryRef),
		})
	}
	for _, e := range envItems {
		env, err := x.environment(e)
		if err != nil {
			return nil, err
		}
		b.Environments = append(b.Environments, env)
	}
	for _, v := range viewItems {
		b.Views = append(b.Views, View{Title: x.name(kinds.View, v), Position: v.Spec.Position})
	}

	// A template's `cron` is written only when it has one schedule and that
	// one is active: a reader of the older layout takes `cron` to mean "runs
	// on this", which two schedules or an inactive one would belie.
	// Schedules has them all either way.
	perTemplate := map[string]int{}
	for _, s := range schedItems {
		perTemplate[s.Spec.TemplateRef.Name]++
	}
	for _, t := range tplItems {
		tpl, err := x.template(t)
		if err != nil {
			return nil, err
		}
		if perTemplate[t.Name] == 1 {
			for _, s := range schedItems {
				if s.Spec.TemplateRef.Name == t.Name && s.Spec.Active {
					tpl.Cron = s.Spec.CronFormat
				}
			}
		}
		b.Templates = append(b.Templates, tpl)
	}
	for _, s := range schedItems {
		b.Schedules = append(b.Schedules, Schedule{
			Name: s.Spec.DisplayName, Template: x.ref(kinds.Template, &s.Spec.TemplateRef),
			CronFormat: s.Spec.CronFormat, Active: &s.Spec.Active,
			RunOnlyOnNewCommit: s.Spec.RunOnlyOnNewCommit,
			Repository:         x.ref(kinds.Repository, s.Spec.RepositoryRef),
		})
	}

	aliasesOf := map[string][]string{}
	for _, a := range aliasItems {
		if a.Spec.IntegrationRef == nil {
			b.IntegrationAliases = append(b.IntegrationAliases, a.Name)
			continue
		}
		aliasesOf[a.Spec.IntegrationRef.Name] = append(aliasesOf[a.Spec.IntegrationRef.Name], a.Name)
	}
	for _, i := range intItems {
		b.Integrations = append(b.Integrations, x.integration(i, aliasesOf[i.Name]))
	}
	return b, nil
}

type exporter struct {
	ctx context.Context
	c   client.Reader
	ns  string
	// names maps, per kind (kinds.Kind.Name), metadata.name → name in the file.
	names map[string]map[string]string
	// objects are the exported objects, with their kinds, whose references
	// must all resolve.
	objects []tracked
}

type tracked struct {
	kind kinds.Descriptor
	obj  client.Object
}

// track takes the live objects of a kind in file order, names them in the
// file after the kind's display name and keeps them for the check of
// references.
func track[T any, PT interface {
	*T
	client.Object
}](x *exporter, kind kinds.Kind[PT], items []T) []PT {
	out := live[T, PT](items)
	x.names[kind.Name] = names(out, kind.Display)
	for _, obj := range out {
		x.objects = append(x.objects, tracked{kind, obj})
	}
	return out
}

// missingReferences names every reference, of every field the kinds'
// descriptors know, to an object of the project that does not exist. An
// environment's own Secret is not checked: nothing of it but its
// variables' names reaches the file.
func (x *exporter) missingReferences() []string {
	var missing []string
	for _, t := range x.objects {
		for _, ref := range t.kind.ReferencesOf(t.obj) {
			if known, ok := x.names[ref.Target.Noun]; ok && known[ref.Name] == "" {
				missing = append(missing, fmt.Sprintf("%s %q: %s %q does not exist",
					t.kind.KindName(), cmp.Or(t.kind.DisplayOf(t.obj), t.obj.GetName()), ref.Target.Noun, ref.Name))
			}
		}
	}
	return missing
}

// name is obj's name in the file.
func (x *exporter) name(kind kinds.Descriptor, obj client.Object) string {
	return x.names[kind.KindName()][obj.GetName()]
}

// ref is the file's name for an object of kind that ref names; "" for no
// reference (missingReferences has refused dangling ones).
func (x *exporter) ref(kind kinds.Descriptor, ref *bastionv1.ObjectRef) string {
	if ref == nil || ref.Name == "" {
		return ""
	}
	return x.names[kind.KindName()][ref.Name]
}

func (x *exporter) environment(e *bastionv1.Environment) (Environment, error) {
	out := Environment{Name: x.name(kinds.Environment, e), JSON: "{}", Env: "{}"}
	if e.Spec.ExtraVars != nil && len(e.Spec.ExtraVars.Raw) > 0 {
		out.JSON = string(e.Spec.ExtraVars.Raw)
	}
	if len(e.Spec.Env) > 0 {
		text, err := json.Marshal(e.Spec.Env) // sorted keys: a stable file
		if err != nil {
			return out, err
		}
		out.Env = string(text)
	}
	if e.Spec.SecretRef == nil {
		return out, nil
	}
	secret := &corev1.Secret{}
	err := x.c.Get(x.ctx, client.ObjectKey{Namespace: x.ns, Name: e.Spec.SecretRef.Name}, secret)
	if apierrors.IsNotFound(err) {
		// Nothing of a missing Secret would reach the file anyway.
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("reading the secrets of environment %q: %w", e.Spec.DisplayName, err)
	}
	// Only the data keys' names are read; the values are dropped here.
	for key := range secret.Data {
		if name, ok := strings.CutPrefix(key, bastionv1.EnvironmentSecretVarPrefix); ok {
			out.Secrets = append(out.Secrets, EnvironmentSecret{Name: name, Type: secretVar})
		} else if name, ok := strings.CutPrefix(key, bastionv1.EnvironmentSecretEnvPrefix); ok {
			out.Secrets = append(out.Secrets, EnvironmentSecret{Name: name, Type: secretEnv})
		}
	}
	slices.SortFunc(out.Secrets, func(a, b EnvironmentSecret) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

func (x *exporter) template(t *bastionv1.Template) (Template, error) {
	s := t.Spec
	out := Template{
		Name: x.name(kinds.Template, t), Description: s.Description, Type: string(s.Type), App: string(s.App),
		Playbook: s.Playbook, AllowOverrideArgsInTask: s.AllowOverrideArgsInTask,
		AllowOverrideBranchInTask: s.AllowOverrideBranchInTask, AllowOverrideInventoryInTask: s.AllowOverrideInventoryInTask,
		AllowOverridePlaybookInTask: s.AllowOverridePlaybookInTask, AllowOverrideExtraVarsInTask: s.AllowOverrideExtraVarsInTask,
		SuppressSuccessAlerts: s.SuppressSuccessAlerts, Autorun: s.Autorun, GitBranch: s.GitBranch,
		StartVersion: s.StartVersion, KeepLast: s.KeepLast,
		Repository:    x.ref(kinds.Repository, &s.RepositoryRef),
		Environment:   x.ref(kinds.Environment, &s.EnvironmentRef),
		Inventory:     x.ref(kinds.Inventory, s.InventoryRef),
		View:          x.ref(kinds.View, s.ViewRef),
		BuildTemplate: x.ref(kinds.Template, s.BuildTemplateRef),
	}
	if len(s.Arguments) > 0 {
		text, err := json.Marshal(s.Arguments)
		if err != nil {
			return out, err
		}
		out.Arguments = string(text)
	}
	for _, v := range s.SurveyVars {
		sv := SurveyVar{Name: v.Name, Title: v.Title, Description: v.Description, Type: v.Type, Required: v.Required}
		for _, val := range v.Values {
			sv.Values = append(sv.Values, SurveyVarValue(val))
		}
		out.SurveyVars = append(out.SurveyVars, sv)
	}
	for _, v := range s.Vaults {
		out.Vaults = append(out.Vaults, Vault{Name: v.Name, VaultKey: x.ref(kinds.Key, &v.KeyRef)})
	}
	return out, nil
}

func (x *exporter) integration(i *bastionv1.Integration, aliases []string) Integration {
	s := i.Spec
	out := Integration{
		Name: x.name(kinds.Integration, i), Template: x.ref(kinds.Template, s.TemplateRef),
		AuthMethod: string(s.AuthMethod), AuthHeader: s.AuthHeader,
		AuthSecret: x.ref(kinds.Key, s.AuthSecretRef), Searchable: s.Searchable,
		Aliases: append([]string{}, aliases...), Matchers: []Matcher{}, ExtractValues: []ExtractValue{},
	}
	if s.TaskParams != nil && len(s.TaskParams.Raw) > 0 {
		out.TaskParams = json.RawMessage(s.TaskParams.Raw)
	}
	for _, m := range s.Matchers {
		out.Matchers = append(out.Matchers, Matcher{
			Name: m.Name, MatchType: m.MatchType, Method: m.Method, BodyDataType: m.BodyDataType, Key: m.Key, Value: m.Value,
		})
	}
	for _, v := range s.ExtractValues {
		out.ExtractValues = append(out.ExtractValues, ExtractValue{
			Name: v.Name, ValueSource: v.ValueSource, BodyDataType: v.BodyDataType, Key: v.Key, Variable: v.Variable,
		})
	}
	return out
}

// live returns pointers to the items that are not being deleted, in id
// order (objects without an id yet last, by creation time and name), so
// that a file lists objects as they were created and reads the same every
// time.
func live[T any, PT interface {
	*T
	client.Object
}](items []T) []PT {
	out := make([]PT, 0, len(items))
	for i := range items {
		if obj := PT(&items[i]); obj.GetDeletionTimestamp().IsZero() {
			out = append(out, obj)
		}
	}
	slices.SortFunc(out, func(a, b PT) int {
		ia, oka := ids.FromLabels(a)
		ib, okb := ids.FromLabels(b)
		switch {
		case oka && okb && ia != ib:
			return cmp.Compare(ia, ib)
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Or(
			a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time),
			cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}

// names maps each object's metadata.name to a name unique within the kind:
// its display name, with " (2)", " (3)", ... for later namesakes.
func names[PT client.Object](items []PT, display func(PT) string) map[string]string {
	taken := map[string]bool{}
	for _, obj := range items {
		taken[display(obj)] = true
	}
	out := map[string]string{}
	seen := map[string]bool{}
	for _, obj := range items {
		name := display(obj)
		if seen[name] {
			base := name
			for n := 2; ; n++ {
				if name = fmt.Sprintf("%s (%d)", base, n); !taken[name] {
					break
				}
			}
			taken[name] = true
		}
		seen[name] = true
		out[obj.GetName()] = name
	}
	return out
}

// The types of an environment's secret variables.
const (
	secretVar = "var"
	secretEnv = "env"
)
