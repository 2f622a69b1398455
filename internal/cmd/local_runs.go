package cmd

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/controllers/launch"
)

// localLauncher is the launcher of `bastion dev` and of `bastion manager
// --local-runs`: each run as its own unprivileged user when this process
// can do that (root), else as this process's user. The notice says which,
// plainly, for the start-up output.
func localLauncher(c client.Client, dir string) (l *launch.LocalLauncher, notice string, err error) {
	l = &launch.LocalLauncher{Client: c, BaseDir: dir}
	users, why := launch.Isolation()
	l.Users = users
	if err := l.PrepareBase(); err != nil {
		return nil, "", fmt.Errorf("local runs directory: %w", err)
	}
	notice = l.Describe()
	if why != "" {
		notice += " (" + why + ")"
	}
	return l, notice, nil
}
