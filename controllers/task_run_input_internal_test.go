package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	metadatafake "k8s.io/client-go/metadata/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// The input handed to the launcher is only ever what this reconcile
// stored. When the Secret turns out to be an earlier reconcile's (its
// start failed, and the namespace's watch has not seen the Secret yet),
// the freshly minted token is not the stored one: handed over, the runner
// would present it and be refused on every batch. The launcher then reads
// the Secret.
func TestPrepareRun_handsOverOnlyTheInputItStored(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	mscheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(mscheme)

	ns := "ns"
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t1", UID: "uid-1"},
		Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "tpl"}}}
	tpl := &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"}}
	tpl.Spec.RepositoryRef = bastionv1.ObjectRef{Name: "repo"}
	tpl.Spec.EnvironmentRef = bastionv1.ObjectRef{Name: "env"}
	tpl.Spec.Playbook = "site.yml"
	repo := &bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "repo"}}
	repo.Spec.SSHKeyRef = bastionv1.ObjectRef{Name: "none"}
	env := &bastionv1.Environment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "env"}}
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "none",
		Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)}}}
	controller := true
	stored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: bastionv1.TaskInputSecretName(task),
		Labels: map[string]string{launch.LabelTask: task.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: bastionv1.GroupVersion.String(), Kind: "Task",
			Name: task.Name, UID: task.UID, Controller: &controller}}},
		Data: map[string][]byte{runspec.TaskFile: []byte("{}"), runspec.TokenFile: []byte("the-stored-token")}}

	for _, c := range []struct {
		name    string
		objects []runtime.Object
		want    bool // handed over
	}{
		{"the Secret is an earlier reconcile's", []runtime.Object{tpl, repo, env, key, stored}, false},
		{"this reconcile made the Secret", []runtime.Object{tpl, repo, env, key}, true},
	} {
		k8s := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(c.objects...).Build()
		// A namespace watch that has listed and seen no such Secret yet.
		watches := &SecretWatches{client: metadatafake.NewSimpleMetadataClient(mscheme), watching: map[string]*keyWatch{}}
		watchUntilListed(t, watches, ns)
		r := &TaskReconciler{Client: k8s, APIReader: k8s, Secrets: watches}
		run, err := r.prepareRun(t.Context(), task, launch.Run{Task: task, Name: "t1", InputSecret: stored.Name})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		handed := run.Input != nil
		if handed != c.want {
			t.Errorf("%s: input handed to the launcher %v, want %v", c.name, handed, c.want)
		}
		if !handed {
			continue
		}
		onFile := &corev1.Secret{}
		if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(stored), onFile); err != nil {
			t.Fatal(err)
		}
		if got, want := string(run.Input[runspec.TokenFile]), string(onFile.Data[runspec.TokenFile]); got != want || got == "" {
			t.Errorf("%s: the handed token is not the stored one", c.name)
		}
	}
}
