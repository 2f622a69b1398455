package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/users"
)

// TestCanary_noPasswordOrHashInAnswersLogsOrEvents walks every call that
// carries a password (sign-in, failed sign-in, user creation, password
// change, bad input) with distinctive canary passwords, then searches every
// answer, everything the server logged and every stored event for the
// canaries and for their bcrypt hashes.
func TestCanary_noPasswordOrHashInAnswersLogsOrEvents(t *testing.T) {
	e := startEnv(t)
	adminUser, adminPW := e.newUser(t, "canaryadmin", true)
	canaries := []string{"CANARY-first-pw-7f3a", "CANARY-second-pw-91c2", "CANARY-wrong-pw-5d5d", "CANARY-new-user-pw-11aa"}
	var answers []string
	call := func(b *browser, method, path string, body any) (int, []byte) {
		code, data := b.call(method, path, body)
		answers = append(answers, fmt.Sprintf("%s %s -> %d %s", method, path, code, data))
		return code, data
	}

	a := e.signIn(t, adminUser.Spec.Username, adminPW)
	login := fmt.Sprintf("canary-%d", userSeq.Add(1))
	code, data := call(a, "POST", "/api/users", map[string]any{"name": "Canary", "username": login, "email": login + "@example.test", "password": canaries[0]})
	if code != http.StatusCreated {
		t.Fatalf("create = %d %s", code, data)
	}
	u, err := e.Users.FindByLogin(t.Context(), login)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser(t)
	call(b, "POST", "/api/auth/login", map[string]string{"auth": login, "password": canaries[2]})
	if code, _ := call(b, "POST", "/api/auth/login", map[string]string{"auth": login, "password": canaries[0]}); code != http.StatusNoContent {
		t.Fatalf("sign-in = %d", code)
	}
	id := itoa(userIDOf(t, u))
	call(b, "POST", "/api/users/"+id+"/password", map[string]string{"password": canaries[1]})
	// Bad input that carries a password: a duplicate user, a bad body.
	call(a, "POST", "/api/users", map[string]any{"name": "Dup", "username": login, "email": "dup@example.test", "password": canaries[3]})
	call(a, "POST", "/api/users", []byte(`{"name":"X","password":"`+canaries[3]+`",`))
	call(b, "POST", "/api/auth/login", []byte(`{"auth":5,"password":"`+canaries[3]+`"}`))
	call(a, "GET", "/api/users/"+id, nil)
	call(a, "GET", "/api/users", nil)
	call(b, "GET", "/api/user", nil)

	secret := &corev1.Secret{}
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: managerNamespace, Name: users.PasswordSecretName(u)}, secret); err != nil {
		t.Fatal(err)
	}
	hash := string(secret.Data[users.PasswordHashKey])
	if !strings.HasPrefix(hash, "$2") {
		t.Fatalf("stored hash %q is not bcrypt", hash[:4])
	}
	needles := append(append([]string{}, canaries...), hash, hash[7:29] /* the salt */)

	events, err := e.Store.Events(t.Context(), nil, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, ev := range events {
		stored = append(stored, fmt.Sprintf("%+v", ev))
	}
	haystacks := map[string]string{
		"answers": strings.Join(answers, "\n"),
		"log":     e.Log.String(),
		"events":  strings.Join(stored, "\n"),
	}
	if len(haystacks["log"]) == 0 || len(stored) == 0 {
		t.Fatalf("nothing to search: log %d bytes, %d events", len(haystacks["log"]), len(stored))
	}
	for where, hay := range haystacks {
		for _, n := range needles {
			if strings.Contains(hay, n) {
				t.Errorf("%s contains a secret (%.12s...)", where, n)
			}
		}
	}
}
