package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/alert/alerttest"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// `bastion dev` with the alert flags: a failed task, run by the real
// runner, reaches a real SMTP server and a Telegram Bot API on loopback,
// with its own output in the mail, and the secrets stay in their files.
func TestDev_alertsOfAFailedTaskReachMailAndTelegram(t *testing.T) {
	t.Parallel()
	const password, token = "e2e-smtp-pa55word", "777:e2e-bot-token"
	smtp := alerttest.NewSMTPServer(t, "bastion", password)
	telegram := alerttest.NewRecorder(t)
	secrets := t.TempDir()
	for name, value := range map[string]string{"smtp-password": password, "telegram-token": token} {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("broken.sh", "#!/bin/bash\necho checking the disks\necho about to fail\nexit 3\n", true)

	dev := startDev(t, t.TempDir(),
		"--smtp-host", smtp.Host, "--smtp-port", fmt.Sprint(smtp.Port), "--smtp-tls", "none",
		"--smtp-username", "bastion", "--smtp-password-file", filepath.Join(secrets, "smtp-password"),
		"--smtp-from", "Bastion <bastion@example.com>",
		"--telegram-token-file", filepath.Join(secrets, "telegram-token"), "--telegram-api-url", telegram.URL+"/tg")
	dev.waitReady()
	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))

	// The admin turns alerts on for their account, then makes a project
	// that allows them, with a chat.
	var me map[string]any
	api.must("GET", "/api/user", nil, http.StatusOK, &me)
	me["alert"] = true
	api.must("PUT", fmt.Sprintf("/api/users/%v", me["id"]), me, http.StatusNoContent, nil)
	var project struct {
		ID int64 `json:"id"`
	}
	api.must("POST", "/api/projects", map[string]any{"name": "Nightly", "alert": true, "alert_chat": "-4242"}, http.StatusCreated, &project)
	p := "/api/project/" + itoa(project.ID)
	api.must("POST", p+"/keys", map[string]any{"name": "nothing", "type": "none"}, http.StatusNoContent, nil)
	keyID := api.idNamed(p+"/keys", "nothing")
	api.must("POST", p+"/repositories", map[string]any{"name": "scripts", "git_url": repo.Path, "ssh_key_id": keyID}, http.StatusNoContent, nil)
	var inventory, template, task struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/inventory", map[string]any{"name": "here", "type": "static", "inventory": "localhost\n", "ssh_key_id": keyID}, http.StatusCreated, &inventory)
	api.must("POST", p+"/environment", map[string]any{"name": "none", "json": "{}", "env": "{}"}, http.StatusNoContent, nil)
	api.must("POST", p+"/templates", map[string]any{
		"name": "Disk check", "playbook": "broken.sh", "app": "bash", "repository_id": api.idNamed(p+"/repositories", "scripts"),
		"inventory_id": inventory.ID, "environment_id": api.idNamed(p+"/environment", "none"),
	}, http.StatusCreated, &template)
	api.must("POST", p+"/tasks", map[string]any{"template_id": template.ID, "message": "nightly check"}, http.StatusCreated, &task)

	eventually(t, 2*time.Minute, "the alert email", func() error {
		if n := len(smtp.Mails()); n != 1 {
			return fmt.Errorf("%d mails", n)
		}
		return nil
	})
	mail := smtp.Mails()[0]
	if mail.To[0] != "admin@localhost" || mail.Login != "bastion" || mail.Subject() != fmt.Sprintf("[Nightly] Disk check failed (task #%d)", task.ID) {
		t.Fatalf("mail to %v, login %q, subject %q", mail.To, mail.Login, mail.Subject())
	}
	body := mail.Body()
	for _, want := range []string{
		"Started by: Administrator (admin)", "Message:    nightly check", "the runner exited with code 3",
		"    checking the disks\n    about to fail\n",
		fmt.Sprintf("Open the task: %s/project/%d/history?t=%d", dev.url, project.ID, task.ID),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the mail lacks %q:\n%s", want, body)
		}
	}

	eventually(t, 30*time.Second, "the Telegram message", func() error {
		if n := len(telegram.Requests()); n != 1 {
			return fmt.Errorf("%d requests", n)
		}
		return nil
	})
	bot := telegram.Requests()[0]
	var msg struct {
		ChatID string `json:"chat_id"`
		Text   string `json:"text"`
	}
	if err := json.Unmarshal(bot.Body, &msg); err != nil || bot.Path != "/tg/bot"+token+"/sendMessage" || msg.ChatID != "-4242" ||
		!strings.HasPrefix(msg.Text, "[Nightly] Disk check failed") {
		t.Fatalf("bot request %s: %s (%v)", bot.Path, bot.Body, err)
	}

	for _, secret := range []string{password, token} {
		if strings.Contains(dev.output(), secret) {
			t.Errorf("a secret appears in the output or the log of bastion dev")
		}
	}
}
