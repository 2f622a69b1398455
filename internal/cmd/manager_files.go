// Files the manager reads at start-up: the initial admin's password and
// the runners' network policy, both mounted by the Helm chart.
package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/users"
)

// initialAdmin is the administrator `bastion manager` creates on a cluster
// with no users (the Helm chart's generated password, in a Secret). Under
// `bastion dev` seedAdmin draws the password instead.
type initialAdmin struct {
	Login    string
	Email    string
	Password string
}

// readPasswordFile reads the initial admin's password (readSecretFile).
func readPasswordFile(path string) (string, error) {
	return readSecretFile(path, "initial admin password")
}

// readSecretFile reads a value mounted from a Secret: one line, the
// trailing newline that editors and `echo` add is not part of it. A file,
// not a flag's value or an expanded $(VAR) in args: a process's argv is
// readable by every user of the machine (/proc/<pid>/cmdline).
func readSecretFile(path, what string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the %s: %w", what, unwrapPath(err))
	}
	value := strings.TrimRight(string(data), "\r\n")
	if value == "" {
		return "", fmt.Errorf("the %s file is empty", what)
	}
	return value, nil
}

// ensure creates the administrator if there are no users. It never touches
// an existing user: changing the Secret later does not reset a password
// someone has changed since (use `bastion user change-by-login`).
func (a initialAdmin) ensure(ctx context.Context, accounts *users.Store) error {
	created, err := seedUser(ctx, accounts, bastionv1.UserSpec{
		Username: a.Login, Name: "Administrator", Email: a.Email, Admin: true,
	}, a.Password)
	if err != nil {
		return err
	}
	if created {
		ctrl.Log.WithName("setup").Info("created the initial administrator", "login", a.Login)
	}
	return nil
}

// readRunnerNetworkPolicy reads the egress rules of task pods: a YAML
// document with an `egress` list, as in a NetworkPolicy's spec. Unknown
// fields are refused, so a typo never silently opens or closes traffic.
func readRunnerNetworkPolicy(path string) (*networkingv1.NetworkPolicySpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the runner network policy: %w", unwrapPath(err))
	}
	var rules struct {
		Egress []networkingv1.NetworkPolicyEgressRule `json:"egress"`
	}
	if err := yaml.UnmarshalStrict(data, &rules); err != nil {
		return nil, fmt.Errorf("runner network policy %s: %w", path, err)
	}
	return &networkingv1.NetworkPolicySpec{Egress: rules.Egress}, nil
}
