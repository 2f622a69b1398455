package apiserver

import (
	"context"
	"net/http"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// refKind is a kind other objects can refer to.
type refKind string

const (
	refKey         refKind = "key"
	refRepository  refKind = "repository"
	refInventory   refKind = "inventory"
	refEnvironment refKind = "environment"
	refTemplate    refKind = "template"
)

// refItem is one referring object.
type refItem struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// refsJSON answers GET …/{id}/refs (api-contract.md, "refs"); integrations
// are ours: a webhook that starts a template or uses a key refers to it too.
type refsJSON struct {
	Templates    []refItem `json:"templates"`
	Inventories  []refItem `json:"inventories"`
	Repositories []refItem `json:"repositories"`
	Schedules    []refItem `json:"schedules"`
	Integrations []refItem `json:"integrations"`
}

// blocking reports whether the references forbid deleting an object of
// kind. Schedules block only a repository's delete (a schedule that checks
// it for new commits would point at nothing); a template's schedules go
// with it.
func (r refsJSON) blocking(kind refKind) bool {
	n := len(r.Templates) + len(r.Inventories) + len(r.Repositories) + len(r.Integrations)
	if kind == refRepository {
		n += len(r.Schedules)
	}
	return n > 0
}

func named(name string, ref *bastionv1.ObjectRef) bool { return ref != nil && ref.Name == name }

// referencesTo lists the objects of the project that refer to the object
// of kind called name, read from the cache.
func (s *Server) referencesTo(ctx context.Context, ns string, kind refKind, name string) (refsJSON, error) {
	out := refsJSON{Templates: []refItem{}, Inventories: []refItem{}, Repositories: []refItem{}, Schedules: []refItem{}, Integrations: []refItem{}}

	templates := &bastionv1.TemplateList{}
	if err := s.opts.Client.List(ctx, templates, inNS(ns)); err != nil {
		return out, err
	}
	for i := range templates.Items {
		t := &templates.Items[i]
		if !t.DeletionTimestamp.IsZero() {
			continue
		}
		uses := false
		switch kind {
		case refKey:
			for _, v := range t.Spec.Vaults {
				uses = uses || v.KeyRef.Name == name
			}
		case refRepository:
			uses = t.Spec.RepositoryRef.Name == name
		case refInventory:
			uses = named(name, t.Spec.InventoryRef)
		case refEnvironment:
			uses = t.Spec.EnvironmentRef.Name == name
		case refTemplate:
			uses = named(name, t.Spec.BuildTemplateRef)
		}
		if uses {
			out.Templates = append(out.Templates, refItem{idOf(t), t.Spec.DisplayName})
		}
	}

	if kind == refKey || kind == refRepository {
		inventories := &bastionv1.InventoryList{}
		if err := s.opts.Client.List(ctx, inventories, inNS(ns)); err != nil {
			return out, err
		}
		for i := range inventories.Items {
			inv := &inventories.Items[i]
			uses := kind == refKey && (inv.Spec.SSHKeyRef.Name == name || named(name, inv.Spec.BecomeKeyRef)) ||
				kind == refRepository && named(name, inv.Spec.RepositoryRef)
			if uses && inv.DeletionTimestamp.IsZero() {
				out.Inventories = append(out.Inventories, refItem{idOf(inv), inv.Spec.DisplayName})
			}
		}
	}

	if kind == refKey {
		repositories := &bastionv1.RepositoryList{}
		if err := s.opts.Client.List(ctx, repositories, inNS(ns)); err != nil {
			return out, err
		}
		for i := range repositories.Items {
			repo := &repositories.Items[i]
			if repo.Spec.SSHKeyRef.Name == name && repo.DeletionTimestamp.IsZero() {
				out.Repositories = append(out.Repositories, refItem{idOf(repo), repo.Spec.DisplayName})
			}
		}
	}

	if kind == refTemplate || kind == refRepository {
		schedules := &bastionv1.ScheduleList{}
		if err := s.opts.Client.List(ctx, schedules, inNS(ns)); err != nil {
			return out, err
		}
		for i := range schedules.Items {
			sch := &schedules.Items[i]
			uses := kind == refTemplate && sch.Spec.TemplateRef.Name == name ||
				kind == refRepository && named(name, sch.Spec.RepositoryRef)
			if uses && sch.DeletionTimestamp.IsZero() {
				out.Schedules = append(out.Schedules, refItem{idOf(sch), scheduleName(sch)})
			}
		}
	}

	if kind == refTemplate || kind == refKey {
		integrations := &bastionv1.IntegrationList{}
		if err := s.opts.Client.List(ctx, integrations, inNS(ns)); err != nil {
			return out, err
		}
		for i := range integrations.Items {
			in := &integrations.Items[i]
			uses := kind == refTemplate && named(name, in.Spec.TemplateRef) ||
				kind == refKey && named(name, in.Spec.AuthSecretRef)
			if uses && in.DeletionTimestamp.IsZero() {
				out.Integrations = append(out.Integrations, refItem{idOf(in), in.Spec.DisplayName})
			}
		}
	}
	return out, nil
}

// scheduleName is how a schedule is named in refs: its name, else its cron.
func scheduleName(s *bastionv1.Schedule) string {
	if s.Spec.DisplayName != "" {
		return s.Spec.DisplayName
	}
	return s.Spec.CronFormat
}

// respondRefs answers GET …/{id}/refs for the object of kind called name.
func (s *Server) respondRefs(w http.ResponseWriter, r *http.Request, kind refKind, name string) {
	refs, err := s.referencesTo(r.Context(), projectOf(r).namespace(), kind, name)
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusOK, refs)
}

// inUseBody is the in-use delete answer (api-contract.md).
type inUseBody struct {
	Error string `json:"error"`
	InUse bool   `json:"inUse"`
}

// refuseIfReferenced answers 400 with inUse and returns true when the
// object of kind called name is still referenced; nothing is deleted.
func (s *Server) refuseIfReferenced(w http.ResponseWriter, r *http.Request, kind refKind, name, display string) bool {
	refs, err := s.referencesTo(r.Context(), projectOf(r).namespace(), kind, name)
	if err != nil {
		failErr(w, r, err)
		return true
	}
	if !refs.blocking(kind) {
		return false
	}
	respond(w, http.StatusBadRequest, inUseBody{
		Error: "The " + string(kind) + " " + display + " is in use by other resources; see its references", InUse: true,
	})
	return true
}
