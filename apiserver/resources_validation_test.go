package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestResources_section5RulesAnswer400WithTheSpecsWordsAndWriteNothing:
// one row per rule of docs/features.md §5 (and the rules the spec leaves to us) for
// keys, repositories, inventories and environments. Each answers 400 with
// the exact message and leaves every Secret, ConfigMap (the id counters),
// Repository, Inventory and Environment of the project as it was.
func TestResources_section5RulesAnswer400WithTheSpecsWordsAndWriteNothing(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Validation")
	keyID, keyName := seed.key("Deploy", "validation-pw")
	repoID, _ := seed.repository("app", keyName)
	invID, _ := seed.inventory("hosts", keyName)
	envID, _ := seed.environment("prod")
	encrypted := newPrivateKey(t, "validation-passphrase")
	jsonString := func(s string) string { return fmt.Sprintf("%q", s) }

	p := fmt.Sprintf("/api/project/%d", pid)
	keys, repos, invs, envs := p+"/keys", p+"/repositories", p+"/inventory", p+"/environment"
	key, repo, inv, env := fmt.Sprintf("%s/%d", keys, keyID), fmt.Sprintf("%s/%d", repos, repoID), fmt.Sprintf("%s/%d", invs, invID), fmt.Sprintf("%s/%d", envs, envID)
	repoBody := func(fields string) string {
		return fmt.Sprintf(`{"name":"r","git_url":"https://git.example/r.git","git_branch":"main","ssh_key_id":%d,%s}`, keyID, fields)
	}
	invBody := func(fields string) string {
		return fmt.Sprintf(`{"name":"i","type":"static","inventory":"web1","ssh_key_id":%d,%s}`, keyID, fields)
	}

	for _, row := range []struct {
		rule, method, path, body, msg string
	}{
		// Keys.
		{"key name required", "POST", keys, `{"name":"","type":"none"}`, "Name is required"},
		{"key name of spaces", "POST", keys, `{"name":"   ","type":"none"}`, "Name is required"},
		{"key type required", "POST", keys, `{"name":"k"}`, "Type is required"},
		{"key type unknown", "POST", keys, `{"name":"k","type":"aws"}`, `type must be ssh, login_password or none, not "aws"`},
		{"login_password needs a password", "POST", keys, `{"name":"k","type":"login_password","login_password":{"login":"bot"}}`, "Password is required"},
		{"ssh needs a private key", "POST", keys, `{"name":"k","type":"ssh","ssh":{"login":"git"}}`, "Private key is required"},
		{"ssh key must parse", "POST", keys, `{"name":"k","type":"ssh","ssh":{"private_key":"garbage"}}`, "The private key could not be read: paste a whole private key in PEM or OpenSSH format"},
		{"encrypted key needs its passphrase", "POST", keys, `{"name":"k","type":"ssh","ssh":{"private_key":` + jsonString(encrypted) + `}}`, "The private key is encrypted: its passphrase is required"},
		{"passphrase must decrypt", "POST", keys, `{"name":"k","type":"ssh","ssh":{"passphrase":"wrong","private_key":` + jsonString(encrypted) + `}}`, "The passphrase does not decrypt the private key"},
		{"key rename needs a name", "PUT", key, `{"name":""}`, "Name is required"},
		{"override needs a type", "PUT", key, `{"name":"k","override_secret":true}`, "Type is required"},
		{"override login_password needs a password", "PUT", key, `{"name":"k","type":"login_password","override_secret":true}`, "Password is required"},
		{"override ssh needs a private key", "PUT", key, `{"name":"k","type":"ssh","override_secret":true}`, "Private key is required"},
		{"key body id must be the URL's", "PUT", key, fmt.Sprintf(`{"id":%d,"name":"k"}`, keyID+100), fmt.Sprintf("the body's id %d is not the URL's id %d", keyID+100, keyID)},

		// Repositories.
		{"repository name required", "POST", repos, repoBody(`"name":""`), "Name is required"},
		{"repository URL required", "POST", repos, repoBody(`"git_url":""`), "Repository is required"},
		{"URL scheme ftp", "POST", repos, repoBody(`"git_url":"ftp://git.example/r.git"`), "Incorrect URL"},
		{"URL scheme http", "POST", repos, repoBody(`"git_url":"http://git.example/r.git"`), "Incorrect URL"},
		{"URL git transport", "POST", repos, repoBody(`"git_url":"ext::ssh-proxy"`), "Incorrect URL"},
		{"URL a bare word", "POST", repos, repoBody(`"git_url":"repository"`), "Incorrect URL"},
		{"URL with a space", "POST", repos, repoBody(`"git_url":"https://git.example/a b.git"`), "Incorrect URL"},
		{"URL starting with a dash", "POST", repos, repoBody(`"git_url":"-oProxyCommand=x:y"`), "Incorrect URL"},
		{"URL without a host", "POST", repos, repoBody(`"git_url":"https:///r.git"`), "Incorrect URL"},
		{"URL with a password", "POST", repos, repoBody(`"git_url":"https://bot:pw@git.example/r.git"`), "the URL must not hold a password: put the credentials in a login_password key"},
		{"branch required unless local", "POST", repos, repoBody(`"git_branch":""`), "Branch is required"},
		{"branch must not be an option", "POST", repos, repoBody(`"git_branch":"--upload-pack=x"`), "the branch is not a valid git branch name"},
		{"access key required", "POST", repos, repoBody(`"ssh_key_id":0`), "Key is required"},
		{"access key must exist", "POST", repos, repoBody(`"ssh_key_id":9999`), "ssh_key_id 9999 does not exist in this project"},
		{"repository update checks too", "PUT", repo, repoBody(`"git_url":"gopher://x/y"`), "Incorrect URL"},

		// Inventories.
		{"inventory name required", "POST", invs, invBody(`"name":""`), "Name is required"},
		{"user credentials required", "POST", invs, invBody(`"ssh_key_id":0`), "User credentials is required"},
		{"inventory type required", "POST", invs, invBody(`"type":""`), "Type is required"},
		{"inventory type unknown", "POST", invs, invBody(`"type":"dynamic"`), `type must be static, static-yaml, file or terraform-workspace, not "dynamic"`},
		{"file path required", "POST", invs, invBody(`"type":"file","inventory":"  "`), "Path to Inventory file is required"},
		{"file path absolute", "POST", invs, invBody(`"type":"file","inventory":"/etc/hosts"`), "the inventory file must be a relative path inside the repository"},
		{"file path escapes", "POST", invs, invBody(`"type":"file","inventory":"../secrets.ini"`), "the inventory file must be a relative path inside the repository"},
		{"file path escapes midway", "POST", invs, invBody(`"type":"file","inventory":"hosts/../../x"`), "the inventory file must be a relative path inside the repository"},
		{"user credentials must exist", "POST", invs, invBody(`"ssh_key_id":9999`), "ssh_key_id 9999 does not exist in this project"},
		{"become key must exist", "POST", invs, invBody(`"become_key_id":9999`), "become_key_id 9999 does not exist in this project"},
		{"repository must exist", "POST", invs, invBody(`"repository_id":9999`), "repository_id 9999 does not exist in this project"},
		{"inventory update checks too", "PUT", inv, invBody(`"type":"file","inventory":""`), "Path to Inventory file is required"},

		// Environments.
		{"environment name required", "POST", envs, `{"name":" ","json":"{}","env":"{}"}`, "Name is required"},
		{"json not JSON", "POST", envs, `{"name":"e","json":"{tier: prod}","env":"{}"}`, "Environment and extra variables must be valid JSON"},
		{"json an array", "POST", envs, `{"name":"e","json":"[1,2]","env":"{}"}`, "Environment and extra variables must be valid JSON"},
		{"json null", "POST", envs, `{"name":"e","json":"null","env":"{}"}`, "Environment and extra variables must be valid JSON"},
		{"env not JSON", "POST", envs, `{"name":"e","json":"{}","env":"{"}`, "Environment and extra variables must be valid JSON"},
		{"env a string", "POST", envs, `{"name":"e","json":"{}","env":"\"A=1\""}`, "Environment and extra variables must be valid JSON"},
		{"env value an object", "POST", envs, `{"name":"e","env":"{\"A\":{\"b\":1}}"}`, "env: the value of A must be a string, a number or a boolean"},
		{"env name with =", "POST", envs, `{"name":"e","env":"{\"A=B\":\"1\"}"}`, `env: "A=B" is not a valid environment variable name`},
		{"secret type unknown", "POST", envs, `{"name":"e","secrets":[{"type":"file","name":"x","secret":"s","operation":"create"}]}`, `a secret's type must be var or env, not "file"`},
		{"secret name required", "POST", envs, `{"name":"e","secrets":[{"type":"var","name":"","secret":"s","operation":"create"}]}`, "a secret's name is required"},
		{"secret name charset", "POST", envs, `{"name":"e","secrets":[{"type":"var","name":"a b","secret":"s","operation":"create"}]}`, `the secret name "a b" may hold only letters, digits, '-', '_' and '.'`},
		{"secret created twice", "POST", envs, `{"name":"e","secrets":[{"type":"var","name":"x","operation":"create"},{"type":"var","name":"x","operation":"create"}]}`, `the secret var "x" already exists in this environment`},
		{"secret update of nothing", "POST", envs, `{"name":"e","secrets":[{"id":12345,"secret":"s","operation":"update"}]}`, "secret 12345 does not exist in this environment"},
		{"secret operation unknown", "POST", envs, `{"name":"e","secrets":[{"type":"var","name":"x","operation":"upsert"}]}`, `a secret's operation must be create, update or delete, not "upsert"`},
		{"environment update checks too", "PUT", env, `{"name":"e","json":"[]"}`, "Environment and extra variables must be valid JSON"},
		{"environment delete of nothing", "PUT", env, `{"name":"e","secrets":[{"id":7,"operation":"delete"}]}`, "secret 7 does not exist in this environment"},
	} {
		before := seed.snapshot()
		code, data := b.call(row.method, row.path, []byte(row.body))
		if code != http.StatusBadRequest || errorOf(t, data) != row.msg {
			t.Errorf("%s: %s %s = %d %s, want 400 %q", row.rule, row.method, strings.TrimPrefix(row.path, p), code, data, row.msg)
		}
		if after := seed.snapshot(); after != before {
			t.Errorf("%s: a refused request changed the cluster:\n%s\n→\n%s", row.rule, before, after)
		}
	}
}
