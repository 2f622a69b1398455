// Command bastion-runner is `bastion runner` alone: one task, from the
// inputs its launcher laid out. Without the manager's packages it starts
// in about 5 ms of CPU where bastion takes 26, which a burst of local runs
// pays once per task; the local launcher uses it when it lies beside
// bastion (docs/architecture.md, "Two binaries").
package main

import (
	"os"

	"github.com/bastion-dev/bastion/internal/runnercli"
)

func main() {
	os.Exit(runnercli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
