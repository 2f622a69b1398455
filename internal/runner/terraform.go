package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bastion-dev/bastion/internal/runproto"
)

// Confirmer is a Sink that can report phases and wait for the user's
// confirmation (the Streamer, talking to the manager).
type Confirmer interface {
	SetPhase(phase string)
	// WaitConfirmation returns nil once the user confirmed, or ctx's error
	// when the task is stopped first.
	WaitConfirmation(ctx context.Context) error
}

// errNoConfirmation: a plan with changes, and nobody to confirm it.
var errNoConfirmation = errors.New("the plan has changes and needs a confirmation, which only a runner connected to the manager can receive")

// terraform runs init, selects or creates the workspace, plans, and applies
// the saved plan once the user confirmed it. A plan without changes
// succeeds at once; a dry run stops after the plan.
func (t *taskRun) terraform(ctx context.Context, checkout string, sink Sink) (int, error) {
	s := t.in.Spec
	bin, err := t.binary(s.App)
	if err != nil {
		return -1, err
	}
	dir := checkout
	if s.Playbook != "" && s.Playbook != "." {
		if dir, err = inside(checkout, s.Playbook, "the terraform directory"); err != nil {
			return -1, err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return -1, fmt.Errorf("the terraform directory %q is not a directory in the repository", s.Playbook)
		}
	}
	env, err := t.programEnv()
	if err != nil {
		return -1, err
	}
	env = append(env, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "TF_DATA_DIR="+filepath.Join(t.private, "terraform"))
	varArgs, err := t.terraformVars()
	if err != nil {
		return -1, err
	}
	step := func(args ...string) (int, error) {
		return run(ctx, process{path: bin, args: append([]string{"-chdir=" + dir}, args...), dir: dir, env: env, program: true}, t.out)
	}

	if code, err := step("init", "-input=false", "-no-color"); err != nil || code != 0 {
		return code, err
	}
	workspace := "default"
	if s.Inventory != nil && s.Inventory.Name != "" {
		workspace = s.Inventory.Name
	}
	if code, err := step("workspace", "select", "-or-create=true", "-no-color", workspace); err != nil || code != 0 {
		return code, err
	}

	plan := filepath.Join(t.private, "plan.tfplan")
	args := append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=" + plan}, varArgs...)
	code, err := step(append(args, s.Arguments...)...)
	switch {
	case err != nil || code == 1:
		return code, err
	case code == 0: // "No changes."
		return 0, nil
	case code != 2:
		return code, nil
	}
	if s.DryRun {
		return 0, nil // a dry run is the plan
	}

	confirmer, ok := sink.(Confirmer)
	if !ok {
		return -1, errNoConfirmation
	}
	confirmer.SetPhase(runproto.PhaseWaitingConfirmation)
	if err := confirmer.WaitConfirmation(ctx); err != nil {
		return -1, fmt.Errorf("stopped while waiting for confirmation: %w", err)
	}
	confirmer.SetPhase(runproto.PhaseRunning)
	return step("apply", "-input=false", "-no-color", plan)
}

// terraformVars are plan's arguments for the variables: -var k=v for each
// one that is not secret, and the secret ones in a 0600 -var-file of the
// private directory, never in argv (/proc/<pid>/cmdline is readable by
// every user of the machine). The file comes last, so its values win, as a
// secret value does over a plain one in every app.
func (t *taskRun) terraformVars() ([]string, error) {
	vars, secret, err := t.plainAndSecretVars()
	if err != nil {
		return nil, err
	}
	var args []string
	for _, k := range sortedKeys(vars) {
		args = append(args, "-var", k+"="+scalar(vars[k]))
	}
	if len(secret) == 0 {
		return args, nil
	}
	data, _ := json.Marshal(secret)
	file, err := writePrivate(filepath.Join(t.private, "secret-vars.tfvars.json"), string(data))
	if err != nil {
		return nil, err
	}
	return append(args, "-var-file="+file), nil
}
