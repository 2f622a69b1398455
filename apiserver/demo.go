package apiserver

import (
	"context"
	"net/http"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/backup"
	"github.com/bastion-dev/bastion/internal/demorepo"
)

// fillDemo fills a new project with the demo: a key of type none, the
// repository the manager serves itself (Options.DemoRepoURL), an inventory
// of the runner itself, an environment, a view and four templates (ansible,
// bash, a build and its autorun deploy), so that every template runs
// without the internet. The objects are created as a restore of
// demorepo.Project would create them; if one fails, the restore takes the
// project back.
func (s *Server) fillDemo(ctx context.Context, project *bastionv1.Project) error {
	if s.opts.DemoRepoURL == "" {
		return &statusError{http.StatusNotImplemented,
			"this server does not serve the demo repository (the manager runs with --demo-repo-listen=\"\"), so it cannot make a demo project"}
	}
	existing := func(context.Context, bastionv1.ProjectSpec) (*bastionv1.Project, error) { return project, nil }
	_, err := backup.Restore(ctx, s.opts.Client, demorepo.Project(s.opts.DemoRepoURL), existing)
	return err
}
