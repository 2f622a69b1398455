package controllers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The samples form one project; these name it and its namespace.
const (
	sampleProject   = "demo"
	sampleNamespace = "bastion-demo"
	samplesDir      = "../config/samples"
	// sampleWait bounds the waits on the Project controller.
	sampleWait = 30 * time.Second
)

// sampleObject is one YAML document of a sample file.
type sampleObject struct {
	file string
	obj  *unstructured.Unstructured
}

func (s sampleObject) String() string {
	return s.file + ": " + s.obj.GetKind() + " " + s.obj.GetName()
}

// sampleFiles are the *.yaml files of config/samples in the order
// `kubectl apply -f config/samples/` applies them (lexical).
func sampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no samples in " + samplesDir)
	}
	return files
}

// readSamples decodes every object of every sample file.
func readSamples(t *testing.T) []sampleObject {
	t.Helper()
	var all []sampleObject
	for _, file := range sampleFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := dec.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			all = append(all, sampleObject{file: filepath.Base(file), obj: obj})
		}
	}
	return all
}

// samplesOfKind decodes the samples of one kind into typed objects.
func samplesOfKind[T any](t *testing.T, samples []sampleObject, kind string) []*T {
	t.Helper()
	var out []*T
	for _, s := range samples {
		if s.obj.GetKind() != kind {
			continue
		}
		typed := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(s.obj.Object, typed, true); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out = append(out, typed)
	}
	return out
}

// applySamplesWithKubectl runs what config/samples/README.md tells a
// newcomer to run: the project, a wait until it is Ready, then the whole
// directory. Every step is idempotent, so any test may call it.
func applySamplesWithKubectl(t *testing.T, k *kubectlRunner) string {
	t.Helper()
	// One step, as a newcomer or a GitOps tool applies it.
	out := k.mustRun("apply", "-f", "config/samples/")
	k.mustRun("wait", "--for=condition=Ready", "project/"+sampleProject, "--timeout=60s")
	return out
}

// The kustomize file must list every sample, in the same order as the
// files apply, and `kubectl apply -f` on the directory must not read it.
func TestSamples_kustomizationListsEverySampleFile(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(filepath.Join(samplesDir, "Kustomization"))
	g.Expect(err).NotTo(HaveOccurred())
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	g.Expect(yaml.Unmarshal(data, &kustomization)).To(Succeed())

	var files []string
	for _, f := range sampleFiles(t) {
		files = append(files, filepath.Base(f))
	}
	g.Expect(kustomization.Resources).To(Equal(files))
	g.Expect(filepath.Join(samplesDir, "kustomization.yaml")).NotTo(BeAnExistingFile(),
		"kubectl apply -f config/samples/ would try to apply kustomization.yaml as an object")
}

