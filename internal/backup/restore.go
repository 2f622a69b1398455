package backup

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
	"github.com/bastion-dev/bastion/internal/objname"
)

// CreateProject makes the Project of a restore from the backup's meta and
// returns it once the project's namespace exists. The caller owns it:
// naming, membership, ids and waiting for the Project controller.
type CreateProject func(ctx context.Context, spec bastionv1.ProjectSpec) (*bastionv1.Project, error)

// rollbackTimeout bounds the clean-up of a failed restore, which runs even
// when the request that asked for the restore has gone.
const rollbackTimeout = 30 * time.Second

// Restore makes a new project from b, which must have come from Parse:
// create makes the Project, then Restore creates every object of the file
// in the project's namespace, with names generated from the display
// names, references resolved to those names, and ids left to the
// controllers. Restoring the same backup twice makes two projects.
//
// Keys come back without their secrets (a Secret of the key's type with
// empty fields; ssh keys as Opaque, because the apiserver refuses a
// kubernetes.io/ssh-auth Secret without a private key), environments'
// secret variables with empty values, and aliases with fresh random URLs.
//
// If anything fails after the Project exists, Restore deletes the Project
// and its namespace (best effort) and returns the error: a failed restore
// leaves nothing behind.
func Restore(ctx context.Context, c client.Client, b *Backup, create CreateProject) (*bastionv1.Project, error) {
	spec := bastionv1.ProjectSpec{
		DisplayName:      b.Meta.Name,
		Alert:            b.Meta.Alert,
		MaxParallelTasks: b.Meta.MaxParallelTasks,
		Type:             b.Meta.Type,
	}
	if b.Meta.AlertChat != nil {
		spec.AlertChat = *b.Meta.AlertChat
	}
	project, err := create(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("creating the project: %w", err)
	}
	r := &restorer{c: c, ns: bastionv1.ProjectNamespace(project.Name), names: map[string]map[string]string{}}
	for _, kind := range kinds.All() {
		r.names[kind.KindName()] = map[string]string{}
	}
	if err := r.restore(ctx, b); err != nil {
		if cleanupErr := rollback(ctx, c, project); cleanupErr != nil {
			return nil, fmt.Errorf("%w (and removing the half-restored project %s failed: %v; delete it by hand)", err, project.Name, cleanupErr)
		}
		return nil, err
	}
	return project, nil
}

type restorer struct {
	c  client.Client
	ns string
	// names maps, per kind (kinds.Kind.Name), name in the file →
	// metadata.name created.
	names map[string]map[string]string
}

func (r *restorer) restore(ctx context.Context, b *Backup) error {
	// Referenced kinds come before the kinds that refer to them, so every
	// name is known when it is needed.
	for _, k := range b.Keys {
		if err := r.key(ctx, k); err != nil {
			return err
		}
	}
	for _, repo := range b.Repositories {
		obj := &bastionv1.Repository{Spec: bastionv1.RepositorySpec{
			DisplayName: repo.Name, GitURL: repo.GitURL, GitBranch: repo.GitBranch,
			SSHKeyRef: r.ref(kinds.Key, repo.SSHKey),
		}}
		if err := r.create(ctx, kinds.Repository, repo.Name, obj); err != nil {
			return err
		}
	}
	for _, inv := range b.Inventories {
		obj := &bastionv1.Inventory{Spec: bastionv1.InventorySpec{
			DisplayName: inv.Name, Type: bastionv1.InventoryType(inv.Type), Inventory: inv.Inventory,
			SSHKeyRef:     r.ref(kinds.Key, inv.SSHKey),
			BecomeKeyRef:  r.optionalRef(kinds.Key, inv.BecomeKey),
			RepositoryRef: r.optionalRef(kinds.Repository, inv.Repository),
		}}
		if err := r.create(ctx, kinds.Inventory, inv.Name, obj); err != nil {
			return err
		}
	}
	for _, env := range b.Environments {
		if err := r.environment(ctx, env); err != nil {
			return err
		}
	}
	for _, v := range b.Views {
		obj := &bastionv1.View{Spec: bastionv1.ViewSpec{Title: v.Title, Position: v.Position}}
		if err := r.create(ctx, kinds.View, v.Title, obj); err != nil {
			return err
		}
	}
	if err := r.templates(ctx, b.Templates); err != nil {
		return err
	}
	if err := r.schedules(ctx, b); err != nil {
		return err
	}
	for _, i := range b.Integrations {
		if err := r.integration(ctx, i); err != nil {
			return err
		}
	}
	for range b.IntegrationAliases {
		if err := r.alias(ctx, "", ""); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) key(ctx context.Context, k Key) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Labels:      map[string]string{bastionv1.LabelKeyType: k.Type},
		Annotations: map[string]string{bastionv1.AnnotationDisplayName: k.Name},
	}}
	switch bastionv1.KeyType(k.Type) {
	case bastionv1.KeyTypeLoginPassword:
		// basic-auth Secrets must have the fields; empty is allowed.
		secret.Type = corev1.SecretTypeBasicAuth
		secret.Data = map[string][]byte{corev1.BasicAuthUsernameKey: {}, corev1.BasicAuthPasswordKey: {}}
	default:
		// ssh-auth Secrets must hold a private key, and the file has none:
		// the type label says what the key is until one is supplied.
		secret.Type = corev1.SecretTypeOpaque
	}
	return r.create(ctx, kinds.Key, k.Name, secret)
}

