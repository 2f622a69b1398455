package backup

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A reference by name must name one object, so namesakes are told apart;
// and a reference to nothing makes a file no restore could take, so the
// export says which objects to fix instead.
func TestExport_namesNamesakesApartAndRefusesDanglingReferences(t *testing.T) {
	ctx := context.Background()
	project, err := createProject(k8sClient)(ctx, bastionv1.ProjectSpec{DisplayName: "Namesakes"})
	if err != nil {
		t.Fatal(err)
	}
	ns := bastionv1.ProjectNamespace(project.Name)
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "key", Namespace: ns,
		Labels: map[string]string{bastionv1.LabelKeyType: "none"}}}
	repo := &bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Name: "repo", Namespace: ns},
		Spec: bastionv1.RepositorySpec{DisplayName: "Repo", GitURL: "/srv", SSHKeyRef: bastionv1.ObjectRef{Name: "key"}}}
	env := &bastionv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "env", Namespace: ns},
		Spec: bastionv1.EnvironmentSpec{DisplayName: "Env"}}
	template := func(name, display string, inventory *bastionv1.ObjectRef) *bastionv1.Template {
		return &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: bastionv1.TemplateSpec{
			DisplayName: display, Playbook: "site.yml", RepositoryRef: bastionv1.ObjectRef{Name: "repo"},
			EnvironmentRef: bastionv1.ObjectRef{Name: "env"}, InventoryRef: inventory}}
	}
	dangling := template("c-broken", "Broken", &bastionv1.ObjectRef{Name: "prod"})
	for _, obj := range []client.Object{key, repo, env,
		template("a-deploy", "Deploy", nil), template("b-deploy", "Deploy", nil), template("c-deploy-2", "Deploy (2)", nil), dangling,
	} {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	_, err = Export(ctx, k8sClient, project)
	if err == nil || !strings.Contains(err.Error(), `template "Broken": inventory "prod" does not exist`) {
		t.Fatalf("Export = %v, want it to name the dangling inventory", err)
	}

	if err := k8sClient.Delete(ctx, dangling); err != nil {
		t.Fatal(err)
	}
	b, err := Export(ctx, k8sClient, project)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tpl := range b.Templates {
		got = append(got, tpl.Name)
	}
	if want := "Deploy,Deploy (3),Deploy (2)"; strings.Join(got, ",") != want {
		t.Errorf("template names = %q, want %q", got, want)
	}
	if b.Keys[0].Name != "key" {
		t.Errorf("a key without a display name is called %q, want its metadata.name", b.Keys[0].Name)
	}
}

// A file of Semaphore's older layout has a template's cron and no
// schedules: the cron becomes an active schedule of that template.
func TestRestore_templateCronMakesAnActiveSchedule(t *testing.T) {
	ctx := context.Background()
	b, err := Parse([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	project, err := Restore(ctx, k8sClient, b, createProject(k8sClient))
	if err != nil {
		t.Fatal(err)
	}
	ns := bastionv1.ProjectNamespace(project.Name)
	var schedules bastionv1.ScheduleList
	if err := k8sClient.List(ctx, &schedules, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(schedules.Items) != 1 {
		t.Fatalf("%d schedules, want 1", len(schedules.Items))
	}
	s := schedules.Items[0]
	build := &bastionv1.Template{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Spec.TemplateRef.Name}, build); err != nil {
		t.Fatal(err)
	}
	if !s.Spec.Active || s.Spec.CronFormat != "0 3 * * *" || build.Spec.DisplayName != "Build" || !strings.HasPrefix(s.Name, "build-") {
		t.Errorf("schedule %s = %+v of template %q", s.Name, s.Spec, build.Spec.DisplayName)
	}

	again, err := Export(ctx, k8sClient, project)
	if err != nil {
		t.Fatal(err)
	}
	if again.Templates[0].Cron != "0 3 * * *" || len(again.Schedules) != 1 {
		t.Errorf("re-export: cron %q, schedules %+v", again.Templates[0].Cron, again.Schedules)
	}
	if env := again.Environments[0]; env.JSON != `{"port":80}` || env.Env != "{}" || len(env.Secrets) != 1 {
		t.Errorf("re-exported environment = %+v", env)
	}
}
