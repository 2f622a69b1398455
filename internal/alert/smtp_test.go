package alert_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/alert/alerttest"
	"github.com/bastion-dev/bastion/internal/store"
)

func TestSMTP_logsInOverSTARTTLSAndImplicitTLS(t *testing.T) {
	for _, security := range []string{alert.SecurityStartTLS, alert.SecurityTLS} {
		t.Run(security, func(t *testing.T) {
			server, trust := alerttest.NewTLSSMTPServer(t, "bastion", smtpPassword, security == alert.SecurityTLS)
			logs := &logBuffer{}
			d := start(t, alert.Config{
				PublicURL: "https://bastion.example.com", Store: openStore(t), Log: logs.logger(),
				SMTP: &alert.SMTP{Host: server.Host, Port: server.Port, Security: security, Username: "bastion",
					Password: alert.Secret{File: secretFile(t, smtpPassword)}, From: "bastion@example.com", TLSConfig: trust},
			})
			task := failedTask()
			task.Members = task.Members[:1]
			d.Notify(task)
			eventually(t, "the mail", func() bool { return len(server.Mails()) == 1 })
			m := server.Mails()[0]
			if !m.TLS || m.Login != "bastion" || m.To[0] != "alice@example.com" {
				t.Errorf("mail over TLS %v, login %q, to %v", m.TLS, m.Login, m.To)
			}
		})
	}
}

func TestSMTP_neverFallsBackToPlainTextWhenSTARTTLSIsMissing(t *testing.T) {
	plain := alerttest.NewSMTPServer(t, "bastion", smtpPassword)
	out := openStore(t)
	d := start(t, alert.Config{
		PublicURL: "https://bastion.example.com", Store: out, Log: (&logBuffer{}).logger(),
		Attempts: 2, Backoff: 10 * time.Millisecond,
		SMTP: &alert.SMTP{Host: plain.Host, Port: plain.Port, Security: alert.SecurityStartTLS, Username: "bastion",
			Password: alert.Secret{File: secretFile(t, smtpPassword)}, From: "bastion@example.com"},
	})
	task := failedTask()
	task.Members = task.Members[:1]
	d.Notify(task)
	var events []store.Event
	eventually(t, "the failure event", func() bool {
		events, _ = out.Events(context.Background(), nil, 10)
		return len(events) == 1
	})
	if want := "alert to alice@example.com failed: the server does not offer STARTTLS"; events[0].Description != want {
		t.Errorf("event %q, want %q", events[0].Description, want)
	}
	if len(plain.Mails()) != 0 || !strings.Contains(events[0].Description, "STARTTLS") {
		t.Errorf("a mail went out without TLS")
	}
}