func (r *restorer) environment(ctx context.Context, env Environment) error {
	spec := bastionv1.EnvironmentSpec{DisplayName: env.Name}
	if vars, err := compactObject(env.JSON); err != nil {
		return fmt.Errorf("environment %q: json: %w", env.Name, err)
	} else if vars != nil {
		spec.ExtraVars = &apiextensionsv1.JSON{Raw: vars}
	}
	if text, err := compactObject(env.Env); err != nil {
		return fmt.Errorf("environment %q: env: %w", env.Name, err)
	} else if text != nil {
		if err := json.Unmarshal(text, &spec.Env); err != nil {
			return fmt.Errorf("environment %q: env: %w", env.Name, err)
		}
	}
	if len(env.Secrets) > 0 {
		// The variables exist with empty values, so the console lists what
		// to fill in.
		secret := &corev1.Secret{ObjectMeta: r.meta(env.Name+" secrets", "environment-secrets"), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{}}
		for _, s := range env.Secrets {
			prefix := bastionv1.EnvironmentSecretVarPrefix
			if s.Type == secretEnv {
				prefix = bastionv1.EnvironmentSecretEnvPrefix
			}
			secret.Data[prefix+s.Name] = []byte{}
		}
		if err := r.createAs(ctx, "the secrets of environment", env.Name, secret); err != nil {
			return err
		}
		spec.SecretRef = &bastionv1.ObjectRef{Name: secret.Name}
	}
	return r.create(ctx, kinds.Environment, env.Name, &bastionv1.Environment{Spec: spec})
}

