package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
	"github.com/bastion-dev/bastion/internal/objname"
)

// environmentJSON is an environment (api-contract.md), in answers and
// requests. `json` and `env` are JSON text; a read answers the password and
// every secret value as "".
type environmentJSON struct {
	ID        int64                   `json:"id"`
	Name      string                  `json:"name"`
	ProjectID int64                   `json:"project_id"`
	Password  string                  `json:"password"`
	JSON      string                  `json:"json"`
	Env       string                  `json:"env"`
	Secrets   []environmentSecretJSON `json:"secrets"`
	managedJSON
}

// environmentResource serves /project/{id}/environment. Members read;
// writes need manageProjectResources. An environment's secrets live in a
// Secret of its own, which its create, update and delete write too.
var environmentResource = &resource[*bastionv1.Environment, environmentJSON, environmentJSON]{
	kind: kinds.Environment, path: "/environment", param: "environment_id",
	toJSON: (*Server).toEnvironmentJSON,
	create: (*Server).createEnvironment, update: (*Server).updateEnvironment,
	afterDelete: (*Server).deleteEnvironmentSecret,
	refs:        referencedBy(kinds.Environment),
}

const errVariablesJSON = badRequest("Environment and extra variables must be valid JSON")

// jsonObject reads `json` or `env`: the text of a JSON object, where ""
// means {}.
func jsonObject(text string) (map[string]json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, errVariablesJSON
	}
	return obj, nil
}

// environmentSpec checks a request by docs/features.md §5 (name; json and env JSON
// objects) and returns the Environment's fields, without its Secret.
func environmentSpec(req environmentJSON) (bastionv1.EnvironmentSpec, error) {
	name, err := requiredName(req.Name)
	if err != nil {
		return bastionv1.EnvironmentSpec{}, err
	}
	spec := bastionv1.EnvironmentSpec{DisplayName: name}
	vars, err := jsonObject(req.JSON)
	if err != nil {
		return spec, err
	}
	env, err := jsonObject(req.Env)
	if err != nil {
		return spec, err
	}
	if len(vars) > 0 {
		raw, err := json.Marshal(vars) // compact, as the apiserver keeps it
		if err != nil {
			return spec, errVariablesJSON
		}
		spec.ExtraVars = &apiextensionsv1.JSON{Raw: raw}
	}
	spec.Env, err = environmentVariables(env)
	return spec, err
}

// environmentVariables turns `env` into process variables. Numbers and
// booleans are taken as their text ({"PORT": 8080} is PORT=8080); objects,
// arrays and null have no text a process could read.
func environmentVariables(obj map[string]json.RawMessage) (map[string]string, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(obj))
	for name, raw := range obj {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, invalidf("env: %q is not a valid environment variable name", name)
		}
		var value any
		_ = json.Unmarshal(raw, &value) // raw came out of a valid object
		switch v := value.(type) {
		case string:
			out[name] = v
		case float64, bool:
			out[name] = string(bytes.TrimSpace(raw))
		default:
			return nil, invalidf("env: the value of %s must be a string, a number or a boolean", name)
		}
	}
	return out, nil
}

// toEnvironmentJSON shows an environment: its secret variables by name, and
// no value, password included.
func (s *Server) toEnvironmentJSON(r *http.Request, env *bastionv1.Environment) (environmentJSON, error) {
	out := environmentJSON{ID: idOf(env), Name: env.Spec.DisplayName, ProjectID: projectOf(r).id, JSON: "{}", Env: "{}"}
	if env.Spec.ExtraVars != nil && len(env.Spec.ExtraVars.Raw) > 0 {
		out.JSON = string(env.Spec.ExtraVars.Raw)
	}
	if len(env.Spec.Env) > 0 {
		text, err := json.Marshal(env.Spec.Env)
		if err != nil {
			return out, err
		}
		out.Env = string(text)
	}
	secret, err := s.environmentSecret(r.Context(), env)
	if err != nil {
		return out, err
	}
	out.Secrets = listSecrets(secret.Data)
	return out, nil
}

// environmentSecret reads the environment's Secret from the apiserver
// (Secrets are never cached); an empty one when it has none.
func (s *Server) environmentSecret(ctx context.Context, env *bastionv1.Environment) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if env.Spec.SecretRef == nil || env.Spec.SecretRef.Name == "" {
		return secret, nil
	}
	err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: env.Spec.SecretRef.Name}, secret)
	return secret, client.IgnoreNotFound(err)
}

