package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// keyAnswer is a key as the API answers it.
type keyAnswer struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Type          string `json:"type"`
	ProjectID     int64  `json:"project_id"`
	LoginPassword struct {
		Login    string `json:"login"`
		Password string `json:"password"`
	} `json:"login_password"`
	SSH struct {
		Login      string `json:"login"`
		Passphrase string `json:"passphrase"`
		PrivateKey string `json:"private_key"`
	} `json:"ssh"`
	OverrideSecret bool `json:"override_secret"`
	Empty          bool `json:"empty"`
}

// refsAnswer is a …/refs answer.
type refsAnswer struct {
	Templates    []refAnswer `json:"templates"`
	Inventories  []refAnswer `json:"inventories"`
	Repositories []refAnswer `json:"repositories"`
	Schedules    []refAnswer `json:"schedules"`
}

type refAnswer struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// resourceProject is a fresh project owned by a fresh user: the owner's
// browser, the project's id and a seeder for it.
func resourceProject(t *testing.T, e *apiEnv, name string) (*browser, int64, *resourceSeeder) {
	t.Helper()
	owner, pw := e.newUser(t, "resowner", false)
	b := e.signIn(t, owner.Spec.Username, pw)
	pid := e.newProject(t, name, []bastionv1.ProjectMember{{User: owner.Name, Role: bastionv1.RoleOwner}}, b)
	return b, pid, seederFor(t, e, e.projectObject(t, pid))
}

// keySecret finds the Secret of the key with id.
func (s *resourceSeeder) keySecret(id int64) *corev1.Secret {
	s.t.Helper()
	list := &corev1.SecretList{}
	if err := s.e.K8s.List(s.t.Context(), list, client.InNamespace(s.ns), client.MatchingLabels{bastionv1.LabelID: itoa(id)}); err != nil || len(list.Items) != 1 {
		s.t.Fatalf("key %d: %v (%d Secrets)", id, err, len(list.Items))
	}
	return &list.Items[0]
}

// projectEvents are the descriptions of the project's events, oldest first.
func projectEvents(t *testing.T, e *apiEnv, pid int64) []string {
	t.Helper()
	events, err := e.Store.Events(t.Context(), []int64{pid}, 200)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events {
		out = append(out, fmt.Sprintf("%s %d %s", ev.ObjectType, ev.ObjectID, ev.Description))
	}
	slices.Reverse(out)
	return out
}

func TestKeys_lifecycleWithIDsAndEvents(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Keys")
	base := fmt.Sprintf("/api/project/%d/keys", pid)

	b.must("POST", base, map[string]any{"name": "Deploy", "type": "ssh", "ssh": map[string]string{"login": "git", "private_key": newPrivateKey(t, "")}}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "api login", "type": "login_password", "login_password": map[string]string{"login": "bot", "password": "pw-lifecycle"}}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "Nothing", "type": "none"}, http.StatusNoContent, nil)

	var list []keyAnswer
	b.must("GET", base, nil, http.StatusOK, &list)
	var got []string
	for _, k := range list {
		got = append(got, fmt.Sprintf("%d %s %s project=%d empty=%v", k.ID, k.Name, k.Type, k.ProjectID, k.Empty))
	}
	want := []string{
		fmt.Sprintf("2 api login login_password project=%d empty=false", pid),
		fmt.Sprintf("1 Deploy ssh project=%d empty=false", pid),
		fmt.Sprintf("3 Nothing none project=%d empty=true", pid),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("keys = %q\nwant %q (sorted by name, ids from 1)", got, want)
	}

	var one keyAnswer
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one.ID != 1 || one.Name != "Deploy" || one.Type != "ssh" {
		t.Fatalf("GET keys/1 = %+v", one)
	}
	if secret := seed.keySecret(1); secret.Type != corev1.SecretTypeSSHAuth || string(secret.Data[bastionv1.KeyLogin]) != "git" ||
		!strings.HasSuffix(string(secret.Data[bastionv1.KeyPrivateKey]), "\n") || secret.Annotations[bastionv1.AnnotationDisplayName] != "Deploy" {
		t.Fatalf("the ssh key's Secret is %s with keys %v and annotations %v", secret.Type, keysOfData(secret.Data), secret.Annotations)
	}
	if secret := seed.keySecret(2); secret.Type != corev1.SecretTypeBasicAuth || string(secret.Data[corev1.BasicAuthUsernameKey]) != "bot" {
		t.Fatalf("the login_password key's Secret is %s", secret.Type)
	}

	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "Deploy (renamed)", "type": "ssh"}, http.StatusNoContent, nil)
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one.Name != "Deploy (renamed)" || one.Empty {
		t.Fatalf("after rename: %+v", one)
	}

	var refs refsAnswer
	b.must("GET", base+"/1/refs", nil, http.StatusOK, &refs)
	if len(refs.Templates)+len(refs.Inventories)+len(refs.Repositories)+len(refs.Schedules) != 0 || refs.Templates == nil {
		t.Fatalf("refs of an unused key = %+v, want empty lists", refs)
	}

	name := seed.keySecret(1).Name
	b.must("DELETE", base+"/1", nil, http.StatusNoContent, nil)
	if code, data := b.call("GET", base+"/1", nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted key = %d %s", code, data)
	}
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: seed.ns, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the deleted key's Secret: %v", err)
	}
	b.must("GET", base, nil, http.StatusOK, &list)
	if len(list) != 2 {
		t.Fatalf("%d keys after a delete, want 2", len(list))
	}

	wantEvents := []string{
		"key 1 Key Deploy created", "key 2 Key api login created", "key 3 Key Nothing created",
		"key 1 Key Deploy (renamed) updated", "key 1 Key Deploy (renamed) deleted",
	}
	if events := projectEvents(t, e, pid); !slices.Equal(events, wantEvents) {
		t.Fatalf("events = %q\nwant %q", events, wantEvents)
	}
}

