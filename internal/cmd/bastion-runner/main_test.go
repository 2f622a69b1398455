package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// bastion-runner exists to start without the manager's packages and
// their initialisation (docs/architecture.md, "Two binaries"): an import
// that brings one of them back would undo it without failing anything
// else.
func TestBastionRunner_linksNoneOfTheManagersPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "github.com/bastion-dev/bastion/internal/runner") {
		t.Fatalf("go list -deps gave %d packages, without internal/runner: %q", len(deps), deps)
	}
	forbidden := []string{
		"k8s.io/client-go/",
		"sigs.k8s.io/controller-runtime/pkg/client",
		"sigs.k8s.io/controller-runtime/pkg/manager",
		"github.com/bastion-dev/bastion/apiserver",
		"github.com/bastion-dev/bastion/controllers",
		"github.com/bastion-dev/bastion/internal/store",
		"github.com/bastion-dev/bastion/internal/controlplane",
		"modernc.org/sqlite",
		"github.com/jackc/pgx",
		"go.uber.org/zap",
		"github.com/prometheus/",
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("bastion-runner links %s", dep)
			}
		}
	}
}
