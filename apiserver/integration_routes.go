package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// integrationJSON is an integration, an incoming webhook (api-contract.md).
// template_id and auth_secret_id are null when unset.
type integrationJSON struct {
	ID           int64           `json:"id"`
	Name         string          `json:"name"`
	ProjectID    int64           `json:"project_id"`
	TemplateID   *int64          `json:"template_id"`
	AuthMethod   string          `json:"auth_method"`
	AuthSecretID *int64          `json:"auth_secret_id"`
	AuthHeader   string          `json:"auth_header"`
	Searchable   bool            `json:"searchable"`
	TaskParams   json.RawMessage `json:"task_params"`
}

func (s *Server) toIntegrationJSON(ctx context.Context, a *projectAccess, in *bastionv1.Integration) integrationJSON {
	ns := a.namespace()
	params := json.RawMessage(`{}`)
	if in.Spec.TaskParams != nil && len(in.Spec.TaskParams.Raw) > 0 {
		params = in.Spec.TaskParams.Raw
	}
	return integrationJSON{
		ID: idOf(in), Name: in.Spec.DisplayName, ProjectID: a.id,
		TemplateID:   nullable(s.refID(ctx, ns, in.Spec.TemplateRef, &bastionv1.Template{})),
		AuthMethod:   string(in.Spec.AuthMethod),
		AuthSecretID: nullable(s.refID(ctx, ns, in.Spec.AuthSecretRef, &corev1.Secret{})),
		AuthHeader:   in.Spec.AuthHeader, Searchable: in.Spec.Searchable, TaskParams: params,
	}
}

// integrationRoutes serves /project/{id}/integrations. Members read
// integrations, matchers and extracted values; every write needs
// updateProject, matchers and values included: they decide which requests
// start a task and what variables it gets, so they are as much the
// integration as its template (issue #19). Aliases are credentials (whoever
// holds one starts tasks), so even reading them needs updateProject.
func (s *Server) integrationRoutes() chi.Router {
	owners := require(permUpdateProject)
	aliases := func(r chi.Router) {
		r.Use(owners)
		r.Get("/", s.listAliases)
		r.Post("/", s.createAlias)
		r.With(s.loadAlias).Delete("/{alias_id}", s.deleteAlias)
	}
	r := chi.NewRouter()
	r.Get("/", s.listIntegrations)
	r.With(owners).Post("/", s.createIntegration)
	r.Route("/aliases", aliases)
	r.Route("/{integration_id}", func(r chi.Router) {
		r.Use(s.loadEntity("integration_id", "integration", func() client.ObjectList { return &bastionv1.IntegrationList{} }))
		r.Get("/", s.getIntegration)
		r.Get("/refs", s.integrationRefs)
		r.With(owners).Put("/", s.updateIntegration)
		r.With(owners).Delete("/", s.deleteIntegration)
		r.Route("/aliases", aliases)
		r.Mount("/matchers", itemRoutes(s, matcherItems, owners))
		r.Mount("/values", itemRoutes(s, valueItems, owners))
	})
	return r
}

// integrationRequest is the body of POST /integrations and PUT
// /integrations/{integration_id}.
type integrationRequest struct {
	ID           int64           `json:"id"`
	Name         string          `json:"name"`
	TemplateID   *int64          `json:"template_id"`
	AuthMethod   string          `json:"auth_method"`
	AuthSecretID *int64          `json:"auth_secret_id"`
	AuthHeader   string          `json:"auth_header"`
	Searchable   bool            `json:"searchable"`
	TaskParams   json.RawMessage `json:"task_params"`
}

// integrationSpec validates the request by spec §5 and maps its ids to
// references. Matchers and extracted values have their own routes.
func (s *Server) integrationSpec(ctx context.Context, a *projectAccess, req integrationRequest) (bastionv1.IntegrationSpec, error) {
	spec := bastionv1.IntegrationSpec{
		DisplayName: strings.TrimSpace(req.Name), AuthMethod: bastionv1.IntegrationAuthMethod(req.AuthMethod),
		AuthHeader: strings.TrimSpace(req.AuthHeader), Searchable: req.Searchable,
	}
	if spec.DisplayName == "" {
		return spec, badRequest("Name is required")
	}
	switch spec.AuthMethod {
	case bastionv1.AuthNone, bastionv1.AuthGitHub:
	case bastionv1.AuthToken, bastionv1.AuthHMAC:
		if spec.AuthHeader == "" {
			return spec, badRequest("Auth header is required")
		}
	default:
		return spec, invalidf("auth_method must be empty, github, token or hmac, not %q", req.AuthMethod)
	}
	if req.TemplateID != nil && *req.TemplateID != 0 {
		ref, err := s.refTo(ctx, a, *req.TemplateID, &bastionv1.TemplateList{}, "template_id")
		if err != nil {
			return spec, err
		}
		spec.TemplateRef = ref
	}
	secretID := int64(0)
	if req.AuthSecretID != nil {
		secretID = *req.AuthSecretID
	}
	if secretID == 0 && spec.AuthMethod != bastionv1.AuthNone {
		return spec, badRequest("Auth secret is required")
	}
	if secretID != 0 {
		ref, err := s.loginPasswordKey(ctx, a, secretID)
		if err != nil {
			return spec, err
		}
		spec.AuthSecretRef = ref
	}
	params, err := taskParamsOf(req.TaskParams)
	if err != nil {
		return spec, err
	}
	spec.TaskParams = params
	return spec, nil
}

