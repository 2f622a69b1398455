// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;create

// Package users creates console users and sets their passwords. A User is a
// cluster-scoped resource; its bcrypt password hash lives in a Secret in the
// manager's namespace so that reading Users never exposes it. The `bastion
// user` command, `bastion dev` and (later) the API all go through here.
package users

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"golang.org/x/crypto/bcrypt"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// PasswordHashKey is the key of the password hash in a user's Secret.
const PasswordHashKey = "passwordHash"

// ErrNotFound means no user has the given login.
var ErrNotFound = errors.New("user not found")

// ErrTaken means another user already has the username or email.
var ErrTaken = errors.New("already taken")

// ValidationError is a docs/features.md §5 message about the input ("Name is
// required"); the API answers it with 400 as it is.
type ValidationError struct{ Message string }

func (e *ValidationError) Error() string { return e.Message }

func invalid(msg string) error { return &ValidationError{Message: msg} }

// Store reads and writes users through a Kubernetes client.
type Store struct {
	// Client reads Users and writes Users and Secrets. Password Secrets
	// are always read with it too, so it must not serve Secrets from a
	// cache (that would keep every Secret of the cluster in memory).
	Client client.Client
	// Namespace holds the password Secrets (the manager's namespace).
	Namespace string
	// IDs stamps a new user's id at creation, so the API can answer with
	// it at once; nil leaves the id to the User controller.
	IDs *ids.Allocator
	// Now is the clock of the password-change mark; nil is time.Now.
	Now func() time.Time
}

// List returns every user, sorted by username.
func (s *Store) List(ctx context.Context) ([]bastionv1.User, error) {
	list := &bastionv1.UserList{}
	if err := s.Client.List(ctx, list); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Spec.Username < list.Items[j].Spec.Username })
	return list.Items, nil
}

// FindByLogin returns the user whose username or email equals login. A
// login that names two users (one's username, another's email: only a
// User written with kubectl can do that, the API refuses it) names
// nobody, so it can never sign in as the wrong one.
func (s *Store) FindByLogin(ctx context.Context, login string) (*bastionv1.User, error) {
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var found *bastionv1.User
	for i := range all {
		if all[i].Spec.Username == login || strings.EqualFold(all[i].Spec.Email, login) {
			if found != nil {
				return nil, fmt.Errorf("%w: %q names more than one user", ErrNotFound, login)
			}
			found = &all[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, login)
	}
	return found, nil
}

// Create adds a user with the given password. It refuses a username or
// email that is already taken.
func (s *Store) Create(ctx context.Context, spec bastionv1.UserSpec, password string) (*bastionv1.User, error) {
	if err := validate(spec, password); err != nil {
		return nil, err
	}
	if err := s.CheckUnique(ctx, spec, ""); err != nil {
		return nil, err
	}

	user := &bastionv1.User{Spec: spec}
	if s.IDs != nil {
		// The counter lives in the manager's namespace, which a fresh
		// cluster may not have yet.
		if err := s.ensureNamespace(ctx); err != nil {
			return nil, err
		}
		id, err := s.IDs.Next(ctx, s.Namespace, ids.CounterUser)
		if err != nil {
			return nil, err
		}
		user.Labels = map[string]string{bastionv1.LabelID: ids.Format(id)}
	}
	// Use the username as the object name when it is a valid one, so that
	// `kubectl get user admin` works; otherwise let the server pick.
	if len(validation.IsDNS1123Subdomain(spec.Username)) == 0 {
		user.Name = spec.Username
	} else {
		user.GenerateName = "user-"
	}
	if err := s.Client.Create(ctx, user); err != nil {
		return nil, err
	}
	if err := s.SetPassword(ctx, user, password); err != nil {
		// A user without a password could never sign in; don't leave one.
		_ = s.Client.Delete(ctx, user)
		return nil, err
	}
	return user, nil
}

// CreateExternal adds a user who signs in through a single sign-on
// provider: no password, and annotations that link it to its identity.
func (s *Store) CreateExternal(ctx context.Context, spec bastionv1.UserSpec, annotations map[string]string) (*bastionv1.User, error) {
	spec.External = true
	if err := ValidateSpec(spec); err != nil {
		return nil, err
	}
	if err := s.CheckUnique(ctx, spec, ""); err != nil {
		return nil, err
	}
	user := &bastionv1.User{Spec: spec}
	user.Annotations = annotations
	user.GenerateName = "sso-"
	if s.IDs != nil {
		if err := s.ensureNamespace(ctx); err != nil {
			return nil, err
		}
		id, err := s.IDs.Next(ctx, s.Namespace, ids.CounterUser)
		if err != nil {
			return nil, err
		}
		user.Labels = map[string]string{bastionv1.LabelID: ids.Format(id)}
	}
	if err := s.Client.Create(ctx, user); err != nil {
		return nil, err
	}
	return user, nil
}

// SetPassword stores a new bcrypt hash of password for user.
func (s *Store) SetPassword(ctx context.Context, user *bastionv1.User, password string) error {
	if password == "" {
		return invalid("Password is required")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return fmt.Errorf("hashing the password: %w", err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: PasswordSecretName(user), Namespace: s.Namespace}}
	if err := s.ensureNamespace(ctx); err != nil {
		return err
	}
	_, err = controllerutil.CreateOrUpdate(ctx, s.Client, secret, func() error {
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[bastionv1.LabelUser] = user.Name
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = map[string][]byte{PasswordHashKey: hash}
		// Deleting the User deletes its password with it.
		return controllerutil.SetOwnerReference(user, secret, s.Client.Scheme())
	})
	if err != nil {
		// The error names the Secret, never its content.
		return fmt.Errorf("storing the password of %s: %w", user.Spec.Username, err)
	}
	// Sessions older than this mark are refused by the API, wherever the
	// password was changed: the console, or `bastion user change-by-login`,
	// which cannot reach the session store.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, AnnotationPasswordChanged, s.now().UTC().Format(time.RFC3339Nano))
	if err := s.Client.Patch(ctx, user, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("marking the password change of %s: %w", user.Spec.Username, err)
	}
	return nil
}

// AnnotationPasswordChanged on a User is when its password last changed.
const AnnotationPasswordChanged = "automation.bastion.dev/password-changed-at"

// PasswordChangedAt is when user's password last changed (zero if never
// recorded).
func PasswordChangedAt(user *bastionv1.User) time.Time {
	t, err := time.Parse(time.RFC3339Nano, user.Annotations[AnnotationPasswordChanged])
	if err != nil {
		return time.Time{}
	}
	return t
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// CheckPassword reports whether password is the user's password.
func (s *Store) CheckPassword(ctx context.Context, user *bastionv1.User, password string) (bool, error) {
	secret := &corev1.Secret{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: PasswordSecretName(user)}, secret)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bcrypt.CompareHashAndPassword(secret.Data[PasswordHashKey], []byte(password)) == nil, nil
}

func (s *Store) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}}
	if err := s.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", s.Namespace, err)
	}
	return nil
}

