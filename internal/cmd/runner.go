package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/bastion-dev/bastion/internal/runner"
)

// runRunner runs one task from the inputs its launcher laid out (see
// internal/runspec), printing every output line to stdout so that
// `kubectl logs` shows it. Its exit code is the program's (1 when the run
// failed before the program could start). Streaming the lines to the
// manager is the next step of issue #4.
func runRunner(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("runner", stderr)
	input := fs.String("input", "", "directory with task.json and token")
	secrets := fs.String("secrets", "", "directory with one sub-directory per Secret")
	work := fs.String("work", "", "scratch directory for the checkout")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *input == "" || *work == "" {
		return usageError("--input and --work are required")
	}
	in, err := runner.LoadInputs(*input, *secrets)
	if err != nil {
		return err
	}

	// SIGTERM (a stop, a deleted pod) ends the program and then the runner.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := runner.Run(ctx, in, *work, &printSink{w: stdout})
	if res.CommitHash != "" {
		fmt.Fprintf(stderr, "bastion runner: commit %s %s\n", res.CommitHash, res.CommitMessage)
	}
	switch {
	case res.Err != nil:
		return res.Err
	case res.ExitCode != 0:
		return &exitError{code: res.ExitCode, err: fmt.Errorf("%s exited with code %d", in.Spec.App, res.ExitCode)}
	}
	return nil
}

// printSink writes each line to w as it arrives.
type printSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printSink) Line(_ time.Time, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, text)
}
