package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// TestCanary_everyReadRouteOfAProjectFullOfSecrets fills a project with
// every kind of secret the API takes (an ssh key with a passphrase, a
// password, an environment's password and secret values, a webhook's
// signing secret, an API token), uses them (a signed webhook starts a
// task), then calls every GET route of every permission matrix against that
// project, plus the backup, and searches every answer, the server's log,
// the stored events and the project's Kubernetes Events for the secrets.
func TestCanary_everyReadRouteOfAProjectFullOfSecrets(t *testing.T) {
	e := startEnv(t)
	ownerUser, ownerPW := e.newUser(t, "canaryowner", false)
	owner := e.signIn(t, ownerUser.Spec.Username, ownerPW)
	pid := e.newProject(t, "Canary routes", []bastionv1.ProjectMember{{User: ownerUser.Name, Role: bastionv1.RoleOwner}}, owner)
	project := e.projectObject(t, pid)
	var answers []string
	b := recorder{owner, &answers}
	p := fmt.Sprintf("/api/project/%d", pid)

	passphrase, password, webhookSecret := "CANARY-rt-passphrase-0c4e", "CANARY-rt-password-7b21", "CANARY-rt-webhook-93d0"
	envPassword, envVar, envEnv := "CANARY-rt-vault-5e6f", "CANARY-rt-var-18aa", "CANARY-rt-env-62cd"
	privateKey := newPrivateKey(t, passphrase)

	b.must("POST", p+"/keys", map[string]any{"name": "deploy", "type": "ssh", "ssh": map[string]string{"login": "git", "passphrase": passphrase, "private_key": privateKey}}, http.StatusNoContent, nil)
	b.must("POST", p+"/keys", map[string]any{"name": "web", "type": "login_password", "login_password": map[string]string{"login": "bot", "password": password}}, http.StatusNoContent, nil)
	b.must("POST", p+"/keys", map[string]any{"name": "hook", "type": "login_password", "login_password": map[string]string{"login": "github", "password": webhookSecret}}, http.StatusNoContent, nil)
	b.must("POST", p+"/repositories", map[string]any{"name": "app", "git_url": "git@git.example:app.git", "git_branch": "main", "ssh_key_id": 1}, http.StatusNoContent, nil)
	b.must("POST", p+"/inventory", map[string]any{"name": "hosts", "type": "static", "inventory": "web1", "ssh_key_id": 1, "become_key_id": 2}, http.StatusCreated, nil)
	b.must("POST", p+"/environment", map[string]any{"name": "prod", "json": "{}", "env": "{}", "password": envPassword, "secrets": []map[string]any{
		{"type": "var", "name": "db", "secret": envVar, "operation": "create"},
		{"type": "env", "name": "TOKEN", "secret": envEnv, "operation": "create"},
	}}, http.StatusNoContent, nil)
	var template struct {
		ID int64 `json:"id"`
	}
	b.must("POST", p+"/templates", map[string]any{"name": "Deploy", "playbook": "site.yml", "repository_id": 1, "inventory_id": 1,
		"environment_id": 1, "vaults": []map[string]any{{"vault_key_id": 2, "name": "prod"}}}, http.StatusCreated, &template)
	var integration struct {
		ID int64 `json:"id"`
	}
	b.must("POST", p+"/integrations", map[string]any{"name": "push", "template_id": template.ID, "auth_method": "github", "auth_secret_id": 3}, http.StatusCreated, &integration)
	var alias struct {
		URL string `json:"url"`
	}
	b.must("POST", fmt.Sprintf("%s/integrations/%d/aliases", p, integration.ID), nil, http.StatusCreated, &alias)

	// A push signed with the secret starts a task; a forged one does not.
	body := []byte(`{"ref":"refs/heads/main"}`)
	for sig, want := range map[string]int{"sha256=" + hmacHex(webhookSecret, body): http.StatusNoContent, "sha256=00": http.StatusUnauthorized} {
		if code, data := deliver(t, alias.URL, body, map[string]string{"X-Hub-Signature-256": sig}); code != want {
			t.Fatalf("webhook with signature %.12s… = %d %s, want %d", sig, code, data, want)
		}
	}

	// An API token: its secret is answered once, on creation, and never again.
	var token struct {
		ID string `json:"id"`
	}
	owner.must("POST", "/api/user/tokens", nil, http.StatusCreated, &token)
	if len(token.ID) < 16 {
		t.Fatalf("token %q is too short to be a secret", token.ID)
	}
	bearer := e.browser(t)
	bearer.header.Set("Authorization", "Bearer "+token.ID)
	bearer.must("GET", "/api/user", nil, http.StatusOK, nil)

	// Every GET route of every matrix, against this project.
	called := map[string]bool{}
	for _, table := range [][]matrixRow{matrix, resourcesMatrix, templatesMatrix, schedintMatrix} {
		for _, row := range table {
			if row.method != "GET" || strings.Contains(row.path, "{target}") {
				continue // {target} rows read another user: no project secrets there
			}
			replace := []string{"{project}", itoa(pid), "{self}", itoa(userIDOf(t, ownerUser))}
			if row.setup != nil {
				for k, v := range row.setup(t, e, project) {
					replace = append(replace, "{"+k+"}", v)
				}
			}
			path := strings.NewReplacer(replace...).Replace(row.path)
			if strings.Contains(path, "{") {
				t.Fatalf("route %s has a placeholder this test does not fill: %s", row.path, path)
			}
			// Every read must answer, or the search below proves nothing.
			if code, data := b.call("GET", path, nil); code != http.StatusOK {
				t.Errorf("GET %s = %d %s", path, code, data)
			}
			called[row.path] = true
		}
	}
	b.must("GET", p+"/backup", nil, http.StatusOK, nil)
	recorder{bearer, &answers}.call("GET", "/api/user/tokens", nil)
	if len(called) < 40 {
		t.Fatalf("only %d GET routes were called", len(called))
	}

	hay, events := haystacks(t, e, answers, nil, bastionv1.ProjectNamespace(project.Name))
	assertNoSecret(t, hay, needles(privateKey, passphrase, password, webhookSecret, envPassword, envVar, envEnv, token.ID))
	t.Logf("searched %d answers of %d GET routes, %d events, %d bytes of log", len(answers), len(called), events, len(hay["log"]))
}
