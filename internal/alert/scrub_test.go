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

// A chat webhook's URL is its credential, and receivers quote parts of it
// back: a web framework's 404 page says "Cannot POST /hooks/<token>", a bot
// API "invalid token <secret half>". The failure's reason went to the log
// and to an event the project's members read with the path in it (found by
// the secrets canary, docs/reliability.md §7); now every part is masked.
func TestDispatcher_receiversThatQuoteTheirSecretURLOrTokenLeaveItInNoEventOrLog(t *testing.T) {
	const (
		hookToken = "T0KEN-in-the-hook-path-5f1c2a"
		botSecret = "bot-secret-half-9d8e7f"
	)
	chat := alerttest.NewRecorder(t)
	chat.Answer(404, "Cannot POST /services/T01/"+hookToken+" (and the token alone: "+hookToken+")")
	telegram := alerttest.NewRecorder(t)
	telegram.Answer(401, `{"ok":false,"description":"Unauthorized: `+botSecret+` is not a token"}`)
	out := openStore(t)
	logs := &logBuffer{}
	d := start(t, alert.Config{
		PublicURL: "https://bastion.example.com", Store: out, Log: logs.logger(), Attempts: 2, Backoff: 10 * time.Millisecond, Timeout: time.Second,
		Webhook:  &alert.Webhook{URL: alert.Secret{File: secretFile(t, chat.URL+"/services/T01/"+hookToken)}},
		Telegram: &alert.Telegram{Token: alert.Secret{File: secretFile(t, "4242:"+botSecret)}, APIURL: telegram.URL},
	})
	d.Notify(failedTask())

	var events []store.Event
	eventually(t, "two failure events", func() bool {
		var err error
		events, err = out.Events(context.Background(), []int64{7}, 10)
		return err == nil && len(events) == 2
	})
	var descriptions []string
	for _, e := range events {
		descriptions = append(descriptions, e.Description)
	}
	joined := strings.Join(descriptions, "\n")
	for _, want := range []string{
		"alert to the chat webhook failed: the webhook answered 404: Cannot POST ******** (and the token alone: ********)",
		"alert to Telegram chat -1001234 failed: Telegram answered 401: Unauthorized: ******** is not a token",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("events lack %q:\n%s", want, joined)
		}
	}
	if len(chat.Requests()) != 2 || !strings.Contains(logs.String(), "retrying") {
		t.Errorf("the webhook was tried %d times; log:\n%s", len(chat.Requests()), logs.String())
	}
	for _, secret := range []string{hookToken, botSecret} {
		if strings.Contains(joined+logs.String(), secret) {
			t.Errorf("%q appears in an event or the log:\n%s\n%s", secret, joined, logs.String())
		}
	}
}