// One sample of every Bastion kind, and keys of the types that can be
// committed: everything a small project needs.
func TestSamples_coverEveryKind(t *testing.T) {
	g := NewWithT(t)
	samples := readSamples(t)

	scheme := runtime.NewScheme()
	g.Expect(bastionv1.AddToScheme(scheme)).To(Succeed())
	want := map[string]bool{}
	ours := reflect.TypeOf(bastionv1.Project{}).PkgPath()
	for gvk, typ := range scheme.AllKnownTypes() {
		if typ.PkgPath() == ours && !strings.HasSuffix(gvk.Kind, "List") {
			want[gvk.Kind] = true
		}
	}
	g.Expect(want).To(HaveLen(11), "the kinds of spec §3")

	got := map[string]bool{}
	for _, s := range samples {
		got[s.obj.GetKind()] = true
		switch s.obj.GetKind() {
		case "Project", "User", "Namespace":
			g.Expect(s.obj.GetNamespace()).To(BeEmpty(), "%s is cluster-scoped", s)
		default:
			g.Expect(s.obj.GetNamespace()).To(Equal(sampleNamespace), "%s", s)
		}
	}
	for kind := range want {
		g.Expect(got).To(HaveKey(kind), "no sample of kind %s", kind)
	}

	projects := samplesOfKind[bastionv1.Project](t, samples, "Project")
	g.Expect(projects).To(HaveLen(1))
	g.Expect(projects[0].Name).To(Equal(sampleProject))
	g.Expect(sampleFiles(t)[0]).To(HaveSuffix("00-project.yaml"), "the project and its namespace apply first")

	// Keys: labelled with their type, named for the console, and no
	// private key anywhere.
	keyTypes := map[bastionv1.KeyType]int{}
	for _, secret := range samplesOfKind[corev1.Secret](t, samples, "Secret") {
		keyType := bastionv1.KeyType(secret.Labels[bastionv1.LabelKeyType])
		g.Expect(keyType).To(BeElementOf(bastionv1.KeyTypeSSH, bastionv1.KeyTypeLoginPassword, bastionv1.KeyTypeNone),
			"secret %s is not labelled as a key", secret.Name)
		g.Expect(secret.Annotations).To(HaveKeyWithValue(bastionv1.AnnotationDisplayName, Not(BeEmpty())), "secret %s", secret.Name)
		switch keyType {
		case bastionv1.KeyTypeLoginPassword:
			g.Expect(secret.Type).To(Equal(corev1.SecretTypeBasicAuth), "secret %s", secret.Name)
			g.Expect(secret.StringData).To(HaveKey(bastionv1.KeyPassword), "secret %s", secret.Name)
		case bastionv1.KeyTypeNone:
			g.Expect(secret.Type).To(Equal(corev1.SecretTypeOpaque), "secret %s", secret.Name)
		}
		g.Expect(secret.StringData).NotTo(HaveKey(bastionv1.KeyPrivateKey), "secret %s holds a private key", secret.Name)
		g.Expect(secret.Data).NotTo(HaveKey(bastionv1.KeyPrivateKey), "secret %s holds a private key", secret.Name)
		keyTypes[keyType]++
	}
	g.Expect(keyTypes).To(HaveKey(bastionv1.KeyTypeLoginPassword))
	g.Expect(keyTypes).To(HaveKey(bastionv1.KeyTypeNone))
	g.Expect(keyTypes).NotTo(HaveKey(bastionv1.KeyTypeSSH))
	for _, s := range samples {
		raw, err := yaml.Marshal(s.obj.Object)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(raw)).NotTo(ContainSubstring("PRIVATE KEY"), "%s", s)
	}

	// Templates: a plain task, a build, and a deploy with autorun.
	byType := map[bastionv1.TemplateType]*bastionv1.Template{}
	for _, tpl := range samplesOfKind[bastionv1.Template](t, samples, "Template") {
		byType[tpl.Spec.Type] = tpl
	}
	g.Expect(byType).To(HaveKey(bastionv1.TemplateTask))
	g.Expect(byType).To(HaveKey(bastionv1.TemplateBuild))
	g.Expect(byType).To(HaveKey(bastionv1.TemplateDeploy))
	g.Expect(byType[bastionv1.TemplateBuild].Spec.StartVersion).NotTo(BeEmpty())
	g.Expect(byType[bastionv1.TemplateDeploy].Spec.Autorun).To(BeTrue())
	g.Expect(byType[bastionv1.TemplateDeploy].Spec.BuildTemplateRef).To(HaveField("Name", byType[bastionv1.TemplateBuild].Name))

	// Repository: a public-looking https URL with a branch.
	for _, repo := range samplesOfKind[bastionv1.Repository](t, samples, "Repository") {
		g.Expect(repo.Spec.GitURL).To(HavePrefix("https://"))
		g.Expect(repo.Spec.GitBranch).NotTo(BeEmpty())
	}

	// Integration: a matcher and an extracted value.
	integrations := samplesOfKind[bastionv1.Integration](t, samples, "Integration")
	g.Expect(integrations).NotTo(BeEmpty())
	g.Expect(integrations[0].Spec.Matchers).NotTo(BeEmpty())
	g.Expect(integrations[0].Spec.ExtractValues).NotTo(BeEmpty())
}

