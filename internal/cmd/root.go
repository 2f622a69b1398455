// Package cmd wires the subcommands of the bastion binary. main.go only
// dispatches here; each subcommand parses its own flags.
package cmd

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/bastion-dev/bastion/internal/version"
)

// exitError carries an exit code other than 1 (for example 2 for misuse).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"manager", "run the controllers and the API server against a cluster", runManagerCommand},
		{"runner", "run one task (started by the task's Job or by bastion dev)", runRunner},
		{"dev", "run Bastion on an embedded control plane, for trying it locally", runDev},
		{"user", "list, add and change console users (list, add, change-by-login)", runUser},
		{"version", "print the version", func(_ []string, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, version.Version)
			return err
		}},
	}
}

// Main runs the subcommand named by args[0] and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "bastion %s: %v\n", c.name, err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	fmt.Fprintf(stderr, "bastion: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Bastion %s: a Kubernetes-native automation console.\n\nUsage: bastion <command> [flags]\n\nCommands:\n", version.Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `bastion <command> -h` for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bastion "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags and refuses stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
