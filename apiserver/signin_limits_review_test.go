package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// Review of issue #19 (sign-in): the per-account delay is keyed by the
// login as typed (lower-cased), but a login names its user by username,
// or by email in any case (strings.EqualFold). So one account has many
// keys, each with its own three free guesses and its own delay:
//   - its username and its email;
//   - every spelling of the email that EqualFold accepts but ToLower keeps
//     apart: 's' may be typed as U+017F (ſ), 'k' as U+212A and so on, so an
//     email with n letters s has 2^n keys.
//
// The test spends the username's free guesses, then guesses the same
// account through its email and a long-s spelling of it from the same
// address: each must wait like the username does (429).
func TestSignIn_review_accountDelayCannotBeDodgedBySpellingTheLoginAnotherWay(t *testing.T) {
	e := startEnv(t)
	owner, password := e.newUser(t, "spell", false)
	b := limitServer(t, e, "127.0.0.1/32", "::1/128")
	const attacker = "203.0.113.70"

	for i := range 3 {
		if a := signInFrom(t, b, attacker, owner.Spec.Username, "guess"); a.code != http.StatusUnauthorized {
			t.Fatalf("free guess %d at the username = %+v, want 401", i, a)
		}
	}
	if a := signInFrom(t, b, attacker, owner.Spec.Username, "guess"); a.code != http.StatusTooManyRequests {
		t.Fatalf("a 4th guess at the username = %+v, want 429", a)
	}

	longS := strings.ReplaceAll(owner.Spec.Email, "s", "\u017f")
	for _, login := range []string{owner.Spec.Email, strings.ToUpper(owner.Spec.Email), longS} {
		if a := signInFrom(t, b, attacker, login, "guess"); a.code != http.StatusTooManyRequests {
			t.Errorf("during the account's delay, a guess at it as %q = %+v, want 429: another spelling of the login is a fresh budget of guesses", login, a)
		}
	}

	// Each spelling does name the account: the owner gets in with it from
	// an address that has not guessed.
	if a := signInFrom(t, b, "198.51.100.70", longS, password); a.code != http.StatusNoContent {
		t.Fatalf("the owner signing in as %q = %+v, want 204 (it names the account)", longS, a)
	}
}
