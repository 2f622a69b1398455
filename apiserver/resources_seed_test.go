package apiserver_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// resourceSeeder makes project resources straight in the cluster, not
// through the API under test, each with its id, and waits until the API's
// cache has them: the objects a test points the API at.
type resourceSeeder struct {
	t  *testing.T
	e  *apiEnv
	ns string
}

func seederFor(t *testing.T, e *apiEnv, project *bastionv1.Project) *resourceSeeder {
	return &resourceSeeder{t: t, e: e, ns: bastionv1.ProjectNamespace(project.Name)}
}

// create numbers obj from counter, creates it and returns its id.
func (s *resourceSeeder) create(obj client.Object, counter string) int64 {
	s.t.Helper()
	id, err := (&ids.Allocator{Client: s.e.K8s}).Next(s.t.Context(), s.ns, counter)
	if err != nil {
		s.t.Fatal(err)
	}
	obj.SetNamespace(s.ns)
	obj.SetGenerateName("seed-" + counter + "-")
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bastionv1.LabelID] = ids.Format(id)
	obj.SetLabels(labels)
	if err := s.e.K8s.Create(s.t.Context(), obj); err != nil {
		s.t.Fatalf("creating a %s: %v", counter, err)
	}
	s.waitCached(obj)
	s.waitReconciled(obj)
	return id
}

// waitReconciled polls until obj's controller has reported on it (Ready
// for its generation), so that its status write cannot land between two
// snapshots of a test. Keys have no status and pass at once.
func (s *resourceSeeder) waitReconciled(obj client.Object) {
	s.t.Helper()
	if _, reports := obj.(bastionv1.ReadyStatus); !reports {
		return
	}
	probe := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.e.K8s.Get(s.t.Context(), client.ObjectKeyFromObject(obj), probe)
		ready := meta.FindStatusCondition(*probe.(bastionv1.ReadyStatus).StatusConditions(), bastionv1.ConditionReady)
		if err == nil && ready != nil && ready.ObservedGeneration == probe.GetGeneration() {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s was never reconciled (err %v, Ready %v)", obj.GetName(), err, ready)
		}
		time.Sleep(10 * time.Millisecond) // polling a real controller
	}
}

// waitCached polls the API server's own cache until it holds obj (Secrets
// are not cached and are there at once).
func (s *resourceSeeder) waitCached(obj client.Object) {
	s.t.Helper()
	probe := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(10 * time.Second)
	for s.e.opts.Client.Get(s.t.Context(), client.ObjectKeyFromObject(obj), probe) != nil {
		if time.Now().After(deadline) {
			s.t.Fatalf("%s never reached the cache", obj.GetName())
		}
		time.Sleep(10 * time.Millisecond) // polling a real cache
	}
}

// key makes a login_password key holding password; it returns the id and
// the Secret's name.
func (s *resourceSeeder) key(name, password string) (int64, string) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeLoginPassword)},
			Annotations: map[string]string{bastionv1.AnnotationDisplayName: name},
		},
		Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{corev1.BasicAuthUsernameKey: []byte("deploy"), corev1.BasicAuthPasswordKey: []byte(password)},
	}
	return s.create(secret, ids.CounterKey), secret.Name
}

func (s *resourceSeeder) repository(name, keyName string) (int64, string) {
	repo := &bastionv1.Repository{Spec: bastionv1.RepositorySpec{
		DisplayName: name, GitURL: "https://git.example/" + name + ".git", GitBranch: "main",
		SSHKeyRef: bastionv1.ObjectRef{Name: keyName},
	}}
	return s.create(repo, ids.CounterRepository), repo.Name
}

func (s *resourceSeeder) inventory(name, keyName string) (int64, string) {
	inv := &bastionv1.Inventory{Spec: bastionv1.InventorySpec{
		DisplayName: name, Type: bastionv1.InventoryStatic, Inventory: "web1\n",
		SSHKeyRef: bastionv1.ObjectRef{Name: keyName},
	}}
	return s.create(inv, ids.CounterInventory), inv.Name
}

func (s *resourceSeeder) environment(name string) (int64, string) {
	env := &bastionv1.Environment{Spec: bastionv1.EnvironmentSpec{DisplayName: name, Env: map[string]string{"REGION": "eu"}}}
	return s.create(env, ids.CounterEnvironment), env.Name
}

