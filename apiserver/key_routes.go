package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// Keys are core Secrets labelled with their type (api/v1alpha1/key_types.go).
// The API writes secret material and never reads it back: every answer
// carries the secret fields empty, and `empty` says whether one is stored.

// keyJSON is a key (api-contract.md, "key"), in answers and in requests.
type keyJSON struct {
	ID             int64                `json:"id"`
	Name           string               `json:"name"`
	Type           bastionv1.KeyType    `json:"type"`
	ProjectID      int64                `json:"project_id"`
	LoginPassword  keyLoginPasswordJSON `json:"login_password"`
	SSH            keySSHJSON           `json:"ssh"`
	OverrideSecret bool                 `json:"override_secret"`
	Empty          bool                 `json:"empty"`
	managedJSON
}

type keyLoginPasswordJSON struct {
	Login    string `json:"login"`
	Password string `json:"password"`
}

type keySSHJSON struct {
	Login      string `json:"login"`
	Passphrase string `json:"passphrase"`
	PrivateKey string `json:"private_key"`
}

// keyResource serves /project/{id}/keys. Members read; writes need
// manageProjectResources. A key is a Secret: its list reads Secrets with a
// key type, and only an override_secret update changes its secret.
var keyResource = &resource[*corev1.Secret, keyJSON, keyJSON]{
	kind: kinds.Key, path: "/keys", param: "key_id",
	listOptions: []client.ListOption{client.HasLabels{bastionv1.LabelKeyType}},
	toJSON: func(_ *Server, r *http.Request, secret *corev1.Secret) (keyJSON, error) {
		return toKeyJSON(secret, projectOf(r).id), nil
	},
	build:  buildKey,
	update: (*Server).updateKey,
	refs:   referencedBy(kinds.Key),
}

// toKeyJSON shows a key without its secret material.
func toKeyJSON(secret *corev1.Secret, projectID int64) keyJSON {
	keyType := bastionv1.KeyType(secret.Labels[bastionv1.LabelKeyType])
	stored := false
	switch keyType {
	case bastionv1.KeyTypeSSH:
		stored = len(secret.Data[bastionv1.KeyPrivateKey]) > 0
	case bastionv1.KeyTypeLoginPassword:
		stored = len(secret.Data[bastionv1.KeyPassword]) > 0
	}
	return keyJSON{ID: idOf(secret), Name: kinds.KeyName(secret), Type: keyType, ProjectID: projectID, Empty: !stored}
}

// secret checks the secret part of a request (docs/features.md §5, when secrets are
// editable) and returns what the Secret holds. Messages never repeat the
// secret material.
func (req keyJSON) secret() (corev1.SecretType, map[string][]byte, error) {
	switch req.Type {
	case "":
		return "", nil, badRequest("Type is required")
	case bastionv1.KeyTypeNone:
		return corev1.SecretTypeOpaque, nil, nil
	case bastionv1.KeyTypeLoginPassword:
		lp := req.LoginPassword
		if lp.Password == "" {
			return "", nil, badRequest("Password is required")
		}
		return corev1.SecretTypeBasicAuth, map[string][]byte{
			corev1.BasicAuthUsernameKey: []byte(lp.Login), corev1.BasicAuthPasswordKey: []byte(lp.Password),
		}, nil
	case bastionv1.KeyTypeSSH:
		k := req.SSH
		if strings.TrimSpace(k.PrivateKey) == "" {
			return "", nil, badRequest("Private key is required")
		}
		if err := checkPrivateKey(k.PrivateKey, k.Passphrase); err != nil {
			return "", nil, err
		}
		// OpenSSH refuses a key file whose last line has no newline.
		pem := strings.TrimSpace(k.PrivateKey) + "\n"
		data := map[string][]byte{bastionv1.KeyPrivateKey: []byte(pem)}
		if k.Login != "" {
			data[bastionv1.KeyLogin] = []byte(k.Login)
		}
		if k.Passphrase != "" {
			data[bastionv1.KeyPassphrase] = []byte(k.Passphrase)
		}
		return corev1.SecretTypeSSHAuth, data, nil
	default:
		return "", nil, invalidf("type must be ssh, login_password or none, not %q", req.Type)
	}
}

