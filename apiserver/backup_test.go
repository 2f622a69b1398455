package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// fillForBackup puts one object of each kind a template needs into the
// project, straight into the cluster.
func fillForBackup(t *testing.T, e *apiEnv, project *bastionv1.Project) {
	t.Helper()
	ns := bastionv1.ProjectNamespace(project.Name)
	m := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	key := &corev1.Secret{ObjectMeta: m("deploy-key"), Type: corev1.SecretTypeBasicAuth,
		StringData: map[string]string{"username": "deploy", "password": "BACKUP-CANARY-pw"}}
	key.Labels = map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeLoginPassword)}
	key.Annotations = map[string]string{bastionv1.AnnotationDisplayName: "Deploy key"}
	objs := []client.Object{
		key,
		&bastionv1.Repository{ObjectMeta: m("app"), Spec: bastionv1.RepositorySpec{DisplayName: "App", GitURL: "https://git.example/app.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "deploy-key"}}},
		&bastionv1.Environment{ObjectMeta: m("prod"), Spec: bastionv1.EnvironmentSpec{DisplayName: "Prod", ExtraVars: &apiextensionsv1.JSON{Raw: []byte(`{"tier":"prod"}`)}, Env: map[string]string{"REGION": "eu"}}},
		&bastionv1.Inventory{ObjectMeta: m("hosts"), Spec: bastionv1.InventorySpec{DisplayName: "Hosts", Type: bastionv1.InventoryStatic, Inventory: "web1\n", SSHKeyRef: bastionv1.ObjectRef{Name: "deploy-key"}}},
		&bastionv1.View{ObjectMeta: m("ops"), Spec: bastionv1.ViewSpec{Title: "Ops", Position: 1}},
		&bastionv1.Template{ObjectMeta: m("site"), Spec: bastionv1.TemplateSpec{DisplayName: "Site", App: bastionv1.AppAnsible, Playbook: "site.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: "app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"},
			InventoryRef: &bastionv1.ObjectRef{Name: "hosts"}, ViewRef: &bastionv1.ObjectRef{Name: "ops"}, Arguments: []string{"-v"}}},
		&bastionv1.Schedule{ObjectMeta: m("nightly"), Spec: bastionv1.ScheduleSpec{DisplayName: "Nightly", TemplateRef: bastionv1.ObjectRef{Name: "site"}, CronFormat: "0 3 * * *", Active: true}},
	}
	for _, o := range objs {
		if err := e.K8s.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

func TestBackup_downloadThenRestoreReproducesTheProject(t *testing.T) {
	e := startEnv(t)
	owner, pw := e.newUser(t, "backupowner", false)
	ob := e.signIn(t, owner.Spec.Username, pw)
	pid := e.newProject(t, "Backed up", []bastionv1.ProjectMember{{User: owner.Name, Role: bastionv1.RoleOwner}}, ob)
	fillForBackup(t, e, e.projectObject(t, pid))

	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/project/%d/backup", e.URL, pid), nil)
	resp, err := ob.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	original, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	disposition := resp.Header.Get("Content-Disposition")
	if resp.StatusCode != http.StatusOK || !strings.Contains(disposition, fmt.Sprintf("backup-project-%d-", pid)) || !strings.Contains(disposition, "attachment") {
		t.Fatalf("backup = %d, Content-Disposition %q", resp.StatusCode, disposition)
	}
	if bytes.Contains(original, []byte("BACKUP-CANARY-pw")) {
		t.Fatal("the backup contains a key's password")
	}

	// Only users who may create projects restore.
	if code, _ := ob.call("POST", "/api/projects/restore", original); code != http.StatusForbidden {
		t.Fatalf("restore without can_create_project = %d", code)
	}
	adminUser, apw := e.newUser(t, "backupadmin", true)
	a := e.signIn(t, adminUser.Spec.Username, apw)
	var first, second apiProject
	a.must("POST", "/api/projects/restore", original, http.StatusOK, &first)
	a.must("POST", "/api/projects/restore", original, http.StatusOK, &second)
	if first.ID == 0 || second.ID == 0 || first.ID == second.ID || first.ID == pid || first.Name != "Backed up" {
		t.Fatalf("restores = %+v and %+v; want two new projects named like the original", first, second)
	}

	// The restored project's backup is the original's, field by field.
	var restored []byte
	a.must("GET", fmt.Sprintf("/api/project/%d/backup", first.ID), nil, http.StatusOK, nil)
	_, restored = a.call("GET", fmt.Sprintf("/api/project/%d/backup", first.ID), nil)
	var want, got map[string]any
	if err := json.Unmarshal(original, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(restored, &got); err != nil {
		t.Fatal(err)
	}
	for key := range want {
		w, _ := json.Marshal(want[key])
		g, _ := json.Marshal(got[key])
		if string(w) != string(g) {
			t.Errorf("restored %s = %s\nwant %s", key, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("restored backup has keys %v, want %v", keysOf(got), keysOf(want))
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBackup_hostileFilesAre400AndCreateNothing(t *testing.T) {
	e := startEnv(t)
	adminUser, apw := e.newUser(t, "hostile", true)
	a := e.signIn(t, adminUser.Spec.Username, apw)
	junk := bytes.Repeat([]byte("A"), 10<<20)
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"wrong types", []byte(`{"meta":{"name":5}}`), "invalid backup"},
		{"not JSON", []byte(`this is not a backup`), "invalid backup"},
		{"10 MB of junk", junk, "larger than 5 MiB"},
		{"dangling name", []byte(`{"meta":{"name":"X"},"templates":[{"name":"T","playbook":"p.yml","repository":"nope","environment":"nope","app":"ansible"}],"repositories":[],"keys":[],"views":[],"inventories":[],"environments":[],"integrations":[],"integration_aliases":[]}`), "is not in the backup"},
		{"duplicate names", []byte(`{"meta":{"name":"X"},"templates":[],"repositories":[],"keys":[{"name":"k","type":"none"},{"name":"k","type":"none"}],"views":[],"inventories":[],"environments":[],"integrations":[],"integration_aliases":[]}`), "k"},
	} {
		_, before := e.counts(t)
		code, data := a.call("POST", "/api/projects/restore", tc.body)
		if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), tc.msg) {
			t.Errorf("%s: restore = %d %.300s, want 400 containing %q", tc.name, code, data, tc.msg)
		}
		if _, after := e.counts(t); after != before {
			t.Errorf("%s: projects %d → %d", tc.name, before, after)
		}
	}
}
