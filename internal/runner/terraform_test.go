package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// confirmingSink collects lines and plays the user: it records phases and
// confirms (or not) when asked.
type confirmingSink struct {
	collector
	mu      sync.Mutex
	phases  []string
	confirm chan struct{}
}

func (c *confirmingSink) SetPhase(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phases = append(c.phases, p)
}

func (c *confirmingSink) WaitConfirmation(ctx context.Context) error {
	select {
	case <-c.confirm:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func needTerraform(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatal("terraform is not in PATH: `make test` puts the one `make terraform` builds there")
	}
}

// terraformRepo is a configuration with one terraform_data resource (no
// provider to download) whose state lives in stateDir across runs, as a
// remote backend would keep it.
func terraformRepo(t *testing.T, stateDir string) *gittest.Repo {
	repo := gittest.NewRepo(t)
	repo.WriteFile("infra/main.tf", fmt.Sprintf(`terraform {
  backend "local" {
    path = %q
  }
}
variable "greeting" {
  type    = string
  default = "none"
}
resource "terraform_data" "hello" {
  input = var.greeting
}
output "greeting" {
  value = terraform_data.hello.output
}
`, filepath.Join(stateDir, "terraform.tfstate")), false)
	return repo
}

func terraformRun(t *testing.T, repo *gittest.Repo, sink Sink, ctx context.Context, mutate func(*runspec.Spec)) Result {
	t.Helper()
	spec := runspec.Spec{App: "terraform", Playbook: "infra", Repository: runspec.Repository{URL: repo.Path},
		ExtraVars: []byte(`{"greeting":"hello-terraform"}`)}
	if mutate != nil {
		mutate(&spec)
	}
	return Run(ctx, newInputs(t, spec, nil), filepath.Join(t.TempDir(), "work"), sink)
}

func TestTerraform_plansWaitsForConfirmationAppliesAndThenHasNoChanges(t *testing.T) {
	needTerraform(t)
	repo := terraformRepo(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	first := &confirmingSink{confirm: make(chan struct{})}
	done := make(chan Result, 1)
	go func() { done <- terraformRun(t, repo, first, ctx, nil) }()
	waitFor(t, func() bool {
		first.mu.Lock()
		defer first.mu.Unlock()
		return len(first.phases) > 0 && first.phases[0] == runproto.PhaseWaitingConfirmation
	})
	if contains(first.all(), "Apply complete") {
		t.Fatal("applied before the confirmation")
	}
	close(first.confirm)
	res := <-done
	if !res.Succeeded() || !contains(first.all(), "Apply complete! Resources: 1 added") || !contains(first.all(), `greeting = "hello-terraform"`) {
		t.Fatalf("%+v\n%s", res, strings.Join(first.all(), "\n"))
	}

	// Nothing changed since: success without asking.
	second := &confirmingSink{confirm: make(chan struct{})}
	res = terraformRun(t, repo, second, ctx, nil)
	if !res.Succeeded() || !contains(second.all(), "No changes.") || len(second.phases) != 0 {
		t.Fatalf("second run %+v, phases %v\n%s", res, second.phases, strings.Join(second.all(), "\n"))
	}
}

func TestTerraform_stopWhileWaitingAbortsWithoutApplying(t *testing.T) {
	needTerraform(t)
	repo := terraformRepo(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	sink := &confirmingSink{confirm: make(chan struct{})}
	done := make(chan Result, 1)
	go func() { done <- terraformRun(t, repo, sink, ctx, nil) }()
	waitFor(t, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.phases) > 0
	})
	cancel() // the user stopped the task
	res := <-done
	if res.Err == nil || !errors.Is(res.Err, context.Canceled) || contains(sink.all(), "Apply complete") {
		t.Fatalf("%+v\n%s", res, strings.Join(sink.all(), "\n"))
	}
}

func TestTerraform_dryRunIsThePlanAlone(t *testing.T) {
	needTerraform(t)
	repo := terraformRepo(t, t.TempDir())
	sink := &confirmingSink{confirm: make(chan struct{})}
	res := terraformRun(t, repo, sink, context.Background(), func(s *runspec.Spec) { s.DryRun = true })
	if !res.Succeeded() || len(sink.phases) != 0 || contains(sink.all(), "Apply complete") || !contains(sink.all(), "Plan: 1 to add") {
		t.Fatalf("%+v %v\n%s", res, sink.phases, strings.Join(sink.all(), "\n"))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The exit race through terraform: apply prints a 3,000-element output and
// exits at once.
func TestTerraform_losesNoOutputWhenItEnds(t *testing.T) {
	needTerraform(t)
	repo := gittest.NewRepo(t)
	repo.WriteFile("main.tf", "output \"numbers\" {\n  value = concat(range(1, 1001), range(1001, 2001), range(2001, 3001))\n}\n", false)
	sink := &confirmingSink{confirm: make(chan struct{})}
	close(sink.confirm)
	res := Run(context.Background(), newInputs(t, runspec.Spec{App: "terraform", Repository: runspec.Repository{URL: repo.Path}}, nil),
		filepath.Join(t.TempDir(), "work"), sink)
	if got, ok := countNumbers(sink.all()[indexOf(sink.all(), "Apply complete"):], 3000); !res.Succeeded() || !ok {
		t.Fatalf("%+v: %d of 3000 numbers after the apply", res, got)
	}
}

func indexOf(lines []string, part string) int {
	for i, l := range lines {
		if strings.Contains(l, part) {
			return i
		}
	}
	return len(lines)
}

// The workspace is the inventory's name, created on the first run and
// selected (not created again, which would fail) on the next; without an
// inventory it is default. The state of every workspace lives in stateDir,
// as a remote backend would keep it, since each run has a fresh checkout.
func TestTerraform_runsInTheInventorysWorkspaceSelectingOrCreatingIt(t *testing.T) {
	needTerraform(t)
	stateDir := t.TempDir()
	repo := gittest.NewRepo(t)
	repo.WriteFile("infra/main.tf", fmt.Sprintf(`terraform {
  backend "local" {
    path          = %q
    workspace_dir = %q
  }
}
variable "greeting" {
  type = string # terraformRun passes it
}
resource "terraform_data" "where" {
  input = terraform.workspace
}
output "workspace" {
  value = terraform_data.where.output
}
`, filepath.Join(stateDir, "terraform.tfstate"), filepath.Join(stateDir, "workspaces")), false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	confirmed := func() *confirmingSink {
		s := &confirmingSink{confirm: make(chan struct{})}
		close(s.confirm)
		return s
	}
	staging := func(s *runspec.Spec) {
		s.Inventory = &runspec.Inventory{Type: "terraform-workspace", Name: "staging"}
	}

	first := confirmed()
	res := terraformRun(t, repo, first, ctx, staging)
	if !res.Succeeded() || !contains(first.all(), `Created and switched to workspace "staging"`) || !contains(first.all(), `workspace = "staging"`) {
		t.Fatalf("first run %+v\n%s", res, strings.Join(first.all(), "\n"))
	}
	if _, err := os.Stat(filepath.Join(stateDir, "workspaces", "staging", "terraform.tfstate")); err != nil {
		t.Fatalf("no state for workspace staging: %v", err)
	}

	// The workspace exists now: selected, and its state has the resource.
	second := confirmed()
	res = terraformRun(t, repo, second, ctx, staging)
	if !res.Succeeded() || !contains(second.all(), `Switched to workspace "staging".`) || contains(second.all(), "Created and switched") ||
		!contains(second.all(), "No changes.") {
		t.Fatalf("second run %+v\n%s", res, strings.Join(second.all(), "\n"))
	}

	// No inventory: default, whose state is still empty.
	plain := confirmed()
	res = terraformRun(t, repo, plain, ctx, nil)
	if !res.Succeeded() || !contains(plain.all(), `workspace = "default"`) || !contains(plain.all(), "Apply complete! Resources: 1 added") {
		t.Fatalf("default run %+v\n%s", res, strings.Join(plain.all(), "\n"))
	}
}
