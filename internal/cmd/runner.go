package cmd

import (
	"errors"
	"io"
)

// runRunner will run one task: checkout, inventory, keys, the ansible,
// terraform or bash process, and the output stream to the manager. The task
// engine that launches it is not in this build yet, so it refuses clearly
// rather than pretending to run something.
func runRunner(args []string, _, stderr io.Writer) error {
	fs := newFlagSet("runner", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	return errors.New("this build has no task engine yet: the runner is started by the manager for a Task, and tasks are not available in this version")
}
