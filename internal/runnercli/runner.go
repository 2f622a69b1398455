// Package runnercli is the runner's command line: `bastion runner`, and
// the bastion-runner binary, which is that command alone. The local
// launcher starts bastion-runner when it finds it beside bastion: without
// the manager's packages, it starts in a fifth of the CPU (docs/
// architecture.md, "Two binaries").
package runnercli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bastion-dev/bastion/internal/cli"
	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/version"
)

// Main is the bastion-runner binary: the flags of `bastion runner`, or
// "version", which the manager asks before it starts runs with it
// (version.RunnerProbe: a copy of bastion would not answer the same).
//
// A leading "runner" is the command's own name, as `bastion` takes it: a
// Job passes `runner --input …` to its image's entrypoint
// (controllers/launch), which is bastion-runner in Bastion's runner images
// and may be bastion in a project's own image made before them.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "runner" {
		args = args[1:]
	}
	if len(args) == 1 && args[0] == "version" {
		fmt.Fprintln(stdout, version.RunnerProbe())
		return 0
	}
	return cli.CommandExit(binaryName, run(binaryName, args, stdout, stderr), stderr)
}

// binaryName is the runner's own binary, as its usage and errors name it.
const binaryName = "bastion-runner"

// Run runs one task from the inputs its launcher laid out (see
// internal/runspec). When the inputs name the manager, every output line,
// the run's phase, its commit and its exit are streamed there
// (internal/runproto), and the manager's replies can confirm or stop the
// run; each line is also printed to stdout, so that `kubectl logs` shows
// it. Its exit code is the program's (1 when the run failed before the
// program could start).
func Run(args []string, stdout, stderr io.Writer) error {
	return run("bastion runner", args, stdout, stderr)
}

// run is Run under the name command (`bastion runner`, `bastion-runner`).
func run(command string, args []string, stdout, stderr io.Writer) error {
	fs := cli.CommandFlagSet(command, stderr)
	input := fs.String("input", "", "directory with task.json and token")
	secrets := fs.String("secrets", "", "directory with one sub-directory per Secret")
	work := fs.String("work", "", "scratch directory for the checkout")
	exitFile := fs.String("exit-file", "", "file to write the runner's exit code to when it ends (the local launcher reads it after a manager restart)")
	runAs := fs.Uint("run-as", 0, "user id to run as, after mounting the account files of --accounts (the local launcher's isolated runs; needs root)")
	accounts := fs.String("accounts", "", "directory with the run's passwd and group files, for --run-as")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *input == "" || *work == "" {
		return cli.UsageError("--input and --work are required")
	}
	if *runAs != 0 {
		if *accounts == "" {
			return cli.UsageError("--run-as needs --accounts")
		}
		if err := becomeRunUser(uint32(*runAs), *accounts, localRepository(*input)); err != nil {
			return err
		}
	}
	err := runTask(*input, *secrets, *work, stdout, stderr)
	if *exitFile != "" {
		// Written last, after every line was acknowledged: whoever reads it
		// knows the run is over. A runner that is killed writes nothing.
		if werr := writeExitFile(*exitFile, cli.Code(err)); werr != nil {
			fmt.Fprintf(stderr, "bastion runner: writing the exit file: %v\n", werr)
		}
	}
	return err
}

// runTask runs the task and returns the runner's exit (see exitOf).
func runTask(input, secrets, work string, stdout, stderr io.Writer) error {
	in, err := runner.LoadInputs(input, secrets)
	if err != nil {
		return err
	}

	// SIGTERM (a stop, a deleted pod) ends the program and then the runner.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if in.Spec.ManagerURL == "" {
		return exitOf(in, runner.Run(ctx, in, work, &printSink{w: stdout}))
	}
	streamer := runner.NewStreamer(in.Spec.ManagerURL, in.Spec.Namespace, in.Spec.Name, in.Token, stdout)
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	streamer.OnReply = func(r runproto.Reply) {
		if r.Stop != "" {
			cancelRun() // the user stopped the task
		}
	}
	streamCtx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	go streamer.Run(streamCtx) // the phase goes with the commit (SetCommit)

	res := runner.Run(runCtx, in, work, streamer)
	exit := runproto.Exit{Code: res.ExitCode}
	if res.Err != nil {
		exit.Message = res.Err.Error()
	}
	// Every line must reach the manager before the runner exits: its exit
	// ends the run, and the launcher then considers the output complete.
	if err := streamer.Finish(exit, 5*time.Minute); err != nil {
		fmt.Fprintf(stderr, "bastion runner: %v\n", err)
	}
	return exitOf(in, res)
}

// writeExitFile writes code atomically: a reader sees the whole number or
// no file.
func writeExitFile(path string, code int) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(code)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// exitOf turns a run's result into the runner's own exit.
func exitOf(in *runner.Inputs, res runner.Result) error {
	switch {
	case res.Err != nil:
		return res.Err
	case res.ExitCode != 0:
		return &cli.ExitError{Code: res.ExitCode, Err: fmt.Errorf("%s exited with code %d", appName(in.Spec.App), res.ExitCode)}
	}
	return nil
}

func appName(app string) string {
	if app == "" {
		return "ansible"
	}
	return app
}

// printSink writes each line to w as it arrives.
type printSink struct {
	mu sync.Mutex
	w  io.Writer
}

// StderrLine prints like Line: the terminal shows both streams alike.
func (p *printSink) StderrLine(at time.Time, text string) { p.Line(at, text) }

func (p *printSink) Line(_ time.Time, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, text)
}
