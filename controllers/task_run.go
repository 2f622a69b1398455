package controllers

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// runFor identifies the task's run; Secrets are filled by prepareRun.
func (r *TaskReconciler) runFor(ctx context.Context, task *bastionv1.Task) (launch.Run, error) {
	run := launch.Run{Task: task, Name: bastionv1.TaskRunName(task), InputSecret: bastionv1.TaskInputSecretName(task)}
	template := &bastionv1.Template{}
	err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template)
	if client.IgnoreNotFound(err) != nil {
		return run, err
	}
	run.App = template.Spec.App
	return run, nil
}

// prepareRun resolves what the task runs into a runspec, stores it in the
// task's input Secret, and lists the Secrets the run needs.
func (r *TaskReconciler) prepareRun(ctx context.Context, task *bastionv1.Task, run launch.Run) (launch.Run, error) {
	spec, secrets, err := r.resolve(ctx, task)
	if err != nil {
		return run, err
	}
	run.Secrets = secrets
	spec.ManagerURL = r.ManagerURL
	if run, err = r.withPodSettings(ctx, task, run); err != nil {
		return run, err
	}

	switch own, known := r.watchedInput(task, run.InputSecret); {
	case own != nil:
		return run, nil // prepared by an earlier reconcile
	case !known:
		if own, err := r.ownInput(ctx, r.Client, task, run.InputSecret); err != nil || own {
			return run, err // own: prepared by an earlier reconcile
		}
	}
	// Else the watch has no such Secret: the create below finds out if it
	// only just came (AlreadyExists).
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return run, err
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return run, err
	}
	input := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: run.InputSecret, Namespace: task.Namespace,
			Labels: map[string]string{launch.LabelTask: task.Name}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			runspec.TaskFile:  specJSON,
			runspec.TokenFile: []byte(hex.EncodeToString(token)),
		},
	}
	if err := controllerutil.SetControllerReference(task, input, r.Scheme()); err != nil {
		return run, err
	}
	err = r.Create(ctx, input)
	created := err == nil
	if apierrors.IsAlreadyExists(err) {
		// The cache had not seen it: ours from an earlier reconcile, or an
		// earlier task's, which is deleted and made again.
		var own bool
		if own, err = r.ownInput(ctx, r.APIReader, task, run.InputSecret); err == nil && !own {
			err = r.Create(ctx, input)
			created = err == nil
		}
	}
	if err != nil {
		return run, fmt.Errorf("creating the task's input: %w", err)
	}
	if created {
		// What the launcher and the runner endpoint would read back. Only
		// what this call stored: an earlier reconcile's Secret holds
		// another token.
		run.Input = input.Data
		r.Tokens.Put(task.UID, string(input.Data[runspec.TokenFile]))
	}
	return run, nil
}

// ownInput reports whether the task's input Secret exists and is this
// task's. One of an earlier task of the same name (its Secret outlived it:
// a garbage collector that has not got to it yet, or none, as in `bastion
// dev`) holds that task's runspec and its runner's token: it is deleted,
// never run or trusted. A Secret that is no task's input but has the name
// (a key named "<task>-input") is an error, never used nor deleted.
func (r *TaskReconciler) ownInput(ctx context.Context, reader client.Reader, task *bastionv1.Task, name string) (bool, error) {
	secret := secretMetadata()
	err := reader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil || metav1.IsControlledBy(secret, task) {
		return err == nil, err
	}
	if !isTaskInput(secret, task.Name) {
		return false, fmt.Errorf("secret %q, where the task's input goes, is not a task's input: rename the task or the secret", name)
	}
	uid := secret.GetUID()
	return false, client.IgnoreNotFound(r.Delete(ctx, secret, client.Preconditions{UID: &uid}))
}

// watchedInput says what the namespace's Secret watch knows of the task's
// input Secret: own is the watch's copy when it is this task's; known is
// true when the watch has listed and either has no such Secret or has
// this task's. A task's start read the input Secret from the apiserver
// before every create, most of a start's reads (docs/benchmarks.md, P1).
// What the watch does not know, or a Secret of the name that is not this
// task's, is for ownInput.
func (r *TaskReconciler) watchedInput(task *bastionv1.Task, name string) (own *metav1.PartialObjectMetadata, known bool) {
	if r.Secrets == nil {
		return nil, false
	}
	secret, found, synced := r.Secrets.Lookup(task.Namespace, name)
	if found && metav1.IsControlledBy(secret, task) {
		return secret, true
	}
	return nil, synced && !found
}

