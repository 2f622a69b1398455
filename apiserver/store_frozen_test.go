package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// Sign-in on a PostgreSQL store that stopped answering used to wait for
// ever, and with it every browser that tried. With the store's calls
// bounded (store.Bounded, as the manager opens it), sign-in answers 503
// once the bound has passed, saying to try again, and works again once
// PostgreSQL answers.
func TestStoreFrozen_signInAnswers503InsteadOfWaitingForEver(t *testing.T) {
	e := startEnv(t)
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, err := store.Open(t.Context(), srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const limit = time.Second
	b := e.browser(t)
	b.base = e.serve(t, func(_ string, o *apiserver.Options) { o.Store = store.Bounded(st, limit) })
	u, password := e.newUser(t, "frozen-store", false)
	login := map[string]string{"auth": u.Spec.Username, "password": password}

	thaw := srv.Freeze()
	defer thaw()
	start := time.Now()
	code, body := b.call("POST", "/api/auth/login", login)
	if took := time.Since(start); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "try again") || took > limit+5*time.Second {
		t.Fatalf("sign-in on a frozen store: %d %s after %v, want 503 saying to try again after about %v", code, body, took.Round(time.Millisecond), limit)
	}
	thaw()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, body = b.call("POST", "/api/auth/login", login); code == http.StatusNoContent || time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusNoContent {
		t.Fatalf("sign-in once PostgreSQL answers again: %d %s, want 204", code, body)
	}
}
