package users

import (
	"regexp"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

func TestValidate_usesTheSpecMessages(t *testing.T) {
	full := bastionv1.UserSpec{Username: "ann", Name: "Ann", Email: "ann@example.com"}
	cases := []struct {
		mutate   func(*bastionv1.UserSpec)
		password string
		want     string
	}{
		{func(s *bastionv1.UserSpec) { s.Name = " " }, "pw", "Name is required"},
		{func(s *bastionv1.UserSpec) { s.Username = "" }, "pw", "Username is required"},
		{func(s *bastionv1.UserSpec) { s.Email = "" }, "pw", "Email is required"},
		{func(*bastionv1.UserSpec) {}, "", "Password is required"},
	}
	for _, tc := range cases {
		spec := full
		tc.mutate(&spec)
		if err := validate(spec, tc.password); err == nil || err.Error() != tc.want {
			t.Errorf("validate(%+v) = %v, want %q", spec, err, tc.want)
		}
	}
	if err := validate(full, "pw"); err != nil {
		t.Errorf("validate(full) = %v", err)
	}
}

func TestRandomPassword_isAlphanumericOfTheRequestedLength(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		pw := RandomPassword(10)
		if !regexp.MustCompile(`^[A-Za-z0-9]{10}$`).MatchString(pw) {
			t.Fatalf("RandomPassword(10) = %q", pw)
		}
		seen[pw] = true
	}
	if len(seen) < 50 {
		t.Fatalf("only %d distinct passwords in 50", len(seen))
	}
}