// isTaskInput reports whether secret is the input Secret of a Task named
// task (this one or an earlier one of its name): made by prepareRun, so
// labelled with the task and controlled by a Task.
func isTaskInput(secret client.Object, task string) bool {
	owner := metav1.GetControllerOf(secret)
	return secret.GetLabels()[launch.LabelTask] == task && owner != nil &&
		owner.Kind == "Task" && owner.APIVersion == bastionv1.GroupVersion.String() && owner.Name == task
}

// resolve builds the runspec from the task and the objects it refers to.
// Its errors are what the user reads on the failed task.
func (r *TaskReconciler) resolve(ctx context.Context, task *bastionv1.Task) (*runspec.Spec, []string, error) {
	ns := task.Namespace
	template := &bastionv1.Template{}
	if err := r.getRef(ctx, ns, "template", task.Spec.TemplateRef.Name, template); err != nil {
		return nil, nil, err
	}
	if problem, err := r.taskRulesProblem(ctx, task, template); err != nil || problem != "" {
		return nil, nil, cmp.Or(err, errors.New(problem))
	}
	repo := &bastionv1.Repository{}
	if err := r.getRef(ctx, ns, "repository", template.Spec.RepositoryRef.Name, repo); err != nil {
		return nil, nil, err
	}
	env := &bastionv1.Environment{}
	if err := r.getRef(ctx, ns, "environment", template.Spec.EnvironmentRef.Name, env); err != nil {
		return nil, nil, err
	}
	secrets := &secretSet{}

	taskID, _ := ids.FromLabels(task)
	spec := &runspec.Spec{
		Namespace: ns, Name: task.Name, ID: taskID,
		App:      string(template.Spec.App),
		Playbook: cmp.Or(task.Spec.Playbook, template.Spec.Playbook),
		Debug:    task.Spec.Debug, DryRun: task.Spec.DryRun, Diff: task.Spec.Diff, Limit: task.Spec.Limit,
		TaskType: string(template.Spec.Type),
		Env:      env.Spec.Env,
		Repository: runspec.Repository{
			URL:        repo.Spec.GitURL,
			Branch:     cmp.Or(task.Spec.GitBranch, template.Spec.GitBranch, repo.Spec.GitBranch),
			CommitHash: task.Spec.CommitHash,
		},
	}
	if spec.App == "" {
		spec.App = string(bastionv1.AppAnsible)
	}
	spec.Arguments = append(spec.Arguments, template.Spec.Arguments...)
	if template.Spec.AllowOverrideArgsInTask {
		spec.Arguments = append(spec.Arguments, task.Spec.Arguments...)
	}
	switch bastionv1.TemplateType(spec.TaskType) {
	case bastionv1.TemplateBuild:
		spec.TargetVersion = task.Status.Version
	case bastionv1.TemplateDeploy:
		spec.IncomingVersion = task.Status.Version
	}

	var err error
	if spec.Repository.Key, err = r.keyRef(ctx, ns, &repo.Spec.SSHKeyRef, secrets); err != nil {
		return nil, nil, err
	}
	if spec.Inventory, err = r.resolveInventory(ctx, task, template, secrets); err != nil {
		return nil, nil, err
	}
	for _, v := range template.Spec.Vaults {
		key, err := r.keyRef(ctx, ns, &v.KeyRef, secrets)
		if err != nil {
			return nil, nil, err
		}
		if key != nil {
			spec.Vaults = append(spec.Vaults, runspec.Vault{Name: v.Name, Key: *key})
		}
	}
	if spec.ExtraVars, spec.TaskVarNames, err = mergeVars(task, env); err != nil {
		return nil, nil, err
	}
	if env.Spec.SecretRef != nil {
		if err := r.getRef(ctx, ns, "secret", env.Spec.SecretRef.Name, secretMetadata()); err != nil {
			return nil, nil, err
		}
		spec.EnvironmentSecret = env.Spec.SecretRef.Name
		secrets.add(env.Spec.SecretRef.Name)
	}
	if task.Spec.SecretRef != nil {
		if err := r.getRef(ctx, ns, "secret", task.Spec.SecretRef.Name, secretMetadata()); err != nil {
			return nil, nil, err
		}
		spec.TaskSecret = task.Spec.SecretRef.Name
		secrets.add(task.Spec.SecretRef.Name)
	}
	return spec, secrets.names, nil
}