// template makes a template that uses the named repository, environment,
// inventory (optional) and vault key (optional); it returns its id.
func (s *resourceSeeder) template(name, repo, env, inventory, vaultKey string) int64 {
	spec := bastionv1.TemplateSpec{
		DisplayName: name, App: bastionv1.AppAnsible, Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: repo}, EnvironmentRef: bastionv1.ObjectRef{Name: env},
	}
	if inventory != "" {
		spec.InventoryRef = &bastionv1.ObjectRef{Name: inventory}
	}
	if vaultKey != "" {
		spec.Vaults = []bastionv1.TemplateVault{{Name: "vault", KeyRef: bastionv1.ObjectRef{Name: vaultKey}}}
	}
	return s.create(&bastionv1.Template{Spec: spec}, ids.CounterTemplate)
}

// snapshot is every object of the kinds these routes write, in ns, with
// its resourceVersion: equal snapshots mean nothing was created, changed or
// deleted, and no id was taken (the counters are a ConfigMap).
func (s *resourceSeeder) snapshot() string {
	s.t.Helper()
	var lines []string
	for _, list := range []client.ObjectList{&corev1.SecretList{}, &corev1.ConfigMapList{}, &bastionv1.RepositoryList{}, &bastionv1.InventoryList{}, &bastionv1.EnvironmentList{}} {
		if err := s.e.K8s.List(s.t.Context(), list, client.InNamespace(s.ns)); err != nil {
			s.t.Fatal(err)
		}
		items, err := metaItems(list)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, obj := range items {
			lines = append(lines, fmt.Sprintf("%T %s %s", obj, obj.GetName(), obj.GetResourceVersion()))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func (s *resourceSeeder) secret(name string) *corev1.Secret {
	s.t.Helper()
	secret := &corev1.Secret{}
	if err := s.e.K8s.Get(s.t.Context(), client.ObjectKey{Namespace: s.ns, Name: name}, secret); err != nil {
		s.t.Fatalf("secret %s: %v", name, err)
	}
	return secret
}

// newPrivateKey is a fresh ed25519 private key in OpenSSH format, encrypted
// when passphrase is set.
func newPrivateKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test key")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test key", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

// needles are the pieces of secret to search for: a private key is
// searched line by line, since JSON and log lines escape its newlines.
func needles(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		for _, line := range strings.Split(s, "\n") {
			if len(line) >= 12 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// recorder is a browser that keeps every answer it got, for the canary.
type recorder struct {
	*browser
	answers *[]string
}

func (r recorder) call(method, path string, body any) (int, []byte) {
	r.t.Helper()
	code, data := r.browser.call(method, path, body)
	*r.answers = append(*r.answers, fmt.Sprintf("%s %s -> %d %s", method, path, code, data))
	return code, data
}

func (r recorder) must(method, path string, body any, want int, out any) {
	r.t.Helper()
	code, data := r.call(method, path, body)
	if code != want {
		r.t.Fatalf("%s %s = %d %s, want %d", method, path, code, data, want)
	}
	if out != nil {
		decodeInto(r.t, data, out)
	}
}

func metaItems(list client.ObjectList) ([]client.Object, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		out = append(out, item.(client.Object))
	}
	return out, nil
}

func decodeInto(t *testing.T, data []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

// haystacks is everything a secret must never reach: the answers given,
// the server's log, the stored events of projectIDs (nil: all) and the
// Kubernetes Events of namespace ns; and how many stored events there are.
func haystacks(t *testing.T, e *apiEnv, answers []string, projectIDs []int64, ns string) (map[string]string, int) {
	t.Helper()
	events, err := e.Store.Events(t.Context(), projectIDs, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, ev := range events {
		stored = append(stored, fmt.Sprintf("%+v", ev))
	}
	kubeEvents := &corev1.EventList{}
	if err := e.K8s.List(t.Context(), kubeEvents, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var kube []string
	for _, ev := range kubeEvents.Items {
		kube = append(kube, ev.Reason+" "+ev.Message)
	}
	return map[string]string{
		"answers":           strings.Join(answers, "\n"),
		"log":               e.Log.String(),
		"events":            strings.Join(stored, "\n"),
		"kubernetes events": strings.Join(kube, "\n"),
	}, len(events)
}

// assertNoSecret fails the test for every secret found in a haystack.
func assertNoSecret(t *testing.T, hay map[string]string, secrets []string) {
	t.Helper()
	for where, text := range hay {
		for _, n := range secrets {
			if strings.Contains(text, n) {
				t.Errorf("%s contain a secret (%.12s…)", where, n)
			}
		}
	}
}