func keysOfData(data map[string][]byte) []string {
	var out []string
	for k := range data {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestKeys_readNeverReturnsSecretMaterial(t *testing.T) {
	e := startEnv(t)
	b, pid, _ := resourceProject(t, e, "Key reads")
	base := fmt.Sprintf("/api/project/%d/keys", pid)
	privateKey := newPrivateKey(t, "READ-passphrase-41d9")
	b.must("POST", base, map[string]any{"name": "ssh", "type": "ssh", "ssh": map[string]string{
		"login": "git", "passphrase": "READ-passphrase-41d9", "private_key": privateKey}}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "web", "type": "login_password", "login_password": map[string]string{
		"login": "bot", "password": "READ-password-77c1"}}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "none", "type": "none"}, http.StatusNoContent, nil)

	var raw [][]byte
	for _, path := range []string{base, base + "/1", base + "/2", base + "/3"} {
		code, data := b.call("GET", path, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, code, data)
		}
		raw = append(raw, data)
	}
	for i, data := range raw {
		for _, n := range needles(privateKey, "READ-passphrase-41d9", "READ-password-77c1") {
			if bytes.Contains(data, []byte(n)) {
				t.Errorf("answer %d holds secret material (%.10s…)", i, n)
			}
		}
	}
	var list []keyAnswer
	decodeInto(t, raw[0], &list)
	for _, k := range list {
		if k.SSH.PrivateKey != "" || k.SSH.Passphrase != "" || k.SSH.Login != "" || k.LoginPassword.Password != "" || k.LoginPassword.Login != "" {
			t.Errorf("key %s answers secret fields: %+v", k.Name, k)
		}
		if wantEmpty := k.Type == "none"; k.Empty != wantEmpty {
			t.Errorf("key %s: empty = %v, want %v", k.Name, k.Empty, wantEmpty)
		}
	}
	if len(list) != 3 {
		t.Fatalf("%d keys, want 3", len(list))
	}
}

func TestKeys_putWithoutOverrideKeepsTheSecretAndWithOverrideReplacesIt(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Key updates")
	base := fmt.Sprintf("/api/project/%d/keys", pid)
	b.must("POST", base, map[string]any{"name": "web", "type": "login_password", "login_password": map[string]string{
		"login": "bot", "password": "first-password"}}, http.StatusNoContent, nil)
	name := seed.keySecret(1).Name

	// Without override_secret, a new type and new secret fields are ignored:
	// only the name changes.
	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "web (renamed)", "type": "ssh", "override_secret": false,
		"login_password": map[string]string{"login": "other", "password": "ignored-password"}}, http.StatusNoContent, nil)
	secret := seed.keySecret(1)
	if string(secret.Data[corev1.BasicAuthPasswordKey]) != "first-password" || string(secret.Data[corev1.BasicAuthUsernameKey]) != "bot" ||
		secret.Type != corev1.SecretTypeBasicAuth || secret.Labels[bastionv1.LabelKeyType] != "login_password" ||
		secret.Annotations[bastionv1.AnnotationDisplayName] != "web (renamed)" {
		t.Fatalf("after a PUT without override: type %s, label %s, annotation %q, keys %v",
			secret.Type, secret.Labels[bastionv1.LabelKeyType], secret.Annotations[bastionv1.AnnotationDisplayName], keysOfData(secret.Data))
	}

	// With override_secret, the same type: the data is replaced in place.
	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "web", "type": "login_password", "override_secret": true,
		"login_password": map[string]string{"login": "bot2", "password": "second-password"}}, http.StatusNoContent, nil)
	secret = seed.keySecret(1)
	if string(secret.Data[corev1.BasicAuthPasswordKey]) != "second-password" || string(secret.Data[corev1.BasicAuthUsernameKey]) != "bot2" || secret.Name != name {
		t.Fatalf("after an override: Secret %s with login %q", secret.Name, secret.Data[corev1.BasicAuthUsernameKey])
	}

	// With override_secret and another type: a new Secret of the new type,
	// with the same name and id, so references still hold.
	privateKey := newPrivateKey(t, "")
	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "web", "type": "ssh", "override_secret": true,
		"ssh": map[string]string{"private_key": privateKey}}, http.StatusNoContent, nil)
	secret = seed.keySecret(1)
	if secret.Name != name || secret.Type != corev1.SecretTypeSSHAuth || secret.Labels[bastionv1.LabelKeyType] != "ssh" ||
		string(secret.Data[bastionv1.KeyPrivateKey]) != privateKey || len(secret.Data) != 1 {
		t.Fatalf("after a change of type: Secret %s of type %s, label %s, keys %v", secret.Name, secret.Type, secret.Labels[bastionv1.LabelKeyType], keysOfData(secret.Data))
	}
	var one keyAnswer
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one.Type != "ssh" || one.Empty || one.ID != 1 {
		t.Fatalf("GET after a change of type = %+v", one)
	}
}

