// Package cmd wires the subcommands of the bastion binary. main.go only
// dispatches here; each subcommand parses its own flags.
package cmd

import (
	"fmt"
	"io"

	"github.com/bastion-dev/bastion/internal/cli"
	"github.com/bastion-dev/bastion/internal/runnercli"
	"github.com/bastion-dev/bastion/internal/version"
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"manager", "run the controllers and the API server against a cluster", runManagerCommand},
		{"runner", "run one task (started by the task's Job or by bastion dev)", runnercli.Run},
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
		return cli.Exit(c.name, c.run(args[1:], stdout, stderr), stderr)
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
