package apiserver_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

type repositoryAnswer struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	ProjectID int64  `json:"project_id"`
	GitURL    string `json:"git_url"`
	GitBranch string `json:"git_branch"`
	SSHKeyID  int64  `json:"ssh_key_id"`
}

type inventoryAnswer struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	ProjectID    int64  `json:"project_id"`
	Inventory    string `json:"inventory"`
	SSHKeyID     int64  `json:"ssh_key_id"`
	BecomeKeyID  *int64 `json:"become_key_id"`
	Type         string `json:"type"`
	RepositoryID *int64 `json:"repository_id"`
}

type environmentAnswer struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	ProjectID int64  `json:"project_id"`
	Password  string `json:"password"`
	JSON      string `json:"json"`
	Env       string `json:"env"`
	Secrets   []struct {
		ID        int64  `json:"id"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Secret    string `json:"secret"`
		Operation string `json:"operation"`
	} `json:"secrets"`
}

func TestRepositories_lifecycleWithIDsAndEvents(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Repositories")
	keyID, _ := seed.key("Deploy", "repo-pw")
	base := fmt.Sprintf("/api/project/%d/repositories", pid)

	b.must("POST", base, map[string]any{"name": "App", "git_url": "HTTPS://git.example/app.git", "git_branch": "main", "ssh_key_id": keyID}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "local", "git_url": "/srv/git/local", "ssh_key_id": keyID}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "scp", "git_url": "git@github.com:org/repo.git", "git_branch": "dev", "ssh_key_id": keyID}, http.StatusNoContent, nil)

	var list []repositoryAnswer
	b.must("GET", base, nil, http.StatusOK, &list)
	want := []repositoryAnswer{
		{1, "App", pid, "https://git.example/app.git", "main", keyID},
		{2, "local", pid, "/srv/git/local", "", keyID},
		{3, "scp", pid, "git@github.com:org/repo.git", "dev", keyID},
	}
	if !slices.Equal(list, want) {
		t.Fatalf("repositories = %+v\nwant %+v (the scheme in lower case)", list, want)
	}

	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "App2", "git_url": "ssh://git@git.example/app.git", "git_branch": "release", "ssh_key_id": keyID}, http.StatusNoContent, nil)
	var one repositoryAnswer
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one != (repositoryAnswer{1, "App2", pid, "ssh://git@git.example/app.git", "release", keyID}) {
		t.Fatalf("after PUT: %+v", one)
	}
	if code, data := b.call("PUT", base+"/1", map[string]any{"id": 2, "name": "x", "git_url": "/x", "ssh_key_id": keyID}); code != http.StatusBadRequest {
		t.Fatalf("PUT with another id in the body = %d %s", code, data)
	}

	var refs refsAnswer
	b.must("GET", base+"/1/refs", nil, http.StatusOK, &refs)
	if len(refs.Templates)+len(refs.Inventories)+len(refs.Schedules) != 0 {
		t.Fatalf("refs of an unused repository = %+v", refs)
	}
	b.must("DELETE", base+"/1", nil, http.StatusNoContent, nil)
	if code, _ := b.call("GET", base+"/1", nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted repository = %d", code)
	}
	if n := len(listOf[bastionv1.RepositoryList](t, seed)); n != 2 {
		t.Fatalf("%d Repositories in the cluster after a delete, want 2", n)
	}
	wantEvents := []string{
		"repository 1 Repository App created", "repository 2 Repository local created", "repository 3 Repository scp created",
		"repository 1 Repository App2 updated", "repository 1 Repository App2 deleted",
	}
	if events := projectEvents(t, e, pid); !slices.Equal(events, wantEvents) {
		t.Fatalf("events = %q\nwant %q", events, wantEvents)
	}
}

// listOf lists the objects of a kind in the seeder's namespace, straight
// from the apiserver.
func listOf[L any, PL interface {
	*L
	client.ObjectList
}](t *testing.T, s *resourceSeeder) []client.Object {
	t.Helper()
	list := PL(new(L))
	if err := s.e.K8s.List(t.Context(), list, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	items, err := metaItems(list)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestInventories_lifecycleWithIDsAndEvents(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Inventories")
	userKey, userKeyName := seed.key("User", "inv-pw")
	sudoKey, _ := seed.key("Sudo", "inv-sudo-pw")
	repoID, repoName := seed.repository("infra", userKeyName)
	base := fmt.Sprintf("/api/project/%d/inventory", pid)

	var created inventoryAnswer
	b.must("POST", base, map[string]any{"name": "Hosts", "type": "static", "inventory": "[web]\nweb1\n", "ssh_key_id": userKey, "become_key_id": sudoKey}, http.StatusCreated, &created)
	if created.ID != 1 || created.Name != "Hosts" || created.ProjectID != pid || created.SSHKeyID != userKey ||
		created.BecomeKeyID == nil || *created.BecomeKeyID != sudoKey || created.RepositoryID != nil || created.Inventory != "[web]\nweb1\n" {
		t.Fatalf("POST answered %+v", created)
	}
	b.must("POST", base, map[string]any{"name": "From git", "type": "file", "inventory": " hosts/prod.ini ", "ssh_key_id": userKey, "repository_id": repoID, "become_key_id": nil}, http.StatusCreated, &created)
	if created.ID != 2 || created.Inventory != "hosts/prod.ini" || created.BecomeKeyID != nil || created.RepositoryID == nil || *created.RepositoryID != repoID {
		t.Fatalf("POST of a file inventory answered %+v", created)
	}
	inv := &bastionv1.Inventory{}
	for _, obj := range listOf[bastionv1.InventoryList](t, seed) {
		if idOfObject(obj) == 2 {
			inv = obj.(*bastionv1.Inventory)
		}
	}
	if inv.Spec.RepositoryRef == nil || inv.Spec.RepositoryRef.Name != repoName || inv.Spec.Type != bastionv1.InventoryFile {
		t.Fatalf("the file inventory's spec is %+v", inv.Spec)
	}

	var list []inventoryAnswer
	b.must("GET", base, nil, http.StatusOK, &list)
	if len(list) != 2 || list[0].Name != "From git" || list[1].Name != "Hosts" {
		t.Fatalf("inventories = %+v, want From git and Hosts", list)
	}
	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "Hosts (yaml)", "type": "static-yaml", "inventory": "all: {}\n", "ssh_key_id": sudoKey}, http.StatusNoContent, nil)
	var one inventoryAnswer
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one.Name != "Hosts (yaml)" || one.Type != "static-yaml" || one.SSHKeyID != sudoKey || one.BecomeKeyID != nil {
		t.Fatalf("after PUT: %+v", one)
	}
	var refs refsAnswer
	b.must("GET", base+"/1/refs", nil, http.StatusOK, &refs)
	if len(refs.Templates) != 0 {
		t.Fatalf("refs of an unused inventory = %+v", refs)
	}
	b.must("DELETE", base+"/1", nil, http.StatusNoContent, nil)
	if code, _ := b.call("GET", base+"/1", nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted inventory = %d", code)
	}
	wantEvents := []string{
		"inventory 1 Inventory Hosts created", "inventory 2 Inventory From git created",
		"inventory 1 Inventory Hosts (yaml) updated", "inventory 1 Inventory Hosts (yaml) deleted",
	}
	if events := projectEvents(t, e, pid); !slices.Equal(events, wantEvents) {
		t.Fatalf("events = %q\nwant %q", events, wantEvents)
	}
}

func idOfObject(obj client.Object) int64 {
	var id int64
	fmt.Sscan(obj.GetLabels()[bastionv1.LabelID], &id)
	return id
}

func TestEnvironments_lifecycleWithSecretsIDsAndEvents(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Environments")
	base := fmt.Sprintf("/api/project/%d/environment", pid)

	b.must("POST", base, map[string]any{"name": "Prod", "json": `{"tier": "prod", "replicas": 3}`, "env": `{"REGION": "eu", "PORT": 8080, "DEBUG": false}`,
		"password": "vault-pw-lifecycle",
		"secrets": []map[string]any{
			{"type": "var", "name": "db_password", "secret": "db-secret-lifecycle", "operation": "create"},
			{"type": "env", "name": "API_TOKEN", "secret": "token-lifecycle", "operation": "create"},
		}}, http.StatusNoContent, nil)
	b.must("POST", base, map[string]any{"name": "Empty", "json": "", "env": ""}, http.StatusNoContent, nil)

	var list []environmentAnswer
	b.must("GET", base, nil, http.StatusOK, &list)
	if len(list) != 2 || list[0].Name != "Empty" || list[0].JSON != "{}" || list[0].Env != "{}" || len(list[0].Secrets) != 0 || list[0].Secrets == nil {
		t.Fatalf("environments = %+v", list)
	}
	prod := list[1]
	if prod.ID != 1 || prod.ProjectID != pid || prod.JSON != `{"replicas":3,"tier":"prod"}` || prod.Env != `{"DEBUG":"false","PORT":"8080","REGION":"eu"}` || prod.Password != "" {
		t.Fatalf("Prod = %+v", prod)
	}
	var names []string
	for _, s := range prod.Secrets {
		if s.Secret != "" || s.ID == 0 || s.Operation != "" {
			t.Fatalf("a read answers a secret as %+v", s)
		}
		names = append(names, s.Type+" "+s.Name)
	}
	if !slices.Equal(names, []string{"env API_TOKEN", "var db_password"}) {
		t.Fatalf("secrets = %q", names)
	}
	env := listOf[bastionv1.EnvironmentList](t, seed)[0].(*bastionv1.Environment)
	if env.Spec.DisplayName != "Prod" {
		env = listOf[bastionv1.EnvironmentList](t, seed)[1].(*bastionv1.Environment)
	}
	secretName := env.Spec.SecretRef.Name
	data := seed.secret(secretName).Data
	if string(data["var.db_password"]) != "db-secret-lifecycle" || string(data["env.API_TOKEN"]) != "token-lifecycle" || string(data["password"]) != "vault-pw-lifecycle" {
		t.Fatalf("the environment's Secret holds %v", keysOfData(data))
	}

	// Update: one secret gets a new value, one is deleted, one is created;
	// an item without an operation (as read) changes nothing, and an empty
	// password keeps the stored one.
	token, dbPassword := prod.Secrets[0], prod.Secrets[1]
	b.must("PUT", base+"/1", map[string]any{"id": 1, "name": "Production", "json": `{"tier":"production"}`, "env": "{}", "password": "",
		"secrets": []map[string]any{
			{"id": dbPassword.ID, "type": "var", "name": "db_password", "secret": "db-secret-2", "operation": "update"},
			{"id": token.ID, "operation": "delete"},
			{"type": "env", "name": "NEW_TOKEN", "secret": "new-token", "operation": "create"},
			{"id": 42, "type": "var", "name": "as read", "secret": ""},
		}}, http.StatusNoContent, nil)
	data = seed.secret(secretName).Data
	if string(data["var.db_password"]) != "db-secret-2" || string(data["env.NEW_TOKEN"]) != "new-token" || string(data["password"]) != "vault-pw-lifecycle" || len(data) != 3 {
		t.Fatalf("after PUT the Secret holds %v", keysOfData(data))
	}
	var one environmentAnswer
	b.must("GET", base+"/1", nil, http.StatusOK, &one)
	if one.Name != "Production" || one.JSON != `{"tier":"production"}` || one.Env != "{}" || len(one.Secrets) != 2 || one.Secrets[1].ID != dbPassword.ID {
		t.Fatalf("after PUT: %+v (a secret keeps its id while its name stays)", one)
	}

	var refs refsAnswer
	b.must("GET", base+"/1/refs", nil, http.StatusOK, &refs)
	if len(refs.Templates) != 0 {
		t.Fatalf("refs of an unused environment = %+v", refs)
	}
	b.must("DELETE", base+"/1", nil, http.StatusNoContent, nil)
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: seed.ns, Name: secretName}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the deleted environment's Secret: %v", err)
	}
	if code, _ := b.call("GET", base+"/1", nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted environment = %d", code)
	}
	wantEvents := []string{
		"environment 1 Environment Prod created", "environment 2 Environment Empty created",
		"environment 1 Environment Production updated", "environment 1 Environment Production deleted",
	}
	if events := projectEvents(t, e, pid); !slices.Equal(events, wantEvents) {
		t.Fatalf("events = %q\nwant %q", events, wantEvents)
	}
}

// TestResources_usedByATemplateCannotBeDeleted: a template made with
// kubectl (here, the client) holds its repository, environment, inventory
// and vault key; each delete answers 400 inUse, deletes nothing, and the
// refs list the template.
func TestResources_usedByATemplateCannotBeDeleted(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "In use")
	keyID, keyName := seed.key("Vault", "tpl-pw")
	repoID, repoName := seed.repository("app", keyName)
	envID, envName := seed.environment("prod")
	invID, invName := seed.inventory("hosts", keyName)
	tplID := seed.template("Deploy app", repoName, envName, invName, keyName)

	for _, path := range []string{
		fmt.Sprintf("/api/project/%d/repositories/%d", pid, repoID),
		fmt.Sprintf("/api/project/%d/environment/%d", pid, envID),
		fmt.Sprintf("/api/project/%d/inventory/%d", pid, invID),
		fmt.Sprintf("/api/project/%d/keys/%d", pid, keyID),
	} {
		before := seed.snapshot()
		code, data := b.call("DELETE", path, nil)
		var inUse struct {
			Error string `json:"error"`
			InUse bool   `json:"inUse"`
		}
		decodeInto(t, data, &inUse)
		if code != http.StatusBadRequest || !inUse.InUse || inUse.Error == "" {
			t.Errorf("DELETE %s = %d %s, want 400 with inUse", path, code, data)
		}
		if after := seed.snapshot(); after != before {
			t.Errorf("DELETE %s changed the cluster:\n%s\n→\n%s", path, before, after)
		}
		var refs refsAnswer
		b.must("GET", path+"/refs", nil, http.StatusOK, &refs)
		if len(refs.Templates) != 1 || refs.Templates[0] != (refAnswer{tplID, "Deploy app"}) {
			t.Errorf("refs of %s = %+v, want the template %d", path, refs, tplID)
		}
	}
}

// A schedule that checks a repository for new commits refers to it: the
// repository cannot be deleted under it, even when no template uses it.
func TestResources_repositoryWatchedByAScheduleCannotBeDeleted(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Watched")
	_, keyName := seed.key("None", "")
	_, usedName := seed.repository("used", keyName)
	watchedID, watchedName := seed.repository("watched", keyName)
	_, envName := seed.environment("prod")
	tpl := &bastionv1.Template{Spec: bastionv1.TemplateSpec{DisplayName: "Nightly", Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: usedName}, EnvironmentRef: bastionv1.ObjectRef{Name: envName}}}
	seed.create(tpl, ids.CounterTemplate)
	schID := seed.create(&bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{
		TemplateRef: bastionv1.ObjectRef{Name: tpl.Name}, CronFormat: "0 3 * * *", Active: true,
		RunOnlyOnNewCommit: true, RepositoryRef: &bastionv1.ObjectRef{Name: watchedName},
	}}, ids.CounterSchedule)

	path := fmt.Sprintf("/api/project/%d/repositories/%d", pid, watchedID)
	before := seed.snapshot()
	code, data := b.call("DELETE", path, nil)
	if code != http.StatusBadRequest || !strings.Contains(string(data), `"inUse":true`) {
		t.Fatalf("DELETE %s = %d %s, want 400 with inUse", path, code, data)
	}
	if after := seed.snapshot(); after != before {
		t.Errorf("the refused delete changed the cluster:\n%s\n→\n%s", before, after)
	}
	var refs refsAnswer
	b.must("GET", path+"/refs", nil, http.StatusOK, &refs)
	if len(refs.Schedules) != 1 || refs.Schedules[0].ID != schID || len(refs.Templates) != 0 {
		t.Errorf("refs = %+v, want only the schedule %d", refs, schID)
	}
}
