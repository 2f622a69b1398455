package alert_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"

	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/alert/alerttest"
	"github.com/bastion-dev/bastion/internal/store"
)

const (
	smtpPassword = "smtp-pa55word-never-shown"
	botToken     = "123456:bot-token-never-shown"
)

// logBuffer captures every log line, at every verbosity.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintln(&l.b, prefix, args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func secretFile(t *testing.T, value string) string {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openStore(t *testing.T) store.Store {
	s, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "alerts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func start(t *testing.T, cfg alert.Config) *alert.Dispatcher {
	t.Helper()
	d, err := alert.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

// eventually polls cond until it holds, with a deadline (gomega).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	NewWithT(t).Eventually(cond, 10*time.Second, 20*time.Millisecond).Should(BeTrue(), "waiting for %s", what)
}

func failedTask() alert.Task {
	start := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	return alert.Task{
		ProjectID: 7, ProjectName: "Ops", ProjectAlert: true, AlertChat: "-1001234",
		TemplateName: "Deploy", TaskID: 42, Status: alert.StatusError, Version: "1.2.0",
		Message: "nightly run", Reason: "exited with code 2", StartedBy: "Alice (alice)",
		Start: start, End: start.Add(83 * time.Second),
		Members: []alert.Member{
			{Login: "alice", Email: "alice@example.com", Alert: true},
			{Login: "bob", Email: "bob@example.com", Alert: false},
			{Login: "carol", Email: "carol@example.com", Alert: true},
		},
	}
}

func TestDispatcher_emailsEveryMemberWithAlertOnThroughARealSMTPServer(t *testing.T) {
	smtp := alerttest.NewSMTPServer(t, "bastion", smtpPassword)
	out := openStore(t)
	task := failedTask()
	key := store.TaskKey{ProjectID: task.ProjectID, TaskID: task.TaskID}
	var lines []store.Line
	for i := 1; i <= 30; i++ {
		lines = append(lines, store.Line{Seq: int64(i), Time: time.Now(), Output: fmt.Sprintf("\x1b[0;32moutput line %d\x1b[0m", i)})
	}
	if err := out.AppendLines(context.Background(), key, lines); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	d := start(t, alert.Config{
		PublicURL: "https://bastion.example.com/", Store: out, Log: logs.logger(),
		SMTP: &alert.SMTP{Host: smtp.Host, Port: smtp.Port, Security: alert.SecurityNone, Username: "bastion",
			Password: alert.Secret{File: secretFile(t, smtpPassword)}, From: "Bastion <bastion@example.com>"},
	})
	d.Notify(task)
	eventually(t, "two mails", func() bool { return len(smtp.Mails()) == 2 })

	var to []string
	for _, m := range smtp.Mails() {
		to = append(to, m.To...)
		if m.From != "bastion@example.com" || m.Login != "bastion" {
			t.Errorf("envelope from %q, login %q", m.From, m.Login)
		}
		if got, want := m.Subject(), "[Ops] Deploy failed (task #42, version 1.2.0)"; got != want {
			t.Errorf("subject %q, want %q", got, want)
		}
		body := m.Body()
		for _, want := range []string{
			"Task #42 of Deploy in project Ops failed.",
			"Started by: Alice (alice)", "Started:    2026-11-23 17:00:00 UTC", "Ran for:    1m23s",
			"Message:    nightly run", "Result:     exited with code 2",
			"Last 20 lines of output:", "\n    output line 11\n", "\n    output line 30\n",
			"Open the task: https://bastion.example.com/project/7/history?t=42",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("body lacks %q:\n%s", want, body)
			}
		}
		if strings.Contains(body, "output line 10\n") {
			t.Errorf("body holds more than the last 20 lines:\n%s", body)
		}
	}
	if strings.Join(to, ",") != "alice@example.com,carol@example.com" && strings.Join(to, ",") != "carol@example.com,alice@example.com" {
		t.Errorf("recipients %v, want alice and carol (bob has alerts off)", to)
	}
	if strings.Contains(logs.String(), smtpPassword) {
		t.Errorf("the SMTP password is in the logs")
	}
}