func TestKeys_unparsablePrivateKeyIsRefusedWithoutEchoingIt(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Bad keys")
	base := fmt.Sprintf("/api/project/%d/keys", pid)
	good := newPrivateKey(t, "")
	encrypted := newPrivateKey(t, "right-passphrase-0a1b")
	for _, tc := range []struct {
		name       string
		key        string
		passphrase string
		msg        string
	}{
		{"not a key", "-----BEGIN OPENSSH PRIVATE KEY-----\nNOT-A-KEY-canary-5e6f7a8b9c\n-----END OPENSSH PRIVATE KEY-----\n", "", "The private key could not be read"},
		{"a public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPUBLICKEYcanary0123456789 me@host", "", "The private key could not be read"},
		{"half a key", good[:len(good)/2], "", "The private key could not be read"},
		{"encrypted, no passphrase", encrypted, "", "The private key is encrypted: its passphrase is required"},
		{"encrypted, wrong passphrase", encrypted, "wrong-passphrase-3c4d", "The passphrase does not decrypt the private key"},
	} {
		before := seed.snapshot()
		code, data := b.call("POST", base, map[string]any{"name": "k", "type": "ssh", "ssh": map[string]string{"private_key": tc.key, "passphrase": tc.passphrase}})
		if code != http.StatusBadRequest || !strings.HasPrefix(errorOf(t, data), tc.msg) {
			t.Errorf("%s: POST = %d %s, want 400 %q", tc.name, code, data, tc.msg)
		}
		for _, n := range needles(tc.key, tc.passphrase) {
			if bytes.Contains(data, []byte(n)) || strings.Contains(e.Log.String(), n) {
				t.Errorf("%s: the answer or the log repeats the key (%.10s…)", tc.name, n)
			}
		}
		if after := seed.snapshot(); after != before {
			t.Errorf("%s: a refused key changed the cluster:\n%s\n→\n%s", tc.name, before, after)
		}
	}
	// The right passphrase is accepted.
	b.must("POST", base, map[string]any{"name": "k", "type": "ssh", "ssh": map[string]string{"private_key": encrypted, "passphrase": "right-passphrase-0a1b"}}, http.StatusNoContent, nil)
}

func TestKeys_usedByARepositoryAndAnInventoryCannotBeDeleted(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Keys in use")
	keyID, keyName := seed.key("Deploy", "in-use-pw")
	repoID, _ := seed.repository("app", keyName)
	invID, _ := seed.inventory("hosts", keyName)
	path := fmt.Sprintf("/api/project/%d/keys/%d", pid, keyID)

	before := seed.snapshot()
	code, data := b.call("DELETE", path, nil)
	var inUse struct {
		Error string `json:"error"`
		InUse bool   `json:"inUse"`
	}
	decodeInto(t, data, &inUse)
	if code != http.StatusBadRequest || !inUse.InUse || inUse.Error == "" {
		t.Fatalf("DELETE a key in use = %d %s, want 400 with inUse", code, data)
	}
	if after := seed.snapshot(); after != before {
		t.Fatalf("a refused delete changed the cluster:\n%s\n→\n%s", before, after)
	}

	var refs refsAnswer
	b.must("GET", path+"/refs", nil, http.StatusOK, &refs)
	if len(refs.Repositories) != 1 || refs.Repositories[0] != (refAnswer{repoID, "app"}) ||
		len(refs.Inventories) != 1 || refs.Inventories[0] != (refAnswer{invID, "hosts"}) || len(refs.Templates) != 0 {
		t.Fatalf("refs = %+v, want the repository %d and the inventory %d", refs, repoID, invID)
	}
}
