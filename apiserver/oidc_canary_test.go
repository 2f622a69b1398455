package apiserver_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/oidc"
)

// TestCanary_oidcClientSecretNeverInAnswersOrLogs signs in through a real
// OpenID Connect provider with a canary client secret, then with a wrong
// one, which this provider quotes back in its refusal ("Invalid client
// secret: …", as some do): neither secret appears in any answer, in the
// page the browser is sent back to, or in the server's log (the secrets
// canary, docs/reliability.md §7).
func TestCanary_oidcClientSecretNeverInAnswersOrLogs(t *testing.T) {
	const right, wrong = `CANARY-oidc-secret-4b1e"\é`, `CANARY-oidc-wrong-secret-8c2d"\é`
	e := startEnv(t)
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	m.ClientSecret = right
	var answers []string
	signIn := func(secret string) *url.URL {
		base := e.serve(t, func(publicURL string, o *apiserver.Options) {
			p, err := oidc.New(t.Context(), []oidc.ProviderConfig{{ID: "mock", Name: "Mock SSO", Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: secret}}, publicURL)
			if err != nil {
				t.Fatal(err)
			}
			o.OIDC = p
		})
		b := e.browser(t)
		b.base = base
		login := fmt.Sprintf("sso-canary-%d", userSeq.Add(1))
		m.QueueUser(&mockoidc.MockUser{Subject: "sub-" + login, Email: login + "@corp.test", EmailVerified: true, PreferredUsername: login})
		landed := ssoSignIn(t, b, "")
		answers = append(answers, landed.String(), landed.Query().Get("error"))
		code, data := b.call("GET", "/api/user", nil)
		answers = append(answers, fmt.Sprintf("GET /api/user -> %d %s", code, data))
		code, data = b.call("GET", "/api/auth/login", nil)
		answers = append(answers, fmt.Sprintf("GET /api/auth/login -> %d %s", code, data))
		return landed
	}

	if landed := signIn(right); landed.Path != "/" {
		t.Fatalf("the right secret did not sign in: landed at %v", landed)
	}
	landed := signIn(wrong)
	if reason := landed.Query().Get("error"); landed.Path != "/auth/login" || !strings.Contains(reason, "sign-in failed") {
		t.Fatalf("the wrong secret: landed at %v, reason %q", landed, reason)
	}

	hay := map[string]string{"answers": strings.Join(answers, "\n"), "log": e.Log.String()}
	var needles []string
	for _, s := range []string{right, wrong} {
		core := strings.TrimSuffix(s, `"\é`)
		needles = append(needles, core, url.QueryEscape(s))
	}
	assertNoSecret(t, hay, needles)
	// The refusal reached Bastion and says why, in the provider's code.
	if reason := landed.Query().Get("error"); !strings.Contains(reason, "invalid_client") {
		t.Errorf("the wrong secret's reason %q does not name the provider's refusal", reason)
	}
}
