package cmd

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"

	"github.com/bastion-dev/bastion/internal/alert"
)

// Environment variables that may carry the alert secrets instead of a file
// (a Secret mapped into the manager's environment with secretKeyRef).
const (
	envSMTPPassword  = "BASTION_SMTP_PASSWORD"
	envTelegramToken = "BASTION_TELEGRAM_TOKEN"
)

// alertFlags are the settings of alerts on task results, shared by
// `bastion manager` and `bastion dev`. Secrets are named by file (or taken
// from the environment), never given as flag values: argv is visible to
// every user of the machine and in the pod's spec.
type alertFlags struct {
	smtpHost, smtpSecurity, smtpUsername, smtpPasswordFile, smtpFrom string
	smtpPort                                                         int
	telegramTokenFile, telegramAPIURL                                string
	webhookURLFile                                                   string
	onStopped                                                        bool
	attempts                                                         int
	backoff                                                          time.Duration
}

func (a *alertFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.smtpHost, "smtp-host", "", "mail server for alert emails (empty: no emails)")
	fs.IntVar(&a.smtpPort, "smtp-port", 587, "mail server port")
	fs.StringVar(&a.smtpSecurity, "smtp-tls", alert.SecurityStartTLS, "mail server security: none, tls (port 465) or starttls")
	fs.StringVar(&a.smtpUsername, "smtp-username", "", "mail server login (empty: none)")
	fs.StringVar(&a.smtpPasswordFile, "smtp-password-file", "", "file holding the mail server password (else $"+envSMTPPassword+")")
	fs.StringVar(&a.smtpFrom, "smtp-from", "", `sender of alert emails, e.g. "Bastion <bastion@example.com>"`)
	fs.StringVar(&a.telegramTokenFile, "telegram-token-file", "", "file holding the Telegram bot token (else $"+envTelegramToken+"); sends to each project's alert chat")
	fs.StringVar(&a.telegramAPIURL, "telegram-api-url", alert.DefaultTelegramAPI, "Telegram Bot API base URL")
	fs.StringVar(&a.webhookURLFile, "chat-webhook-url-file", "", "file holding a Slack- or Mattermost-compatible incoming webhook URL; posts each alert of projects with an alert chat")
	fs.BoolVar(&a.onStopped, "alert-on-stopped", false, "also alert when a task is stopped")
	fs.IntVar(&a.attempts, "alert-attempts", 5, "tries per alert before it is recorded as failed")
	fs.DurationVar(&a.backoff, "alert-backoff", 10*time.Second, "wait before the first retry of an alert; doubled for each next one")
}

// config turns the flags into the dispatcher's settings (without the
// store and log, which exist only once the manager is built) and checks
// them, so bad flags are refused before anything starts.
func (a *alertFlags) config(publicURL string) (alert.Config, error) {
	cfg := alert.Config{PublicURL: publicURL, Rules: alert.Rules{OnStopped: a.onStopped}, Attempts: a.attempts, Backoff: a.backoff}
	if a.attempts < 1 {
		return cfg, fmt.Errorf("--alert-attempts must be at least 1")
	}
	if a.smtpHost != "" {
		cfg.SMTP = &alert.SMTP{
			Host: a.smtpHost, Port: a.smtpPort, Security: a.smtpSecurity, From: a.smtpFrom,
			Username: a.smtpUsername, Password: secretFrom(a.smtpPasswordFile, envSMTPPassword),
		}
	}
	if token := secretFrom(a.telegramTokenFile, envTelegramToken); token.Set() {
		cfg.Telegram = &alert.Telegram{Token: token, APIURL: a.telegramAPIURL}
	}
	if a.webhookURLFile != "" {
		cfg.Webhook = &alert.Webhook{URL: alert.Secret{File: a.webhookURLFile}}
	}
	if err := cfg.Check(); err != nil {
		return cfg, fmt.Errorf("alerts: %w", err)
	}
	return cfg, nil
}

// secretFrom is the file if one is named, else the environment variable
// if it is set.
func secretFrom(file, env string) alert.Secret {
	if file != "" {
		return alert.Secret{File: file}
	}
	if os.Getenv(env) != "" {
		return alert.Secret{Env: env}
	}
	return alert.Secret{}
}

// newAlerts makes the dispatcher, or nil when no sender is configured.
func newAlerts(cfg alert.Config, st alert.Store, log logr.Logger) (*alert.Dispatcher, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	cfg.Store, cfg.Log = st, log
	return alert.New(cfg)
}
