package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bastion-dev/bastion/internal/alert/alerttest"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// The tail most canaries end with: characters that JSON, shells and URLs
// escape, so that a secret printed in an escaped form is caught too.
const awkwardTail = `-"q\b<&>é`

// TestCanary_secretsOfEveryKindNeverLeaveAfterAFullRun gives `bastion dev`
// a distinctive canary in every kind of secret it takes, uses every one of
// them for real, then searches everything Bastion shows or keeps outside
// its Secrets for any of them, raw or encoded:
//
//   - secrets: an ssh key and its passphrase (a clone over a real sshd), a
//     login_password key (an https clone and ansible's become password), a
//     vault password (ansible opens a vaulted file), an Environment's
//     password, secret variable and secret environment variable (a playbook
//     and a script print them), GitHub and token webhook secrets (signed
//     deliveries start tasks), an API token (a task is started with it),
//     the user's passwords (sign-in, a wrong one, a change) and session,
//     the SMTP password, the Telegram bot token and the chat webhook URL
//     (a failed task's alerts; the chat webhook answers with its path);
//   - places: every answer of the API and every websocket frame of the run,
//     every task's stored output (git's errors included), the stored and
//     Kubernetes events (a schedule's failed git ls-remote is the Event
//     searched there: only schedules record Events), every Kubernetes
//     object of every kind but Secrets, the bastion process's stdout and
//     stderr, every file of its data dir but etcd's (the output store, the
//     control plane's logs), and what the alerts sent out.
//
// It also proves the search can see: the Secrets hold every stored canary,
// the token's creation answer holds the token, and each use succeeded.
func TestCanary_secretsOfEveryKindNeverLeaveAfterAFullRun(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := newCanaries(t)
	everything := c.all()

	// Outside services, on loopback, that check the secrets they are given.
	smtp := alerttest.NewSMTPServer(t, "bastion", c.smtp.value)
	telegram := alerttest.NewRecorder(t)
	chat := alerttest.NewRecorder(t)
	// A chat webhook that refuses and quotes its own path, as a web
	// framework's 404 page does: the path is the webhook's secret.
	chat.Answer(http.StatusNotFound, "Cannot POST /hooks/"+c.chatHook.cores[0])
	files := t.TempDir()
	writeFile(t, filepath.Join(files, "smtp-password"), c.smtp.value+"\n")
	writeFile(t, filepath.Join(files, "telegram-token"), c.telegram.value+"\n")
	writeFile(t, filepath.Join(files, "chat-webhook"), chat.URL+"/hooks/"+c.chatHook.value+"\n")

	repo := canaryRepo(t, c)
	sshd := gittest.StartSSHD(t, c.sshPublic)
	tlsGit := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized) // never reached: git does not trust this certificate
	}))
	t.Cleanup(tlsGit.Close)

	dataDir := t.TempDir()
	dev := startDev(t, dataDir,
		"--smtp-host", smtp.Host, "--smtp-port", fmt.Sprint(smtp.Port), "--smtp-tls", "none",
		"--smtp-username", "bastion", "--smtp-password-file", filepath.Join(files, "smtp-password"),
		"--smtp-from", "Bastion <bastion@example.com>",
		"--telegram-token-file", filepath.Join(files, "telegram-token"), "--telegram-api-url", telegram.URL,
		"--chat-webhook-url-file", filepath.Join(files, "chat-webhook"),
		"--alert-attempts", "2", "--alert-backoff", "100ms")
	dev.waitReady()
	t.Logf("bastion dev ready after %s", time.Since(start).Round(time.Millisecond))

	rec := newRecorder()
	admin := recordedSignIn(t, dev.url, rec, "admin", dev.bannerValue("password"))

	// The user: made with one password, a wrong one tried, changed to another.
	var user struct {
		ID int64 `json:"id"`
	}
	admin.must("POST", "/api/users", map[string]any{"name": "Canary", "username": "canary", "email": "canary@example.test",
		"password": c.password.value, "admin": true, "alert": true}, http.StatusCreated, &user)
	if code, _ := recordedClient(t, dev.url, rec).call("POST", "/api/auth/login", map[string]string{"auth": "canary", "password": c.wrongPassword.value}); code != http.StatusUnauthorized {
		t.Fatalf("a wrong password signed in: %d", code)
	}
	first := recordedSignIn(t, dev.url, rec, "canary", c.password.value)
	first.must("POST", fmt.Sprintf("/api/users/%d/password", user.ID), map[string]string{"password": c.newPassword.value}, http.StatusNoContent, nil)
	api := recordedSignIn(t, dev.url, rec, "canary", c.newPassword.value)
	for _, ck := range api.c.Jar.Cookies(mustURL(t, dev.url)) {
		if len(ck.Value) >= 12 {
			everything = append(everything, canary{kind: "session cookie " + ck.Name, value: ck.Value, cores: []string{ck.Value}})
		}
	}
	frames := recordWebsocket(t, api)

	var project struct {
		ID int64 `json:"id"`
	}
	api.must("POST", "/api/projects", map[string]any{"name": "Canaries", "alert": true, "alert_chat": "-1001"}, http.StatusCreated, &project)
	p := "/api/project/" + itoa(project.ID)

	// Keys of every type, with the canaries in them.
	api.must("POST", p+"/keys", map[string]any{"name": "deploy", "type": "ssh",
		"ssh": map[string]string{"login": sshd.User, "passphrase": c.passphrase.value, "private_key": c.sshKey.value}}, http.StatusNoContent, nil)
	api.must("POST", p+"/keys", map[string]any{"name": "git-login", "type": "login_password",
		"login_password": map[string]string{"login": "root", "password": c.loginPassword.value}}, http.StatusNoContent, nil)
	api.must("POST", p+"/keys", map[string]any{"name": "vault", "type": "login_password",
		"login_password": map[string]string{"password": c.vault.value}}, http.StatusNoContent, nil)
	api.must("POST", p+"/keys", map[string]any{"name": "github-hook", "type": "login_password",
		"login_password": map[string]string{"password": c.githubSecret.value}}, http.StatusNoContent, nil)
	api.must("POST", p+"/keys", map[string]any{"name": "token-hook", "type": "login_password",
		"login_password": map[string]string{"password": c.hookToken.value}}, http.StatusNoContent, nil)
	keys := map[string]int64{}
	for _, name := range []string{"deploy", "git-login", "vault", "github-hook", "token-hook"} {
		keys[name] = api.idNamed(p+"/keys", name)
	}

	// Repositories: one that clones over ssh, two whose clone fails after
	// the credentials were written (a missing path behind the same sshd, an
	// https server git does not trust).
	for name, r := range map[string]struct {
		url string
		key string
	}{
		"over-ssh":   {sshd.URL(repo.Path), "deploy"},
		"missing":    {sshd.URL(filepath.Join(filepath.Dir(repo.Path), "no-such-repo")), "deploy"},
		"over-https": {tlsGit.URL + "/app.git", "git-login"},
	} {
		api.must("POST", p+"/repositories", map[string]any{"name": name, "git_url": r.url, "git_branch": gittest.Branch, "ssh_key_id": keys[r.key]}, http.StatusNoContent, nil)
	}
	var inventory struct {
		ID int64 `json:"id"`
	}
	// The play logs in over ssh (the test's sshd, as its user) and becomes
	// there: a local run is no longer the manager's user (root, for whom
	// su asks no password), but a user of its own.
	api.must("POST", p+"/inventory", map[string]any{"name": "here", "type": "static",
		"inventory": fmt.Sprintf("localhost ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=%d ansible_user=%s ansible_become_method=su\n",
			sshd.Port, sshd.User),
		"ssh_key_id": keys["deploy"], "become_key_id": keys["git-login"]}, http.StatusCreated, &inventory)
	api.must("POST", p+"/environment", map[string]any{"name": "prod", "json": `{"greeting": "hello"}`, "env": `{"PLAIN": "visible"}`,
		"password": c.envPassword.value, "secrets": []map[string]any{
			{"type": "var", "name": "db_password", "secret": c.envVar.value, "operation": "create"},
			{"type": "env", "name": "API_TOKEN", "secret": c.envEnv.value, "operation": "create"},
		}}, http.StatusNoContent, nil)
	envID := api.idNamed(p+"/environment", "prod")
	template := func(name, app, playbook, repository string, vaults []map[string]any) int64 {
		var tpl struct {
			ID int64 `json:"id"`
		}
		body := map[string]any{"name": name, "app": app, "playbook": playbook,
			"repository_id": api.idNamed(p+"/repositories", repository), "inventory_id": inventory.ID, "environment_id": envID}
		if vaults != nil {
			body["vaults"] = vaults
		}
		api.must("POST", p+"/templates", body, http.StatusCreated, &tpl)
		return tpl.ID
	}
	deploy := template("Deploy", "ansible", "site.yml", "over-ssh", []map[string]any{{"vault_key_id": keys["vault"], "name": "prod"}})
	script := template("Script", "bash", "script.sh", "over-ssh", nil)
	missing := template("Missing", "bash", "script.sh", "missing", nil)
	https := template("Over https", "bash", "script.sh", "over-https", nil)

	// A schedule that runs only on a new commit asks the https repository
	// every minute; that it cannot reach it (no more: not git's words) is
	// told in a Kubernetes Event (the only kind Bastion records there).
	api.must("POST", p+"/schedules", map[string]any{"name": "nightly", "template_id": https, "cron_format": "* * * * *", "active": true,
		"repository_id": api.idNamed(p+"/repositories", "over-https")}, http.StatusCreated, nil)

	// Webhooks: a GitHub-signed push and a token both start tasks; forged
	// ones do not.
	githubURL := integration(t, api, p, map[string]any{"name": "push", "template_id": script, "auth_method": "github", "auth_secret_id": keys["github-hook"]})
	tokenURL := integration(t, api, p, map[string]any{"name": "token", "template_id": missing, "auth_method": "token", "auth_header": "X-Token", "auth_secret_id": keys["token-hook"]})
	push := []byte(`{"ref":"refs/heads/main"}`)
	hooks := recordedClient(t, dev.url, rec)
	for _, d := range []struct {
		url    string
		header map[string]string
		want   int
	}{
		{githubURL, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + hmacSHA256(c.githubSecret.value, push)}, http.StatusNoContent},
		{githubURL, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + hmacSHA256(c.wrongPassword.value, push)}, http.StatusUnauthorized},
		{tokenURL, map[string]string{"X-Token": c.hookToken.value}, http.StatusNoContent},
		{tokenURL, map[string]string{"X-Token": c.wrongPassword.value}, http.StatusUnauthorized},
	} {
		if code := hooks.post(d.url, push, d.header); code != d.want {
			t.Fatalf("delivery to %s = %d, want %d", d.url, code, d.want)
		}
	}

	// An API token starts a task; its secret is answered once.
	var token struct {
		ID string `json:"id"`
	}
	api.must("POST", "/api/user/tokens", nil, http.StatusCreated, &token)
	if creation := rec.setAside(); !strings.Contains(creation, token.ID) || len(token.ID) < 24 {
		t.Fatalf("the token's creation answer does not hold a token: %s", creation)
	}
	everything = append(everything, canary{kind: "API token", value: token.ID, cores: []string{token.ID[8:]}}) // lists show its first 8 characters
	bearer := recordedClient(t, dev.url, rec)
	bearer.c.Transport = bearerTransport{token: token.ID, next: rec}

	var tasks []int64
	startTask := func(a *apiClient, tpl int64) {
		var task struct {
			ID int64 `json:"id"`
		}
		a.must("POST", p+"/tasks", map[string]any{"template_id": tpl, "message": "canary run"}, http.StatusCreated, &task)
		tasks = append(tasks, task.ID)
	}
	startTask(api, deploy)
	startTask(api, script)
	startTask(bearer, https)

	// Every task ends; the webhook tasks are found in the list.
	var all []taskRow
	eventually(t, 3*time.Minute, "every task to finish", func() error {
		all = nil
		api.must("GET", p+"/tasks", nil, http.StatusOK, &all)
		if len(all) != 5 {
			return fmt.Errorf("%d tasks, want 5", len(all))
		}
		for _, task := range all {
			if task.Status != "success" && task.Status != "error" {
				return fmt.Errorf("task %d is %s", task.ID, task.Status)
			}
		}
		return nil
	})
	outputs := map[int64]string{}
	for _, task := range all {
		var lines []struct {
			Output string `json:"output"`
		}
		api.must("GET", fmt.Sprintf("%s/tasks/%d/output", p, task.ID), nil, http.StatusOK, &lines)
		var text []string
		for _, l := range lines {
			text = append(text, l.Output)
		}
		outputs[task.ID] = strings.Join(text, "\n")
		api.must("GET", fmt.Sprintf("%s/tasks/%d/raw", p, task.ID), nil, http.StatusOK, nil)
		api.must("GET", fmt.Sprintf("%s/tasks/%d", p, task.ID), nil, http.StatusOK, nil)
	}
	checkTheRunsUsedTheSecrets(t, all, outputs, map[string]int64{"Deploy": deploy, "Script": script, "Missing": missing, "Over https": https})
	if code, _ := bearer.call("GET", "/api/user", nil); code != http.StatusOK {
		t.Fatalf("the API token does not sign in: %d", code)
	}

	// The alerts of the failed tasks went out with their secrets; the chat
	// webhook's refusal was retried, then recorded as an event.
	eventually(t, time.Minute, "the alerts", func() error {
		var events []struct {
			Description string `json:"description"`
		}
		api.must("GET", p+"/events/last", nil, http.StatusOK, &events)
		failed := 0
		for _, e := range events {
			if strings.Contains(e.Description, "alert to the chat webhook failed") {
				failed++
			}
		}
		if len(smtp.Mails()) == 0 || len(telegram.Requests()) == 0 || failed == 0 {
			return fmt.Errorf("%d mails, %d Telegram requests, %d failed chat alerts", len(smtp.Mails()), len(telegram.Requests()), failed)
		}
		return nil
	})
	if m := smtp.Mails()[0]; m.Login != "bastion" {
		t.Fatalf("the mail server was not signed in to: %+v", m.Login)
	}
	if r := telegram.Requests()[0]; r.Path != "/bot"+c.telegram.value+"/sendMessage" {
		t.Fatalf("the bot token was not used: %s", r.Path)
	}

	// Every read of the project, as the console makes them.
	reads := []string{"/api/user", "/api/users", fmt.Sprintf("/api/users/%d", user.ID), "/api/projects", "/api/events/last", "/api/user/tokens",
		"/api/auth/login", "/api/info", "/api/apps",
		p, p + "/role", p + "/users", p + "/events/last", p + "/keys", p + "/repositories", p + "/inventory", p + "/environment",
		p + "/templates", p + "/tasks", p + "/tasks/last", p + "/integrations", p + "/views", p + "/schedules", p + "/backup",
		fmt.Sprintf("%s/inventory/%d", p, inventory.ID), fmt.Sprintf("%s/environment/%d", p, envID), fmt.Sprintf("%s/environment/%d/refs", p, envID)}
	for _, id := range keys {
		reads = append(reads, fmt.Sprintf("%s/keys/%d", p, id), fmt.Sprintf("%s/keys/%d/refs", p, id))
	}
	for _, tpl := range []int64{deploy, script, missing, https} {
		reads = append(reads, fmt.Sprintf("%s/templates/%d", p, tpl), fmt.Sprintf("%s/templates/%d/tasks", p, tpl))
	}
	for _, rp := range []string{"over-ssh", "missing", "over-https"} {
		reads = append(reads, fmt.Sprintf("%s/repositories/%d", p, api.idNamed(p+"/repositories", rp)))
	}
	var integrations []struct {
		ID int64 `json:"id"`
	}
	api.must("GET", p+"/integrations", nil, http.StatusOK, &integrations)
	for _, in := range integrations {
		reads = append(reads, fmt.Sprintf("%s/integrations/%d", p, in.ID), fmt.Sprintf("%s/integrations/%d/aliases", p, in.ID))
	}
	for _, path := range reads {
		if code, data := api.call("GET", path, nil); code != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, code, data)
		}
	}
	bearer.must("GET", "/api/user/tokens", nil, http.StatusOK, nil)
	api.must("DELETE", "/api/user/tokens/"+token.ID[:8], nil, http.StatusNoContent, nil)
	if code, _ := bearer.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("a deleted token still signs in: %d", code)
	}

	// Kubernetes: every object of every kind, Secrets apart.
	kubeconfig := dev.bannerValue("kubeconfig")
	kinds := listableKinds(t, kubeconfig)
	objects := kubeGet(t, kubeconfig, strings.Join(kinds, ","))
	var kubeEvents kubeList
	eventually(t, 90*time.Second, "the schedule's Kubernetes Event", func() error {
		if kubeEvents = kubeGet(t, kubeconfig, "events"); !strings.Contains(kubeEvents.text, "cannot reach the repository") {
			return fmt.Errorf("%d events, none saying the repository cannot be reached", kubeEvents.items)
		}
		return nil
	})
	secrets := kubeGet(t, kubeconfig, "secrets")

	// Stop Bastion, so that its log and its output store are complete.
	dev.interrupt()
	if code := dev.wait(60 * time.Second); code != 0 {
		t.Fatalf("bastion dev exited %d", code)
	}
	frames.stop()
	stored := dataDirFiles(t, dataDir)

	n, answers := rec.all()
	var mails []string
	for _, m := range smtp.Mails() {
		mails = append(mails, string(m.Data))
	}
	for _, r := range append(telegram.Requests(), chat.Requests()...) {
		mails = append(mails, string(r.Body)) // the path carries the token or the hook's secret by design
	}
	var outs []string
	for id, text := range outputs {
		outs = append(outs, fmt.Sprintf("task %d:\n%s", id, text))
	}
	haystacks := map[string]string{
		"API answers":                    answers,
		"websocket frames":               frames.text(),
		"task output":                    strings.Join(outs, "\n"),
		"Kubernetes events":              kubeEvents.text,
		"Kubernetes objects but Secrets": objects.text,
		"the server's stdout":            dev.stdout.String(),
		"the server's stderr":            dev.stderr.String(),
		"the server's log file":          dev.log(),
		"files of the data dir":          stored,
		"alerts sent":                    strings.Join(mails, "\n"),
	}
	// Each place must hold something, or finding nothing proves nothing.
	for where, text := range haystacks {
		if len(text) < 200 {
			t.Errorf("%s: only %d bytes to search", where, len(text))
		}
	}
	for where, text := range haystacks {
		for _, f := range search(where, text, everything) {
			t.Errorf("LEAK %s", f)
		}
	}

	// The search sees through Kubernetes' base64: the Secrets hold every
	// canary that Bastion stores, and none of the user's passwords (a hash).
	for _, cn := range c.stored() {
		if !found(secrets.text, cn) {
			t.Errorf("the Secrets do not hold the %s: the search cannot be trusted", cn.kind)
		}
	}
	for _, cn := range []canary{c.password, c.newPassword, c.wrongPassword} {
		if found(secrets.text, cn) {
			t.Errorf("a Secret holds the %s itself, not its hash", cn.kind)
		}
	}
	t.Logf("searched %d canaries (%d needles) in %d API answers, %d websocket frames, %d task outputs, %d Kubernetes events, "+
		"%d Kubernetes objects of %d kinds, %d+%d bytes of server log, %d bytes of data dir files, %d alerts; %s in all",
		len(everything), countNeedles(everything), n, frames.count(), len(outputs), kubeEvents.items, objects.items, len(kinds),
		len(haystacks["the server's stdout"]), len(haystacks["the server's stderr"]), len(stored), len(mails), time.Since(start).Round(time.Second))
}

