package controllers_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/alert/alerttest"
)

// The suite's alert senders are real servers on loopback, with the
// credentials below; no test may find these values in a log or an event.
const (
	suiteSMTPPassword = "suite-smtp-pa55word"
	suiteBotToken     = "4242:suite-bot-token"
	suitePublicURL    = "https://bastion.test"
)

var (
	suiteSMTP     *alerttest.SMTPServer
	suiteTelegram *alerttest.Recorder
	suiteWebhook  *alerttest.Recorder
	// suiteLogs holds every log line of the suite: the reconcilers' errors
	// and every line of the alert dispatcher, at every verbosity.
	suiteLogs = &syncBuffer{}
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startAlerts starts the SMTP server, the Telegram and webhook recorders
// and a dispatcher sending to them, with retries fast enough for a test.
// Its secrets are files in dir, as a mounted Secret would be.
func startAlerts(mgr ctrl.Manager, dir string) (*alert.Dispatcher, error) {
	var err error
	if suiteSMTP, err = alerttest.StartSMTPServer("bastion", suiteSMTPPassword); err != nil {
		return nil, err
	}
	suiteTelegram, suiteWebhook = alerttest.StartRecorder(), alerttest.StartRecorder()
	files := map[string]string{"smtp-password": suiteSMTPPassword, "telegram-token": suiteBotToken, "webhook-url": suiteWebhook.URL + "/hooks/suite"}
	for name, value := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(value+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	d, err := alert.New(alert.Config{
		PublicURL: suitePublicURL, Store: suiteStore,
		Log: funcr.New(func(prefix, args string) { fmt.Fprintln(suiteLogs, prefix, args) }, funcr.Options{Verbosity: 10}),
		SMTP: &alert.SMTP{Host: suiteSMTP.Host, Port: suiteSMTP.Port, Security: alert.SecurityNone, Username: "bastion",
			Password: alert.Secret{File: filepath.Join(dir, "smtp-password")}, From: "Bastion <bastion@bastion.test>"},
		Telegram: &alert.Telegram{Token: alert.Secret{File: filepath.Join(dir, "telegram-token")}, APIURL: suiteTelegram.URL + "/telegram"},
		Webhook:  &alert.Webhook{URL: alert.Secret{File: filepath.Join(dir, "webhook-url")}},
		Attempts: 3, Backoff: 300 * time.Millisecond, Timeout: 400 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	return d, mgr.Add(d)
}
