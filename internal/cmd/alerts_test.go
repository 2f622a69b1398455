package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/cli"
)

func parseAlertFlags(t *testing.T, args ...string) (alert.Config, error) {
	t.Helper()
	fs := cli.NewFlagSet("manager", &bytes.Buffer{})
	a := &alertFlags{}
	a.register(fs)
	if err := cli.Parse(fs, args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return a.config("https://bastion.example.com")
}

func TestAlertFlags_configureEverySender(t *testing.T) {
	t.Setenv(envSMTPPassword, "")
	t.Setenv(envTelegramToken, "")
	cfg, err := parseAlertFlags(t,
		"--smtp-host", "mail.example.com", "--smtp-port", "465", "--smtp-tls", "tls",
		"--smtp-username", "bastion", "--smtp-password-file", "/secrets/smtp/password", "--smtp-from", "Bastion <b@example.com>",
		"--telegram-token-file", "/secrets/telegram/token", "--telegram-api-url", "https://tg.internal",
		"--chat-webhook-url-file", "/secrets/webhook/url", "--alert-on-stopped", "--alert-attempts", "3", "--alert-backoff", "2s")
	if err != nil {
		t.Fatal(err)
	}
	want := alert.SMTP{Host: "mail.example.com", Port: 465, Security: "tls", Username: "bastion",
		Password: alert.Secret{File: "/secrets/smtp/password"}, From: "Bastion <b@example.com>"}
	if cfg.SMTP == nil || *cfg.SMTP != want {
		t.Errorf("SMTP = %+v, want %+v", cfg.SMTP, want)
	}
	if cfg.Telegram == nil || cfg.Telegram.Token.File != "/secrets/telegram/token" || cfg.Telegram.APIURL != "https://tg.internal" {
		t.Errorf("Telegram = %+v", cfg.Telegram)
	}
	if cfg.Webhook == nil || cfg.Webhook.URL.File != "/secrets/webhook/url" {
		t.Errorf("Webhook = %+v", cfg.Webhook)
	}
	if !cfg.Rules.OnStopped || cfg.Attempts != 3 || cfg.Backoff != 2*time.Second || cfg.PublicURL != "https://bastion.example.com" {
		t.Errorf("config = %+v", cfg)
	}
}

func TestAlertFlags_noSenderMeansNoAlerts(t *testing.T) {
	t.Setenv(envSMTPPassword, "")
	t.Setenv(envTelegramToken, "")
	cfg, err := parseAlertFlags(t)
	if err != nil || cfg.Enabled() {
		t.Fatalf("config %+v, %v; want no sender", cfg, err)
	}
}

func TestAlertFlags_takeSecretsFromTheEnvironmentWhenNoFileIsNamed(t *testing.T) {
	t.Setenv(envSMTPPassword, "from-env")
	t.Setenv(envTelegramToken, "1:token")
	cfg, err := parseAlertFlags(t, "--smtp-host", "mail", "--smtp-from", "b@example.com", "--smtp-username", "u")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SMTP.Password != (alert.Secret{Env: envSMTPPassword}) || cfg.Telegram == nil || cfg.Telegram.Token != (alert.Secret{Env: envTelegramToken}) {
		t.Errorf("secrets = %+v, %+v", cfg.SMTP.Password, cfg.Telegram)
	}
}

func TestAlertFlags_refuseBadSettingsAndSecretsOnTheCommandLine(t *testing.T) {
	t.Setenv(envSMTPPassword, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--smtp-host", "mail", "--smtp-from", "b@example.com", "--smtp-tls", "ssl"}, `security "ssl" is not one of none, tls, starttls`},
		{[]string{"--smtp-host", "mail"}, "the sender address"},
		{[]string{"--smtp-host", "mail", "--smtp-from", "b@example.com", "--smtp-username", "u"}, "a login needs a password file"},
		{[]string{"--alert-attempts", "0"}, "--alert-attempts must be at least 1"},
	} {
		_, err := parseAlertFlags(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	// There is no flag that takes a secret's value.
	for _, cmd := range []string{"manager", "dev"} {
		for _, flag := range []string{"--smtp-password", "--telegram-token", "--chat-webhook-url"} {
			var stderr bytes.Buffer
			if code := Main([]string{cmd, flag, "x"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "flag provided but not defined") {
				t.Errorf("bastion %s %s x = %d, %q", cmd, flag, code, stderr.String())
			}
		}
	}
}

func TestDev_refusesBadAlertSettingsBeforeStartingAnything(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"dev", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--assets", t.TempDir(),
		"--smtp-host", "mail", "--smtp-from", "b@example.com", "--smtp-tls", "ssl"}, &bytes.Buffer{}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), `alerts: SMTP: security "ssl"`) || strings.Contains(stderr.String(), "starting etcd") {
		t.Errorf("bastion dev = %d, %q", code, stderr.String())
	}
}
