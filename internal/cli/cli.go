// Package cli is what the commands of Bastion's binaries share: flag
// sets that report errors instead of exiting, errors that carry an exit
// code, and how a command's error becomes the process's exit.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ExitError carries an exit code other than 1 (for example 2 for misuse).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a misuse of a command: exit code 2.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

// NewFlagSet returns the flag set of `bastion <name>`.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	return CommandFlagSet("bastion "+name, stderr)
}

// CommandFlagSet returns the flag set of a command as its user types it
// (`bastion runner`, `bastion-runner`): its usage says that name.
func CommandFlagSet(command string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Parse parses flags and refuses stray arguments.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &ExitError{Code: 2, Err: err}
	}
	if fs.NArg() > 0 {
		return UsageError("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Code is the process exit code for a command's error: 0 for none (or a
// request for help), the ExitError's code, else 1.
func Code(err error) int {
	var ee *ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// Exit reports a command's error on stderr, as `bastion <name>: …`, and
// returns the process's exit code.
func Exit(name string, err error, stderr io.Writer) int {
	return CommandExit("bastion "+name, err, stderr)
}

// CommandExit is Exit for a command named as its user types it.
func CommandExit(command string, err error, stderr io.Writer) int {
	code := Code(err)
	if code != 0 {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
	}
	return code
}