// createEnvironment checks everything, then makes the Secret (when there is
// a password or a secret variable) and the Environment that names it.
func (s *Server) createEnvironment(r *http.Request, req *environmentJSON) (*bastionv1.Environment, error) {
	spec, err := environmentSpec(*req)
	if err != nil {
		return nil, err
	}
	data, err := applySecrets(nil, req.Password, req.Secrets)
	if err != nil {
		return nil, err
	}
	ctx, a := r.Context(), projectOf(r)
	var secret *corev1.Secret
	if len(data) > 0 {
		if secret, err = s.newEnvironmentSecret(ctx, a.namespace(), spec.DisplayName, data); err != nil {
			return nil, err
		}
		spec.SecretRef = &bastionv1.ObjectRef{Name: secret.Name}
	}
	env := &bastionv1.Environment{Spec: spec}
	if _, err := s.createObject(ctx, a, env, kinds.Environment.Name, spec.DisplayName); err != nil {
		if secret != nil {
			_ = s.opts.Client.Delete(context.WithoutCancel(ctx), secret)
		}
		return nil, err
	}
	return env, nil
}

func (s *Server) newEnvironmentSecret(ctx context.Context, ns, name string, data map[string][]byte) (*corev1.Secret, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: objname.GenerateName(name+" secrets", "environment-secrets")},
		Type:       corev1.SecretTypeOpaque, Data: data,
	}
	return secret, s.opts.Client.Create(ctx, secret)
}

// updateEnvironment checks the whole request against the stored secrets
// before writing anything, then writes the Secret and the Environment.
func (s *Server) updateEnvironment(r *http.Request, req *environmentJSON, env *bastionv1.Environment) error {
	spec, err := environmentSpec(*req)
	if err != nil {
		return err
	}
	ctx := r.Context()
	secret, err := s.environmentSecret(ctx, env)
	if err != nil {
		return err
	}
	data, err := applySecrets(secret.Data, req.Password, req.Secrets)
	if err != nil {
		return err
	}
	spec.SecretRef = env.Spec.SecretRef
	switch {
	case secret.Name != "" && !maps.EqualFunc(data, secret.Data, bytes.Equal):
		// The Secret may be a GitOps tool's (a sealed or SOPS-encrypted
		// one in Git) while the environment is not.
		if err := s.refuseManaged("secret", secret); err != nil {
			return err
		}
		err = s.updateObject(ctx, secret, func() error {
			// Applied again to the latest data: another save may have
			// come in between.
			var err error
			secret.Data, err = applySecrets(secret.Data, req.Password, req.Secrets)
			return err
		})
	case secret.Name == "" && len(data) > 0:
		if secret, err = s.newEnvironmentSecret(ctx, env.Namespace, spec.DisplayName, data); err == nil {
			spec.SecretRef = &bastionv1.ObjectRef{Name: secret.Name}
		}
	}
	if err != nil {
		return err
	}
	return s.updateObject(ctx, env, func() error { env.Spec = spec; return nil })
}

// deleteEnvironmentSecret deletes the Secret env named once env is gone,
// unless it is a key or another environment still names it (both possible
// with kubectl). A failure is logged: the environment is gone, which is
// what was asked; the Secret stays for an operator to remove.
func (s *Server) deleteEnvironmentSecret(r *http.Request, env *bastionv1.Environment) {
	ref := env.Spec.SecretRef
	if ref == nil || ref.Name == "" {
		return
	}
	ctx := r.Context()
	referrers, err := kinds.Referring(ctx, s.opts.Client, env.Namespace, kinds.RefSecret, ref.Name)
	if err == nil && len(referrers) == 0 {
		err = s.deleteUnlessKey(ctx, env.Namespace, ref.Name)
	}
	if err != nil {
		logAPI().Error(err, "deleting an environment's Secret", "namespace", env.Namespace, "secret", ref.Name)
	}
}

// deleteUnlessKey deletes the Secret called name unless it is a key or a
// GitOps tool manages it.
func (s *Server) deleteUnlessKey(ctx context.Context, ns, name string) error {
	secret := secretMetadata()
	if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, isKey := secret.Labels[bastionv1.LabelKeyType]; isKey {
		return nil
	}
	if _, managed := s.managerOf(secret); managed {
		return nil // its GitOps tool would put it back; removing it is the tool's
	}
	return client.IgnoreNotFound(s.opts.Client.Delete(ctx, secret))
}
