package cmd

import (
	"errors"
	"io"
)

// runRunner will run one task from the inputs its launcher lays out (see
// internal/runspec): checkout, inventory, keys, the ansible, terraform or
// bash process, and the output stream to the manager. That arrives with
// issue #4; until then it takes the launcher's flags and refuses clearly,
// so a task fails with a reason instead of pretending to run.
func runRunner(args []string, _, stderr io.Writer) error {
	fs := newFlagSet("runner", stderr)
	fs.String("input", "", "directory with task.json and token")
	fs.String("secrets", "", "directory with one sub-directory per Secret")
	fs.String("work", "", "scratch directory for the checkout")
	if err := parse(fs, args); err != nil {
		return err
	}
	return errors.New("this version cannot run tasks yet: the runner (checkout, ansible, terraform, bash) is not built in")
}