// PasswordSecretName is the name of the Secret that holds user's password.
func PasswordSecretName(user *bastionv1.User) string {
	return "bastion-user-" + user.Name
}

// validate applies docs/features.md §5 to a new user, with the spec's messages.
func validate(spec bastionv1.UserSpec, password string) error {
	if err := ValidateSpec(spec); err != nil {
		return err
	}
	if password == "" {
		return invalid("Password is required")
	}
	return nil
}

// ValidateSpec applies docs/features.md §5 to a user's fields, with the spec's messages.
func ValidateSpec(spec bastionv1.UserSpec) error {
	switch {
	case strings.TrimSpace(spec.Name) == "":
		return invalid("Name is required")
	case strings.TrimSpace(spec.Username) == "":
		return invalid("Username is required")
	case strings.TrimSpace(spec.Email) == "":
		return invalid("Email is required")
	}
	return nil
}

// CheckUnique refuses a username or email that a user other than self
// (a metadata.name; "" for a new user) already has, and a username that is
// another user's email or an email that is another's username: a login
// must name one user.
func (s *Store) CheckUnique(ctx context.Context, spec bastionv1.UserSpec, self string) error {
	all, err := s.List(ctx)
	if err != nil {
		return err
	}
	for _, u := range all {
		if u.Name == self {
			continue
		}
		if err := Clash(spec, u.Spec); err != nil {
			return err
		}
	}
	return nil
}

// Clash says why a user with spec cannot sit beside a user with other,
// or nil. Logins match usernames exactly and emails in any case
// (FindByLogin); a username and an email are compared in any case, so that
// no login can name both.
func Clash(spec, other bastionv1.UserSpec) error {
	switch {
	case spec.Username == other.Username:
		return fmt.Errorf("a user with username %q already exists: %w", spec.Username, ErrTaken)
	case strings.EqualFold(spec.Email, other.Email):
		return fmt.Errorf("a user with email %q already exists: %w", spec.Email, ErrTaken)
	case strings.EqualFold(spec.Username, other.Email):
		return invalid(fmt.Sprintf("the username %q is another user's email; a username may not equal another user's email", spec.Username))
	case strings.EqualFold(spec.Email, other.Username):
		return invalid(fmt.Sprintf("the email %q is another user's username; an email may not equal another user's username", spec.Email))
	}
	return nil
}

// FindByID returns the user whose id label is id.
func (s *Store) FindByID(ctx context.Context, id int64) (*bastionv1.User, error) {
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if got, ok := ids.FromLabels(&all[i]); ok && got == id {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("%w: id %d", ErrNotFound, id)
}

const passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// RandomPassword returns n random alphanumeric characters from crypto/rand.
func RandomPassword(n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(passwordAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		b[i] = passwordAlphabet[k.Int64()]
	}
	return string(b)
}