func TestDispatcher_sendsTheTelegramMessageAtTheConfiguredBaseURLAndTheWebhookJSON(t *testing.T) {
	telegram := alerttest.NewRecorder(t)
	webhook := alerttest.NewRecorder(t)
	webhook.Answer(200, "ok")
	logs := &logBuffer{}
	d := start(t, alert.Config{
		PublicURL: "https://bastion.example.com", Store: openStore(t), Log: logs.logger(),
		Telegram: &alert.Telegram{Token: alert.Secret{File: secretFile(t, botToken)}, APIURL: telegram.URL + "/tg/"},
		Webhook:  &alert.Webhook{URL: alert.Secret{File: secretFile(t, webhook.URL+"/hooks/abc")}},
	})
	d.Notify(failedTask())
	eventually(t, "the bot message and the webhook", func() bool {
		return len(telegram.Requests()) == 1 && len(webhook.Requests()) == 1
	})

	bot := telegram.Requests()[0]
	if bot.Method != "POST" || bot.Path != "/tg/bot"+botToken+"/sendMessage" || bot.ContentType != "application/json" {
		t.Fatalf("bot request %s %s (%s)", bot.Method, bot.Path, bot.ContentType)
	}
	var msg struct {
		ChatID string `json:"chat_id"`
		Text   string `json:"text"`
	}
	if err := json.Unmarshal(bot.Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.ChatID != "-1001234" || !strings.HasPrefix(msg.Text, "[Ops] Deploy failed (task #42, version 1.2.0)\n") ||
		!strings.HasSuffix(msg.Text, "\nhttps://bastion.example.com/project/7/history?t=42") {
		t.Errorf("bot message %+v", msg)
	}

	hook := webhook.Requests()[0]
	var payload map[string]string
	if err := json.Unmarshal(hook.Body, &payload); err != nil {
		t.Fatal(err)
	}
	if hook.Path != "/hooks/abc" || len(payload) != 1 || payload["text"] != msg.Text {
		t.Errorf("webhook %s got %s, want {\"text\": the same text as the bot}", hook.Path, hook.Body)
	}
	if strings.Contains(logs.String(), botToken) {
		t.Errorf("the bot token is in the logs")
	}
}

func TestDispatcher_recordsAnEventAfterTheRetriesWithoutSecrets(t *testing.T) {
	dead := deadPort(t)
	telegram := alerttest.NewRecorder(t)
	telegram.Answer(401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
	out := openStore(t)
	logs := &logBuffer{}
	d := start(t, alert.Config{
		PublicURL: "https://bastion.example.com", Store: out, Log: logs.logger(),
		Attempts: 3, Backoff: 10 * time.Millisecond, Timeout: time.Second,
		SMTP: &alert.SMTP{Host: "127.0.0.1", Port: dead, Security: alert.SecurityNone, Username: "bastion",
			Password: alert.Secret{File: secretFile(t, smtpPassword)}, From: "bastion@example.com"},
		Telegram: &alert.Telegram{Token: alert.Secret{File: secretFile(t, botToken)}, APIURL: telegram.URL},
	})
	task := failedTask()
	task.Members = task.Members[:1]
	d.Notify(task)

	var events []store.Event
	eventually(t, "two failure events", func() bool {
		var err error
		events, err = out.Events(context.Background(), []int64{7}, 10)
		return err == nil && len(events) == 2
	})
	descriptions := events[0].Description + "\n" + events[1].Description
	for _, want := range []string{
		"alert to alice@example.com failed: dial tcp 127.0.0.1:",
		"alert to Telegram chat -1001234 failed: Telegram answered 401: Unauthorized",
	} {
		if !strings.Contains(descriptions, want) {
			t.Errorf("events lack %q:\n%s", want, descriptions)
		}
	}
	if n := len(telegram.Requests()); n != 3 {
		t.Errorf("Telegram was tried %d times, want 3", n)
	}
	for _, e := range events {
		if e.ObjectType != "task" || e.ObjectID != 42 || e.ProjectName != "Ops" {
			t.Errorf("event %+v does not name the task", e)
		}
	}
	haystack := descriptions + logs.String()
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("the retries were not logged:\n%s", logs.String())
	}
	for _, secret := range []string{smtpPassword, botToken, "bot-token-never-shown"} {
		if strings.Contains(haystack, secret) {
			t.Errorf("%q appears in an event or a log:\n%s", secret, haystack)
		}
	}
}

func TestDispatcher_notifyNeverBlocksAndAFullQueueDropsWithAWarning(t *testing.T) {
	smtp := alerttest.NewSMTPServer(t, "", "")
	logs := &logBuffer{}
	// Not started: nothing drains the queue of one.
	d, err := alert.New(alert.Config{
		Store: openStore(t), Log: logs.logger(), QueueSize: 1,
		SMTP: &alert.SMTP{Host: smtp.Host, Port: smtp.Port, Security: alert.SecurityNone, From: "bastion@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for range 5 {
		d.Notify(failedTask()) // two recipients each
	}
	if elapsed := time.Since(began); elapsed > time.Second {
		t.Fatalf("Notify took %s with a full queue", elapsed)
	}
	if n := strings.Count(logs.String(), "alert queue full; alert dropped"); n != 9 {
		t.Errorf("%d drops logged, want 9:\n%s", n, logs.String())
	}
}

func TestNew_refusesAnIncompleteConfiguration(t *testing.T) {
	out := openStore(t)
	for _, c := range []struct {
		cfg  alert.Config
		want string
	}{
		{alert.Config{Store: out, SMTP: &alert.SMTP{Port: 25, Security: "none", From: "a@b.c"}}, "SMTP: a host is required"},
		{alert.Config{Store: out, SMTP: &alert.SMTP{Host: "mail", Port: 25, Security: "ssl", From: "a@b.c"}}, `SMTP: security "ssl" is not one of none, tls, starttls`},
		{alert.Config{Store: out, SMTP: &alert.SMTP{Host: "mail", Port: 25, Security: "tls", From: "nobody"}}, `SMTP: the sender address "nobody" is not an address`},
		{alert.Config{Store: out, SMTP: &alert.SMTP{Host: "mail", Port: 25, Security: "tls", From: "a@b.c", Username: "u"}}, "SMTP: a login needs a password file"},
		{alert.Config{Store: out, Telegram: &alert.Telegram{}}, "Telegram: a bot token file is required"},
	} {
		_, err := alert.New(c.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("New = %v, want %q", err, c.want)
		}
	}
}

// deadPort is a loopback port nothing listens on.
func deadPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}