func (r *TaskReconciler) resolveInventory(ctx context.Context, task *bastionv1.Task, template *bastionv1.Template, secrets *secretSet) (*runspec.Inventory, error) {
	ref := task.Spec.InventoryRef
	if ref == nil {
		ref = template.Spec.InventoryRef
	}
	if ref == nil {
		return nil, nil
	}
	inv := &bastionv1.Inventory{}
	if err := r.getRef(ctx, task.Namespace, "inventory", ref.Name, inv); err != nil {
		return nil, err
	}
	out := &runspec.Inventory{Type: string(inv.Spec.Type), Content: inv.Spec.Inventory, Name: inv.Spec.DisplayName}
	var err error
	if out.Key, err = r.keyRef(ctx, task.Namespace, &inv.Spec.SSHKeyRef, secrets); err != nil {
		return nil, err
	}
	if inv.Spec.BecomeKeyRef != nil {
		if out.BecomeKey, err = r.keyRef(ctx, task.Namespace, inv.Spec.BecomeKeyRef, secrets); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keyRef resolves a key Secret; a key of type none needs no mount.
func (r *TaskReconciler) keyRef(ctx context.Context, ns string, ref *bastionv1.ObjectRef, secrets *secretSet) (*runspec.KeyRef, error) {
	secret := secretMetadata()
	if err := r.getRef(ctx, ns, "key", ref.Name, secret); err != nil {
		return nil, err
	}
	keyType := secret.Labels[bastionv1.LabelKeyType]
	if keyType == "" {
		return nil, fmt.Errorf("secret %q is not a Bastion key (it has no %s label)", ref.Name, bastionv1.LabelKeyType)
	}
	if bastionv1.KeyType(keyType) == bastionv1.KeyTypeNone {
		return nil, nil
	}
	secrets.add(ref.Name)
	return &runspec.KeyRef{Secret: ref.Name, Type: keyType}, nil
}

func (r *TaskReconciler) getRef(ctx context.Context, ns, kind, name string, obj client.Object) error {
	if err := r.getInput(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %q not found", kind, name)
		}
		return err
	}
	return nil
}

// getInput reads an object that a task refers to. The metadata of a
// Secret (a key, the Environment's or the task's Secret) comes from the
// namespace's watch when the watch has it: Secrets are not in the
// manager's cache, and these checks were most of the apiserver reads of a
// task's start (docs/benchmarks.md). A Secret the watch has not seen is
// read from the apiserver, so one made a moment ago is never reported
// missing; one deleted a moment ago may pass the check, and the run then
// fails reading it, as it would had it gone a moment later.
func (r *TaskReconciler) getInput(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if meta, ok := obj.(*metav1.PartialObjectMetadata); ok && r.Secrets != nil && meta.GroupVersionKind() == secretGVK {
		if cached, ok := r.Secrets.Cached(key.Namespace, key.Name); ok {
			cached.ObjectMeta.DeepCopyInto(&meta.ObjectMeta)
			return nil
		}
	}
	return r.Get(ctx, key, obj)
}

var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// mergeVars merges the task's variables under the environment's: the
// Environment wins (api-contract.md, "Variables"). It also returns the
// names whose final value is the task's, sorted: the runner must not let
// ansible template those (a survey answer or a webhook's value is
// untrusted), while the Environment's may use Jinja on purpose.
func mergeVars(task *bastionv1.Task, env *bastionv1.Environment) (json.RawMessage, []string, error) {
	merged := map[string]any{}
	fromTask := map[string]bool{}
	for i, src := range []*[]byte{rawOf(task.Spec.ExtraVars), rawOf(env.Spec.ExtraVars)} {
		if src == nil || len(*src) == 0 {
			continue
		}
		vars := map[string]any{}
		if err := json.Unmarshal(*src, &vars); err != nil {
			return nil, nil, fmt.Errorf("Environment and extra variables must be valid JSON: %v", err)
		}
		for k, v := range vars {
			merged[k] = v
			fromTask[k] = i == 0
		}
	}
	if len(merged) == 0 {
		return nil, nil, nil
	}
	var names []string
	for k, task := range fromTask {
		if task {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	data, err := json.Marshal(merged)
	return data, names, err
}

type secretSet struct{ names []string }

func (s *secretSet) add(name string) {
	for _, n := range s.names {
		if n == name {
			return
		}
	}
	s.names = append(s.names, name)
}