// loginPasswordKey refers to the key with id, which must be a
// login_password key: its password is the webhook's shared secret.
func (s *Server) loginPasswordKey(ctx context.Context, a *projectAccess, id int64) (*bastionv1.ObjectRef, error) {
	obj, err := s.objectByID(ctx, a.namespace(), id, &corev1.SecretList{}, "auth_secret_id")
	if _, missing := err.(*statusError); missing {
		return nil, invalidf("auth_secret_id %d does not exist in this project", id)
	}
	if err != nil {
		return nil, err
	}
	if bastionv1.KeyType(obj.GetLabels()[bastionv1.LabelKeyType]) != bastionv1.KeyTypeLoginPassword {
		return nil, invalidf("auth_secret_id %d is not a login_password key; its password is the webhook's secret", id)
	}
	return &bastionv1.ObjectRef{Name: obj.GetName()}, nil
}

// taskParamsOf checks task_params: absent, null or an object whose fields
// the webhook can apply (see integrationTaskParams).
func taskParamsOf(raw json.RawMessage) (*apiextensionsv1.JSON, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, badRequest("task_params must be a JSON object")
	}
	if _, err := parseTaskParams(raw); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, badRequest("task_params must be a JSON object")
	}
	return &apiextensionsv1.JSON{Raw: compact.Bytes()}, nil
}

func (s *Server) listIntegrations(w http.ResponseWriter, r *http.Request) {
	a := projectOf(r)
	list := &bastionv1.IntegrationList{}
	if err := s.opts.Client.List(r.Context(), list, inNS(a.namespace())); err != nil {
		failErr(w, r, err)
		return
	}
	out := addressable(list.Items, func(in *bastionv1.Integration) integrationJSON { return s.toIntegrationJSON(r.Context(), a, in) })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	respond(w, http.StatusOK, out)
}

func (s *Server) getIntegration(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, s.toIntegrationJSON(r.Context(), projectOf(r), entity[*bastionv1.Integration](r, "integration_id")))
}

func (s *Server) createIntegration(w http.ResponseWriter, r *http.Request) {
	var req integrationRequest
	if !decode(w, r, &req) {
		return
	}
	a := projectOf(r)
	spec, err := s.integrationSpec(r.Context(), a, req)
	if err != nil {
		failErr(w, r, err)
		return
	}
	in := &bastionv1.Integration{Spec: spec}
	id, err := s.createObject(r.Context(), a, in, ids.CounterIntegration, spec.DisplayName)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "integration", id, spec.DisplayName, "created")
	respond(w, http.StatusCreated, s.toIntegrationJSON(r.Context(), a, in))
}

func (s *Server) updateIntegration(w http.ResponseWriter, r *http.Request) {
	var req integrationRequest
	if !decode(w, r, &req) {
		return
	}
	if err := bodyID(r, "integration_id", req.ID); err != nil {
		failErr(w, r, err)
		return
	}
	spec, err := s.integrationSpec(r.Context(), projectOf(r), req)
	if err != nil {
		failErr(w, r, err)
		return
	}
	in := entity[*bastionv1.Integration](r, "integration_id")
	err = s.updateObject(r.Context(), in, func() error {
		spec.Matchers, spec.ExtractValues = in.Spec.Matchers, in.Spec.ExtractValues
		in.Spec = spec
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "integration", idOf(in), spec.DisplayName, "updated")
	w.WriteHeader(http.StatusNoContent)
}

// deleteIntegration deletes the integration; its reconciler deletes its
// aliases first (controllers/cascade.go). Tasks it started stay.
func (s *Server) deleteIntegration(w http.ResponseWriter, r *http.Request) {
	in := entity[*bastionv1.Integration](r, "integration_id")
	if err := s.deleteObject(r.Context(), in); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "integration", idOf(in), in.Spec.DisplayName, "deleted")
	w.WriteHeader(http.StatusNoContent)
}

// integrationRefsJSON answers an integration's refs (api-contract.md):
// what it holds, since nothing else refers to an integration.
type integrationRefsJSON struct {
	Matchers []refItem `json:"matchers"`
	Values   []refItem `json:"values"`
}

func (s *Server) integrationRefs(w http.ResponseWriter, r *http.Request) {
	in := entity[*bastionv1.Integration](r, "integration_id")
	out := integrationRefsJSON{Matchers: []refItem{}, Values: []refItem{}}
	for _, m := range in.Spec.Matchers {
		out.Matchers = append(out.Matchers, refItem{m.ID, m.Name})
	}
	for _, v := range in.Spec.ExtractValues {
		out.Values = append(out.Values, refItem{v.ID, v.Name})
	}
	respond(w, http.StatusOK, out)
}

// integrationEvent records a change to an integration's matchers, values
// or aliases, under the integration.
func (s *Server) integrationEvent(r *http.Request, in *bastionv1.Integration, format string, a ...any) {
	s.objectEvent(r, "integration", idOf(in), in.Spec.DisplayName, fmt.Sprintf(format, a...))
}