// Every reference in the samples names a sample of the right kind, so the
// samples form one working project rather than a pile of objects.
func TestSamples_referencesResolve(t *testing.T) {
	g := NewWithT(t)
	samples := readSamples(t)
	exists := map[string]bool{} // "Kind/name"
	keys := map[string]bool{}
	for _, s := range samples {
		exists[s.obj.GetKind()+"/"+s.obj.GetName()] = true
		if s.obj.GetKind() == "Secret" && s.obj.GetLabels()[bastionv1.LabelKeyType] != "" {
			keys[s.obj.GetName()] = true
		}
	}
	users := map[string]bool{"admin": true} // bastion dev seeds admin
	for _, u := range samplesOfKind[bastionv1.User](t, samples, "User") {
		users[u.Name] = true
	}
	ref := func(kind string, r *bastionv1.ObjectRef, from string) {
		if r == nil {
			return
		}
		if kind == "Key" {
			g.Expect(keys).To(HaveKey(r.Name), "%s names the key %q, which is not a sample", from, r.Name)
			return
		}
		g.Expect(exists).To(HaveKey(kind+"/"+r.Name), "%s names the %s %q, which is not a sample", from, kind, r.Name)
	}

	for _, p := range samplesOfKind[bastionv1.Project](t, samples, "Project") {
		for _, m := range p.Spec.Members {
			g.Expect(users).To(HaveKey(m.User), "project %s: member %s", p.Name, m.User)
		}
	}
	for _, r := range samplesOfKind[bastionv1.Repository](t, samples, "Repository") {
		ref("Key", &r.Spec.SSHKeyRef, "repository "+r.Name)
	}
	for _, i := range samplesOfKind[bastionv1.Inventory](t, samples, "Inventory") {
		ref("Key", &i.Spec.SSHKeyRef, "inventory "+i.Name)
		ref("Key", i.Spec.BecomeKeyRef, "inventory "+i.Name)
		ref("Repository", i.Spec.RepositoryRef, "inventory "+i.Name)
	}
	for _, e := range samplesOfKind[bastionv1.Environment](t, samples, "Environment") {
		ref("Secret", e.Spec.SecretRef, "environment "+e.Name)
	}
	for _, tpl := range samplesOfKind[bastionv1.Template](t, samples, "Template") {
		from := "template " + tpl.Name
		ref("Repository", &tpl.Spec.RepositoryRef, from)
		ref("Environment", &tpl.Spec.EnvironmentRef, from)
		ref("Inventory", tpl.Spec.InventoryRef, from)
		ref("View", tpl.Spec.ViewRef, from)
		ref("Template", tpl.Spec.BuildTemplateRef, from)
		for i := range tpl.Spec.Vaults {
			ref("Key", &tpl.Spec.Vaults[i].KeyRef, from)
		}
	}
	for _, s := range samplesOfKind[bastionv1.Schedule](t, samples, "Schedule") {
		ref("Template", &s.Spec.TemplateRef, "schedule "+s.Name)
		ref("Repository", s.Spec.RepositoryRef, "schedule "+s.Name)
	}
	for _, task := range samplesOfKind[bastionv1.Task](t, samples, "Task") {
		from := "task " + task.Name
		ref("Template", &task.Spec.TemplateRef, from)
		ref("Inventory", task.Spec.InventoryRef, from)
		ref("Task", task.Spec.BuildTaskRef, from)
		ref("Schedule", task.Spec.ScheduleRef, from)
		ref("Integration", task.Spec.IntegrationRef, from)
	}
	for _, i := range samplesOfKind[bastionv1.Integration](t, samples, "Integration") {
		ref("Template", i.Spec.TemplateRef, "integration "+i.Name)
		ref("Key", i.Spec.AuthSecretRef, "integration "+i.Name)
	}
	for _, a := range samplesOfKind[bastionv1.IntegrationAlias](t, samples, "IntegrationAlias") {
		ref("Integration", a.Spec.IntegrationRef, "alias "+a.Name)
	}
}