// canaries are the test's secrets, one per kind.
type canaries struct {
	sshKey, passphrase, loginPassword, vault, githubSecret, hookToken canary
	envPassword, envVar, envEnv                                       canary
	password, newPassword, wrongPassword                              canary
	smtp, telegram, chatHook                                          canary
	sshPublic                                                         string
}

func newCanaries(t *testing.T) *canaries {
	c := &canaries{
		passphrase:    newCanary(t, "ssh key passphrase", awkwardTail),
		loginPassword: newCanary(t, "login_password key's password", awkwardTail),
		vault:         newCanary(t, "vault password", awkwardTail),
		githubSecret:  newCanary(t, "GitHub webhook secret", awkwardTail),
		hookToken:     newCanary(t, "webhook token", `-"q\b`), // a header value: ASCII only
		envPassword:   newCanary(t, "Environment's password", awkwardTail),
		envVar:        newCanary(t, "Environment's secret variable", awkwardTail),
		envEnv:        newCanary(t, "Environment's secret environment variable", awkwardTail),
		password:      newCanary(t, "user's password", awkwardTail),
		newPassword:   newCanary(t, "user's new password", awkwardTail),
		wrongPassword: newCanary(t, "wrong password", awkwardTail),
		smtp:          newCanary(t, "SMTP password", awkwardTail),
		chatHook:      newCanary(t, "chat webhook URL's path", ""),
	}
	c.telegram = newCanary(t, "Telegram bot token", "")
	c.telegram.value = "777:" + c.telegram.value // the Bot API's form
	var private string
	private, c.sshPublic = gittest.Keygen(t, c.passphrase.value)
	c.sshKey = linesCanary("ssh private key", private)
	return c
}

