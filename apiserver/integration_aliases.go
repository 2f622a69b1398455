package apiserver

import (
	"context"
	"crypto/rand"
	"net/http"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// Aliases are the public URLs of integrations: /integrations/aliases holds
// the project's own (they reach every searchable integration), and
// /integrations/{integration_id}/aliases those of one integration. An
// alias is a credential: it is never logged or put in an event.

// aliasJSON is an alias (api-contract.md): its id and its full URL.
type aliasJSON struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
	managedJSON
}

func (s *Server) toAliasJSON(a *bastionv1.IntegrationAlias) aliasJSON {
	return aliasJSON{ID: idOf(a), URL: strings.TrimRight(s.opts.PublicURL, "/") + "/api/integrations/" + a.Spec.Alias}
}

// newAlias is 26 characters of crypto/rand base32 (130 bits): more than
// the 16 the CRD asks for, and all in its ^[A-Za-z0-9_-]+$ alphabet.
func newAlias() string { return rand.Text() }

// aliasScope is the integration of an alias route, or nil on the
// project-level one.
func aliasScope(r *http.Request) *bastionv1.Integration {
	return entity[*bastionv1.Integration](r, "integration_id")
}

// aliasesOf lists the aliases of in, or the project-level ones when in is
// nil, oldest first.
func (s *Server) aliasesOf(ctx context.Context, a *projectAccess, in *bastionv1.Integration) ([]bastionv1.IntegrationAlias, error) {
	list := &bastionv1.IntegrationAliasList{}
	if err := s.opts.Client.List(ctx, list, inNS(a.namespace())); err != nil {
		return nil, err
	}
	var out []bastionv1.IntegrationAlias
	for _, alias := range list.Items {
		if alias.DeletionTimestamp.IsZero() && belongsTo(&alias, in) {
			out = append(out, alias)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idOf(&out[i]) < idOf(&out[j]) })
	return out, nil
}

// belongsTo reports whether alias is one of in's (or a project-level one,
// for in nil).
func belongsTo(alias *bastionv1.IntegrationAlias, in *bastionv1.Integration) bool {
	if in == nil {
		return alias.Spec.IntegrationRef == nil || alias.Spec.IntegrationRef.Name == ""
	}
	return named(in.Name, alias.Spec.IntegrationRef)
}

func (s *Server) listAliases(w http.ResponseWriter, r *http.Request) {
	aliases, err := s.aliasesOf(r.Context(), projectOf(r), aliasScope(r))
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := []aliasJSON{}
	for i := range aliases {
		if idOf(&aliases[i]) != 0 {
			item := s.toAliasJSON(&aliases[i])
			s.markManaged(&item, &aliases[i])
			out = append(out, item)
		}
	}
	respond(w, http.StatusOK, out)
}

// createAlias makes a fresh random alias; the request has no body.
func (s *Server) createAlias(w http.ResponseWriter, r *http.Request) {
	in := aliasScope(r)
	alias := &bastionv1.IntegrationAlias{Spec: bastionv1.IntegrationAliasSpec{Alias: newAlias()}}
	display := "project"
	if in != nil {
		alias.Spec.IntegrationRef = &bastionv1.ObjectRef{Name: in.Name}
		display = in.Spec.DisplayName
	}
	if _, err := s.createObject(r.Context(), projectOf(r), alias, kinds.IntegrationAlias.Name, display+" alias"); err != nil {
		failErr(w, r, err)
		return
	}
	s.aliasEvent(r, in, "created")
	respond(w, http.StatusCreated, s.toAliasJSON(alias))
}

// loadAlias resolves {alias_id} within the route's scope: an alias of
// another integration, or of none, is not found here.
func (s *Server) loadAlias(next http.Handler) http.Handler {
	load := s.loadEntity("alias_id", "alias", func() client.ObjectList { return &bastionv1.IntegrationAliasList{} })
	return load(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !belongsTo(entity[*bastionv1.IntegrationAlias](r, "alias_id"), aliasScope(r)) {
			fail(w, http.StatusNotFound, "alias not found")
			return
		}
		next.ServeHTTP(w, r)
	}))
}

func (s *Server) deleteAlias(w http.ResponseWriter, r *http.Request) {
	alias := entity[*bastionv1.IntegrationAlias](r, "alias_id")
	if err := s.deleteObject(r.Context(), alias); err != nil {
		failErr(w, r, err)
		return
	}
	s.aliasEvent(r, aliasScope(r), "deleted")
	w.WriteHeader(http.StatusNoContent)
}

// aliasEvent records an alias change without the alias itself.
func (s *Server) aliasEvent(r *http.Request, in *bastionv1.Integration, verb string) {
	if in == nil {
		s.objectEvent(r, "alias", 0, "of the project", verb)
		return
	}
	s.integrationEvent(r, in, "alias %s", verb)
}