// The samples are created for real through the API in their order: the
// namespace, labelled for the project, then the project, which adopts it;
// once its controller has, everything else.
// Server-side apply makes this independent of whether the kubectl test ran
// first.
func TestSamples_areAcceptedByTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	samples := readSamples(t)
	g.Expect(samples[0].obj.GetKind()).To(Equal("Namespace"))
	g.Expect(samples[1].obj.GetKind()).To(Equal("Project"))

	apply := func(s sampleObject) error {
		return k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(s.obj.DeepCopy()),
			client.FieldOwner("bastion-samples-test"), client.ForceOwnership)
	}
	g.Expect(apply(samples[0])).To(Succeed(), "%s", samples[0])
	g.Expect(apply(samples[1])).To(Succeed(), "%s", samples[1])
	g.Eventually(func(g Gomega) {
		ns := &corev1.Namespace{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: sampleNamespace}, ns)).To(Succeed())
		owner := metav1.GetControllerOf(ns)
		g.Expect(owner).NotTo(BeNil(), "namespace %s has no controller", sampleNamespace)
		g.Expect(owner.Kind).To(Equal("Project"))
		g.Expect(owner.Name).To(Equal(sampleProject))
	}, sampleWait, interval).Should(Succeed())

	for _, s := range samples[2:] {
		g.Expect(apply(s)).To(Succeed(), "%s", s)
	}
	for _, s := range samples {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(s.obj.GroupVersionKind())
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s.obj), got)).To(Succeed(), "%s", s)
	}
}

// What the README says works: the real kubectl applies the project, waits
// for it and applies the whole directory, then `kubectl apply -k` agrees.
func TestSamples_kubectlApplyOfTheDirectorySucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKubectl(t)
	out := applySamplesWithKubectl(t, k)

	samples := readSamples(t)
	for _, s := range samples {
		// kubectl names each object it applied: created, configured or
		// unchanged (when another test applied it first).
		g.Expect(out).To(MatchRegexp(`(?m)^`+strings.ToLower(s.obj.GetKind())+`(\.[a-z.]+)?/`+s.obj.GetName()+` (created|configured|unchanged)$`),
			"%s", s)
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(s.obj.GroupVersionKind())
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s.obj), got)).To(Succeed(), "%s", s)
	}

	// Applied in one step, no task failed for ordering: each starts.
	for _, task := range samplesOfKind[bastionv1.Task](t, samples, "Task") {
		g.Eventually(func(g Gomega) {
			got := &bastionv1.Task{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(task), got)).To(Succeed())
			g.Expect(got.Status.Status).To(Equal(bastionv1.TaskStarting), "task %s: %s", task.Name, got.Status.Message)
		}, sampleWait, interval).Should(Succeed())
	}

	// The same objects through the kustomize file: nothing to change.
	kout := k.mustRun("apply", "-k", "config/samples/")
	g.Expect(strings.Count(kout, "\n")).To(Equal(len(samples)), kout)
	g.Expect(kout).NotTo(ContainSubstring(" created"), "the kustomization names the same objects")

	// One file at a time works too, in any order once the project is Ready.
	for _, file := range sampleFiles(t) {
		k.mustRun("apply", "-f", "config/samples/"+filepath.Base(file))
	}
}

// Without the project, the namespaced samples are refused with a message
// that says what is missing, which the README explains.
func TestSamples_needTheProjectFirst(t *testing.T) {
	g := NewWithT(t)
	var repo *unstructured.Unstructured
	for _, s := range readSamples(t) {
		if s.obj.GetKind() == "Repository" {
			repo = s.obj.DeepCopy()
		}
	}
	g.Expect(repo).NotTo(BeNil())
	repo.SetNamespace("bastion-no-such-project")
	err := k8sClient.Create(context.Background(), repo)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`namespaces "bastion-no-such-project" not found`))
}