// all is every canary.
func (c *canaries) all() []canary {
	return []canary{c.sshKey, c.passphrase, c.loginPassword, c.vault, c.githubSecret, c.hookToken, c.envPassword, c.envVar, c.envEnv,
		c.password, c.newPassword, c.wrongPassword, c.smtp, c.telegram, c.chatHook}
}

// stored are the canaries Bastion keeps in Kubernetes Secrets.
func (c *canaries) stored() []canary {
	return []canary{c.sshKey, c.passphrase, c.loginPassword, c.vault, c.githubSecret, c.hookToken, c.envPassword, c.envVar, c.envEnv}
}

func countNeedles(cs []canary) int {
	n := 0
	for _, c := range cs {
		n += len(c.needles())
	}
	return n
}

// canaryRepo is the repository the tasks run: a playbook that opens a
// vaulted file and prints the secret variables, and a script that prints
// its environment and arguments, then fails (for the alerts).
func canaryRepo(t *testing.T, c *canaries) *gittest.Repo {
	t.Helper()
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  vars_files:
    - vaulted.yml
  tasks:
    - name: the vault is open
      debug:
        msg: "vault says {{ vaulted_word }}"
    - name: print the secret variable
      debug:
        var: db_password
    - name: print the secret environment variable
      debug:
        msg: "token {{ lookup('env', 'API_TOKEN') }}"
    - name: become, with the become password
      command: id -un
`, false)
	repo.WriteFile("script.sh", `#!/bin/bash
echo "env API_TOKEN: $API_TOKEN"
# A secret variable is an environment variable, never an argument.
echo "env db_password: $db_password"
for a in "$@"; do echo "arg: $a"; done
echo "failing on purpose"
exit 3
`, true)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "password"), c.vault.value)
	writeFile(t, filepath.Join(dir, "vaulted.yml"), "vaulted_word: opened\n")
	cmd := exec.Command("ansible-vault", "encrypt", "--vault-id", "prod@"+filepath.Join(dir, "password"), filepath.Join(dir, "vaulted.yml"))
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-vault: %v\n%s", err, out)
	}
	vaulted, err := os.ReadFile(filepath.Join(dir, "vaulted.yml"))
	if err != nil {
		t.Fatal(err)
	}
	repo.WriteFile("vaulted.yml", string(vaulted), false)
	return repo
}

type taskRow struct {
	ID         int64  `json:"id"`
	TemplateID int64  `json:"template_id"`
	Status     string `json:"status"`
}

// checkTheRunsUsedTheSecrets proves each secret was used: the vault opened
// and become ran, the clone over ssh worked, the clones that failed say
// why, and the prints of the secrets were masked.
func checkTheRunsUsedTheSecrets(t *testing.T, all []taskRow, outputs map[int64]string, templates map[string]int64) {
	t.Helper()
	want := map[string]struct {
		status string
		lines  []string
		count  int
	}{
		"Deploy":     {"success", []string{"vault says opened", `"db_password": "********"`, `"msg": "token ********"`, "ok=4"}, 1},
		"Script":     {"error", []string{"env API_TOKEN: ********", "env db_password: ********", "arg: greeting=hello", "failing on purpose"}, 2},
		"Missing":    {"error", []string{"does not appear to be a git repository"}, 1},
		"Over https": {"error", []string{"fatal: unable to access 'https://127.0.0.1:"}, 1},
	}
	for name, w := range want {
		n := 0
		for _, task := range all {
			if task.TemplateID != templates[name] {
				continue
			}
			n++
			if task.Status != w.status {
				t.Errorf("%s task %d ended %s, want %s:\n%s", name, task.ID, task.Status, w.status, outputs[task.ID])
			}
			for _, line := range w.lines {
				if !strings.Contains(outputs[task.ID], line) {
					t.Errorf("%s task %d's output lacks %q:\n%s", name, task.ID, line, outputs[task.ID])
				}
			}
		}
		if n != w.count {
			t.Errorf("%d %s tasks, want %d", n, name, w.count)
		}
	}
}

// recordedClient is a client of base whose answers rec records.
func recordedClient(t *testing.T, base string, rec *recorder) *apiClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &apiClient{t: t, base: base, c: &http.Client{Jar: jar, Transport: rec, Timeout: 30 * time.Second}}
}

// recordedSignIn is a recorded client signed in as login.
func recordedSignIn(t *testing.T, base string, rec *recorder, login, password string) *apiClient {
	t.Helper()
	a := recordedClient(t, base, rec)
	a.must("POST", "/api/auth/login", map[string]string{"auth": login, "password": password}, http.StatusNoContent, nil)
	return a
}

// post delivers a webhook body to an absolute URL and returns the status.
func (a *apiClient) post(url string, body []byte, header map[string]string) int {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.t.Context(), "POST", url, strings.NewReader(string(body)))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// integration makes an integration with an alias and returns its URL.
func integration(t *testing.T, api *apiClient, p string, body map[string]any) string {
	t.Helper()
	var in struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/integrations", body, http.StatusCreated, &in)
	var alias struct {
		URL string `json:"url"`
	}
	api.must("POST", fmt.Sprintf("%s/integrations/%d/aliases", p, in.ID), nil, http.StatusCreated, &alias)
	if !strings.HasPrefix(alias.URL, "http") {
		t.Fatalf("alias URL %q", alias.URL)
	}
	return alias.URL
}

// wsRecording keeps every websocket frame a signed-in client receives.
type wsRecording struct {
	conn *websocket.Conn
	done chan struct{}
	rec  *recorder // only its list of answers is used
}

func recordWebsocket(t *testing.T, a *apiClient) *wsRecording {
	t.Helper()
	w := &wsRecording{conn: a.websocket(), done: make(chan struct{}), rec: newRecorder()}
	go func() {
		defer close(w.done)
		for {
			_, data, err := w.conn.ReadMessage()
			if err != nil {
				return
			}
			w.rec.add(string(data))
		}
	}()
	return w
}

func (w *wsRecording) stop() {
	w.conn.Close()
	<-w.done
}

func (w *wsRecording) text() string { _, s := w.rec.all(); return s }
func (w *wsRecording) count() int   { n, _ := w.rec.all(); return n }

// kubeList is a `kubectl get -o json` answer.
type kubeList struct {
	text  string
	items int
}

func kubeGet(t *testing.T, kubeconfig, kinds string) kubeList {
	t.Helper()
	out := kubectlStdout(t, kubeconfig, "get", kinds, "--all-namespaces", "-o", "json")
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("kubectl get %s: %v", kinds, err)
	}
	return kubeList{text: out, items: len(list.Items)}
}

// listableKinds is every resource kind of the cluster that can be listed,
// Secrets (where secrets belong) and Events (searched on their own) apart.
func listableKinds(t *testing.T, kubeconfig string) []string {
	t.Helper()
	var kinds []string
	for _, k := range strings.Fields(kubectlStdout(t, kubeconfig, "api-resources", "--verbs=list", "-o", "name")) {
		if k != "secrets" && k != "events" && k != "events.events.k8s.io" {
			kinds = append(kinds, k)
		}
	}
	for _, must := range []string{"configmaps", "projects.automation.bastion.dev", "tasks.automation.bastion.dev"} {
		if !strings.Contains(" "+strings.Join(kinds, " ")+" ", " "+must+" ") {
			t.Fatalf("kubectl api-resources lacks %s: %v", must, kinds)
		}
	}
	return kinds
}

// kubectlStdout runs kubectl and returns its stdout (its warnings apart).
func kubectlStdout(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// dataDirFiles is the text of every file in the data dir but etcd's data
// (which holds the Secrets): the output store, the control plane's logs,
// what the runs left.
func dataDirFiles(t *testing.T, dataDir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(dataDir, "etcd") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "== %s\n%s\n", path, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "bastion.db") {
		t.Fatalf("the data dir holds no output store:\n%.2000s", b.String())
	}
	return b.String()
}

func hmacSHA256(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