// checkPrivateKey refuses what ssh cannot use: text that is not a private
// key, an encrypted key without its passphrase, a wrong passphrase. The
// parser's own errors are not passed on, so no part of the key is echoed.
func checkPrivateKey(pem, passphrase string) error {
	_, err := ssh.ParsePrivateKey([]byte(pem))
	var encrypted *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &encrypted):
		return badRequest("The private key could not be read: paste a whole private key in PEM or OpenSSH format")
	case passphrase == "":
		return badRequest("The private key is encrypted: its passphrase is required")
	}
	if _, err := ssh.ParsePrivateKeyWithPassphrase([]byte(pem), []byte(passphrase)); err != nil {
		return badRequest("The passphrase does not decrypt the private key")
	}
	return nil
}

// buildKey makes a new key's Secret: its type label, display name,
// Secret type and material.
func buildKey(_ *Server, _ *http.Request, req *keyJSON, _ *corev1.Secret) (func(*corev1.Secret) error, error) {
	name, err := requiredName(req.Name)
	if err != nil {
		return nil, err
	}
	secretType, data, err := req.secret()
	if err != nil {
		return nil, err
	}
	return func(secret *corev1.Secret) error {
		secret.Labels = map[string]string{bastionv1.LabelKeyType: string(req.Type)}
		secret.Annotations = map[string]string{bastionv1.AnnotationDisplayName: name}
		secret.Type, secret.Data = secretType, data
		return nil
	}, nil
}

// updateKey renames the key; only with override_secret does it change the
// type and the secret (api-contract.md), so a client that sends back what
// it read, secret fields empty, keeps the secret.
func (s *Server) updateKey(r *http.Request, req *keyJSON, secret *corev1.Secret) error {
	name, err := requiredName(req.Name)
	if err != nil {
		return err
	}
	if !req.OverrideSecret {
		return s.updateObject(r.Context(), secret, func() error {
			setDisplayName(secret, name)
			return nil
		})
	}
	secretType, data, err := req.secret()
	if err != nil {
		return err
	}
	return s.overrideKey(r.Context(), secret, name, req.Type, secretType, data)
}

func setDisplayName(obj client.Object, name string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[bastionv1.AnnotationDisplayName] = name
	obj.SetAnnotations(annotations)
}

// overrideKey gives the key a new type and secret. A Secret's type cannot
// change, so a key whose Secret type changes (ssh to login_password, or an
// ssh key restored without its private key, stored as Opaque) becomes a new
// Secret with the same name, labels and id: references by name still hold.
func (s *Server) overrideKey(ctx context.Context, secret *corev1.Secret, name string, keyType bastionv1.KeyType, secretType corev1.SecretType, data map[string][]byte) error {
	restamp := func(obj *corev1.Secret) {
		obj.Labels[bastionv1.LabelKeyType] = string(keyType)
		setDisplayName(obj, name)
		// kubectl's copy of what it applied would keep the old secret.
		delete(obj.Annotations, corev1.LastAppliedConfigAnnotation)
		obj.Data, obj.StringData = data, nil
	}
	if secret.Type == secretType {
		return s.updateObject(ctx, secret, func() error {
			if secret.Type != secretType {
				return conflict("the key was changed by someone else; reload and try again")
			}
			restamp(secret)
			return nil
		})
	}
	old, meta := secret.DeepCopy(), secret.DeepCopy().ObjectMeta
	fresh := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: meta.Namespace, Name: meta.Name, Labels: meta.Labels,
			Annotations: meta.Annotations, OwnerReferences: meta.OwnerReferences,
		},
		Type: secretType,
	}
	restamp(fresh)
	// The preconditions make a concurrent change a conflict, not a loss.
	pre := client.Preconditions{UID: &old.UID, ResourceVersion: &old.ResourceVersion}
	if err := s.opts.Client.Delete(ctx, secret, pre); err != nil {
		return err
	}
	if err := s.opts.Client.Create(ctx, fresh); err != nil {
		// Put the old key back rather than lose it.
		old.ResourceVersion, old.UID, old.CreationTimestamp = "", "", metav1.Time{}
		if putBack := s.opts.Client.Create(context.WithoutCancel(ctx), old); putBack != nil {
			logAPI().Error(putBack, "restoring a key after a failed change of type", "namespace", old.Namespace, "name", old.Name)
		}
		return err
	}
	fresh.DeepCopyInto(secret) // the caller sees the key as it now is
	return nil
}
