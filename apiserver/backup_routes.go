package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/backup"
)

// backupProject serves GET /project/{id}/backup: the project's definitions
// as a JSON download, references by name and no secrets (internal/backup).
// It reads from the apiserver, not the cache, so the file is one
// consistent look at the project rather than whatever the cache has.
func (s *Server) backupProject(w http.ResponseWriter, r *http.Request) {
	a := projectOf(r)
	b, err := backup.Export(r.Context(), s.opts.Reader, a.project)
	if err != nil {
		failErr(w, r, err)
		return
	}
	name := fmt.Sprintf("backup-project-%d-%s.json", a.id, s.opts.Auth.Now().UTC().Format("20060102-150405"))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	respond(w, http.StatusOK, b)
}

// restoreProject serves POST /projects/restore: the raw backup file in the
// body makes a new project owned by the caller. The file is checked whole
// before anything is created, so a bad file creates nothing.
func (s *Server) restoreProject(w http.ResponseWriter, r *http.Request) {
	if !mayCreateProjects(who(r)) {
		fail(w, http.StatusForbidden, "you may not create projects (can_create_project)")
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, backup.MaxSize+1))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("invalid backup: the file is larger than %d MiB", backup.MaxSize>>20))
		return
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "reading the backup: "+err.Error())
		return
	}
	b, err := backup.Parse(data)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	p := who(r)
	project, err := backup.Restore(r.Context(), s.opts.Client, b, func(ctx context.Context, spec bastionv1.ProjectSpec) (*bastionv1.Project, error) {
		return s.createProject(ctx, p, spec)
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.projectEvent(r, project, "Project %s restored from a backup")
	respond(w, http.StatusOK, s.toProjectJSON(project))
}