// templates creates each template after the build template it names, so
// that the reference can carry the build template's generated name.
func (r *restorer) templates(ctx context.Context, templates []Template) error {
	byName := map[string]*Template{}
	for i := range templates {
		byName[templates[i].Name] = &templates[i]
	}
	visiting := map[string]bool{}
	var visit func(t *Template) error
	visit = func(t *Template) error {
		if _, done := r.names[kinds.Template.Name][t.Name]; done {
			return nil
		}
		if visiting[t.Name] {
			return fmt.Errorf("template %q: its build_template chain comes back to it", t.Name)
		}
		visiting[t.Name] = true
		if build := byName[t.BuildTemplate]; build != nil && build != t {
			if err := visit(build); err != nil {
				return err
			}
		}
		return r.template(ctx, t)
	}
	for i := range templates {
		if err := visit(&templates[i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) template(ctx context.Context, t *Template) error {
	spec := bastionv1.TemplateSpec{
		DisplayName: t.Name, Description: t.Description, Type: bastionv1.TemplateType(t.Type),
		App: bastionv1.TemplateApp(t.App), Playbook: t.Playbook,
		RepositoryRef:    r.ref(kinds.Repository, t.Repository),
		EnvironmentRef:   r.ref(kinds.Environment, t.Environment),
		InventoryRef:     r.optionalRef(kinds.Inventory, t.Inventory),
		ViewRef:          r.optionalRef(kinds.View, t.View),
		BuildTemplateRef: r.optionalRef(kinds.Template, t.BuildTemplate),
		StartVersion:     t.StartVersion, Autorun: t.Autorun, GitBranch: t.GitBranch,
		AllowOverrideArgsInTask: t.AllowOverrideArgsInTask, SuppressSuccessAlerts: t.SuppressSuccessAlerts,
		AllowOverrideBranchInTask: t.AllowOverrideBranchInTask, AllowOverrideInventoryInTask: t.AllowOverrideInventoryInTask,
		AllowOverridePlaybookInTask: t.AllowOverridePlaybookInTask, AllowOverrideExtraVarsInTask: t.AllowOverrideExtraVarsInTask,
		KeepLast: t.KeepLast,
	}
	if t.Arguments != "" {
		if err := json.Unmarshal([]byte(t.Arguments), &spec.Arguments); err != nil {
			return fmt.Errorf("template %q: arguments: %w", t.Name, err)
		}
		if len(spec.Arguments) == 0 {
			spec.Arguments = nil
		}
	}
	for _, v := range t.Vaults {
		spec.Vaults = append(spec.Vaults, bastionv1.TemplateVault{Name: v.Name, KeyRef: r.ref(kinds.Key, v.VaultKey)})
	}
	for _, v := range t.SurveyVars {
		sv := bastionv1.SurveyVar{Name: v.Name, Title: v.Title, Description: v.Description, Type: v.Type, Required: v.Required}
		for _, val := range v.Values {
			sv.Values = append(sv.Values, bastionv1.SurveyVarValue(val))
		}
		spec.SurveyVars = append(spec.SurveyVars, sv)
	}
	return r.create(ctx, kinds.Template, t.Name, &bastionv1.Template{Spec: spec})
}

// schedules creates the file's schedules, then one active schedule for
// each template whose `cron` no entry of Schedules stands for.
func (r *restorer) schedules(ctx context.Context, b *Backup) error {
	covered := map[string]bool{}
	all := make([]Schedule, 0, len(b.Schedules))
	for _, s := range b.Schedules {
		covered[s.Template] = true
		all = append(all, s)
	}
	for _, t := range b.Templates {
		if t.Cron != "" && !covered[t.Name] {
			all = append(all, Schedule{Template: t.Name, CronFormat: t.Cron})
		}
	}
	for _, s := range all {
		active := s.Active == nil || *s.Active
		obj := &bastionv1.Schedule{ObjectMeta: r.meta(s.Name, kinds.Schedule.Name), Spec: bastionv1.ScheduleSpec{
			DisplayName: s.Name, TemplateRef: r.ref(kinds.Template, s.Template),
			CronFormat: s.CronFormat, Active: active, RunOnlyOnNewCommit: s.RunOnlyOnNewCommit,
			RepositoryRef: r.optionalRef(kinds.Repository, s.Repository),
		}}
		if s.Name == "" {
			obj.GenerateName = objname.GenerateName(s.Template, "schedule")
		}
		if err := r.createAs(ctx, "a schedule of template", s.Template, obj); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) integration(ctx context.Context, i Integration) error {
	spec := bastionv1.IntegrationSpec{
		DisplayName: i.Name, TemplateRef: r.optionalRef(kinds.Template, i.Template),
		AuthMethod: bastionv1.IntegrationAuthMethod(i.AuthMethod), AuthHeader: i.AuthHeader,
		AuthSecretRef: r.optionalRef(kinds.Key, i.AuthSecret), Searchable: i.Searchable,
	}
	if len(i.TaskParams) > 0 {
		params, err := compactObject(string(i.TaskParams))
		if err != nil {
			return fmt.Errorf("integration %q: task_params: %w", i.Name, err)
		}
		if params != nil {
			spec.TaskParams = &apiextensionsv1.JSON{Raw: params}
		}
	}
	for _, m := range i.Matchers {
		spec.Matchers = append(spec.Matchers, bastionv1.IntegrationMatcher{
			Name: m.Name, MatchType: m.MatchType, Method: m.Method, BodyDataType: m.BodyDataType, Key: m.Key, Value: m.Value,
		})
	}
	for _, v := range i.ExtractValues {
		spec.ExtractValues = append(spec.ExtractValues, bastionv1.IntegrationExtractValue{
			Name: v.Name, ValueSource: v.ValueSource, BodyDataType: v.BodyDataType, Key: v.Key, Variable: v.Variable,
		})
	}
	obj := &bastionv1.Integration{Spec: spec}
	if err := r.create(ctx, kinds.Integration, i.Name, obj); err != nil {
		return err
	}
	for range i.Aliases {
		if err := r.alias(ctx, i.Name, obj.Name); err != nil {
			return err
		}
	}
	return nil
}

// alias creates an alias of the integration named integration (display
// is its name in the file), or a project-level alias when integration is
// "". The alias in the file is never reused: it is a credential, and the
// old one may still reach the old project.
func (r *restorer) alias(ctx context.Context, display, integration string) error {
	obj := &bastionv1.IntegrationAlias{ObjectMeta: r.meta(display, "alias"), Spec: bastionv1.IntegrationAliasSpec{Alias: newAlias()}}
	if integration == "" {
		obj.GenerateName = "project-alias-"
		return r.createAs(ctx, "a project alias", "", obj)
	}
	obj.Spec.IntegrationRef = &bastionv1.ObjectRef{Name: integration}
	return r.createAs(ctx, "an alias of integration", display, obj)
}

// newAlias is 26 random base32 characters (130 bits), which the alias
// pattern ^[A-Za-z0-9_-]+$ and its 16-character minimum accept.
func newAlias() string { return rand.Text() }

func (r *restorer) meta(display, kind string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: r.ns, GenerateName: objname.GenerateName(display, kind)}
}

// create makes obj, an object of kind called name in the file, with a
// name generated from it, and records the name it got for references.
func (r *restorer) create(ctx context.Context, kind kinds.Descriptor, name string, obj client.Object) error {
	meta := r.meta(name, kind.KindName())
	obj.SetNamespace(meta.Namespace)
	obj.SetGenerateName(meta.GenerateName)
	if err := r.createAs(ctx, kind.KindName(), name, obj); err != nil {
		return err
	}
	r.names[kind.KindName()][name] = obj.GetName()
	return nil
}

// ref refers to the object of kind called name in the file.
func (r *restorer) ref(kind kinds.Descriptor, name string) bastionv1.ObjectRef {
	return bastionv1.ObjectRef{Name: r.names[kind.KindName()][name]}
}

// optionalRef is ref, or no reference for "".
func (r *restorer) optionalRef(kind kinds.Descriptor, name string) *bastionv1.ObjectRef {
	if name == "" {
		return nil
	}
	ref := r.ref(kind, name)
	return &ref
}

// createAs makes obj, whose name is already set; what and name say what
// it is in an error.
func (r *restorer) createAs(ctx context.Context, what, name string, obj client.Object) error {
	if err := r.c.Create(ctx, obj); err != nil {
		if name != "" {
			what += fmt.Sprintf(" %q", name)
		}
		return fmt.Errorf("restoring %s: %w", what, err)
	}
	return nil
}

// rollback deletes a half-restored project. The namespace is deleted too,
// not left to the Project controller's finalizer: the controller may not
// be running, and `bastion dev` has no garbage collector for what the
// namespace holds.
func rollback(ctx context.Context, c client.Client, project *bastionv1.Project) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	var errs []error
	if err := c.Delete(ctx, project, background); client.IgnoreNotFound(err) != nil {
		errs = append(errs, err)
	}
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectNamespace(project.Name)}, ns)
	switch {
	case client.IgnoreNotFound(err) != nil:
		errs = append(errs, err)
	case err == nil && (ns.Labels[bastionv1.LabelProject] == project.Name || metav1.IsControlledBy(ns, project)):
		if err := c.Delete(ctx, ns, background); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// compactObject returns a JSON object's text without insignificant space,
// or nil for an empty object, which is stored as no field at all.
func compactObject(text string) ([]byte, error) {
	obj, err := jsonObject(text)
	if err != nil {
		return nil, err
	}
	if len(obj) == 0 {
		return nil, nil
	}
	return json.Marshal(obj)
}
