// Command bastion is the one binary of Bastion: `bastion manager` (the
// operator and the API), `bastion runner` (one task), `bastion dev` (the
// product on an embedded control plane) and `bastion user` (user admin).
package main

import (
	"os"

	"github.com/bastion-dev/bastion/internal/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdout, os.Stderr))
}
