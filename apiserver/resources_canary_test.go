package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestResources_canarySecretsNeverInAnswersLogsOrEvents walks the whole
// life of keys and environments with distinctive secrets (create, read,
// rename, override, change of type, refused input that carries secrets,
// references, delete), then searches every answer, everything the server
// and the reconcilers logged, every stored event and every Kubernetes
// Event of the project for them.
func TestResources_canarySecretsNeverInAnswersLogsOrEvents(t *testing.T) {
	e := startEnv(t)
	owner, pid, seed := resourceProject(t, e, "Canary")
	var answers []string
	b := recorder{owner, &answers}
	passphrase := "CANARY-passphrase-8e1f"
	sshKey := newPrivateKey(t, passphrase)
	secondKey := newPrivateKey(t, "")
	canaries := []string{
		sshKey, secondKey, passphrase, "CANARY-key-password-2b7d", "CANARY-override-password-6a0c",
		"CANARY-vault-password-91fe", "CANARY-db-secret-44aa", "CANARY-token-5c3e", "CANARY-updated-db-secret-7d2b",
		"CANARY-wrong-passphrase-1f9a", "CANARY-garbage-key-3b8c",
	}
	p := fmt.Sprintf("/api/project/%d", pid)

	// Keys: every type, reads, a rename, an override, a change of type.
	b.must("POST", p+"/keys", map[string]any{"name": "ssh", "type": "ssh", "ssh": map[string]string{"login": "git", "passphrase": passphrase, "private_key": sshKey}}, http.StatusNoContent, nil)
	b.must("POST", p+"/keys", map[string]any{"name": "web", "type": "login_password", "login_password": map[string]string{"login": "bot", "password": canaries[3]}}, http.StatusNoContent, nil)
	b.must("GET", p+"/keys", nil, http.StatusOK, nil)
	b.must("GET", p+"/keys/1", nil, http.StatusOK, nil)
	b.must("PUT", p+"/keys/2", map[string]any{"id": 2, "name": "web2", "type": "login_password", "login_password": map[string]string{"password": canaries[4]}}, http.StatusNoContent, nil)
	b.must("PUT", p+"/keys/2", map[string]any{"id": 2, "name": "web2", "type": "login_password", "override_secret": true, "login_password": map[string]string{"login": "bot", "password": canaries[4]}}, http.StatusNoContent, nil)
	b.must("PUT", p+"/keys/2", map[string]any{"id": 2, "name": "web2", "type": "ssh", "override_secret": true, "ssh": map[string]string{"private_key": secondKey}}, http.StatusNoContent, nil)
	b.must("GET", p+"/keys/2", nil, http.StatusOK, nil)
	// Refused input that carries secrets.
	b.must("POST", p+"/keys", map[string]any{"name": "bad", "type": "ssh", "ssh": map[string]string{"passphrase": canaries[9], "private_key": sshKey}}, http.StatusBadRequest, nil)
	b.must("POST", p+"/keys", map[string]any{"name": "bad", "type": "ssh", "ssh": map[string]string{"private_key": canaries[10]}}, http.StatusBadRequest, nil)
	b.must("POST", p+"/keys", []byte(`{"name":"bad","type":"login_password","login_password":{"password":"`+canaries[3]+`"},`), http.StatusBadRequest, nil)
	b.must("POST", p+"/keys", []byte(`{"name":"bad","type":"login_password","login_password":{"password":5,"login":"`+canaries[3]+`"}}`), http.StatusBadRequest, nil)

	// A repository and an inventory use the keys; deleting one is refused.
	b.must("POST", p+"/repositories", map[string]any{"name": "app", "git_url": "git@git.example:app.git", "git_branch": "main", "ssh_key_id": 1}, http.StatusNoContent, nil)
	b.must("POST", p+"/inventory", map[string]any{"name": "hosts", "type": "static", "inventory": "web1", "ssh_key_id": 1, "become_key_id": 2}, http.StatusCreated, nil)
	b.must("DELETE", p+"/keys/1", nil, http.StatusBadRequest, nil)
	b.must("GET", p+"/keys/1/refs", nil, http.StatusOK, nil)
	b.must("GET", p+"/repositories", nil, http.StatusOK, nil)
	b.must("GET", p+"/inventory", nil, http.StatusOK, nil)

	// Environments: password and secrets, reads, update, a refused update.
	b.must("POST", p+"/environment", map[string]any{"name": "prod", "json": "{}", "env": "{}", "password": canaries[5], "secrets": []map[string]any{
		{"type": "var", "name": "db", "secret": canaries[6], "operation": "create"},
		{"type": "env", "name": "TOKEN", "secret": canaries[7], "operation": "create"},
	}}, http.StatusNoContent, nil)
	var env environmentAnswer
	b.must("GET", p+"/environment/1", nil, http.StatusOK, &env)
	b.must("GET", p+"/environment", nil, http.StatusOK, nil)
	b.must("PUT", p+"/environment/1", map[string]any{"id": 1, "name": "prod", "secrets": []map[string]any{
		{"id": env.Secrets[1].ID, "name": "db", "secret": canaries[8], "operation": "update"},
	}}, http.StatusNoContent, nil)
	b.must("PUT", p+"/environment/1", map[string]any{"id": 1, "name": "prod", "secrets": []map[string]any{
		{"type": "var", "name": "db", "secret": canaries[8], "operation": "create"},
	}}, http.StatusBadRequest, nil)
	b.must("GET", p+"/environment/1/refs", nil, http.StatusOK, nil)

	// Everything goes.
	b.must("DELETE", p+"/environment/1", nil, http.StatusNoContent, nil)
	b.must("DELETE", p+"/inventory/1", nil, http.StatusNoContent, nil)
	b.must("DELETE", p+"/repositories/1", nil, http.StatusNoContent, nil)
	b.must("DELETE", p+"/keys/1", nil, http.StatusNoContent, nil)
	b.must("DELETE", p+"/keys/2", nil, http.StatusNoContent, nil)

	hay, stored := haystacks(t, e, answers, []int64{pid}, seed.ns)
	if stored < 10 || len(answers) < 25 || hay["log"] == "" {
		t.Fatalf("nothing to search: %d events, %d answers, %d bytes of log", stored, len(answers), len(hay["log"]))
	}
	assertNoSecret(t, hay, needles(canaries...))
}
