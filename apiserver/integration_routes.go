package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// integrationJSON is an integration, an incoming webhook (api-contract.md),
// in answers and requests (a request's project_id is the URL's). Matchers
// and extracted values have routes of their own. template_id and
// auth_secret_id are null when unset.
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
	managedJSON
}

func (s *Server) toIntegrationJSON(r *http.Request, in *bastionv1.Integration) (integrationJSON, error) {
	ctx, a := r.Context(), projectOf(r)
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
	}, nil
}

// integrationResource serves /project/{id}/integrations. Members read
// integrations, matchers and extracted values; every write needs
// updateProject, matchers and values included: they decide which requests
// start a task and what variables it gets, so they are as much the
// integration as its template (issue #19). Aliases are credentials (whoever
// holds one starts tasks), so even reading them needs updateProject. An
// integration's aliases go with it (its controller deletes them).
var integrationResource = &resource[*bastionv1.Integration, integrationJSON, integrationJSON]{
	kind: kinds.Integration, path: "/integrations", param: "integration_id",
	writers: require(permUpdateProject),
	order:   byID[*bastionv1.Integration],
	toJSON:  (*Server).toIntegrationJSON, answerCreated: true,
	build: func(s *Server, r *http.Request, req *integrationJSON, _ *bastionv1.Integration) (func(*bastionv1.Integration) error, error) {
		spec, err := s.integrationSpec(r.Context(), projectOf(r), *req)
		return func(in *bastionv1.Integration) error {
			// Matchers and values have routes of their own.
			spec.Matchers, spec.ExtractValues = in.Spec.Matchers, in.Spec.ExtractValues
			in.Spec = spec
			return nil
		}, err
	},
	refs: func(_ *Server, _ *http.Request, in *bastionv1.Integration) (any, error) {
		return integrationRefs(in), nil
	},
	refsSample: integrationRefsJSON{},
	extend: func(s *Server, integrations, integration chi.Router, owners func(http.Handler) http.Handler) {
		aliases := func(r chi.Router) {
			r.Use(owners)
			r.Get("/", s.listAliases)
			r.Post("/", s.createAlias)
			// An alias a GitOps tool applied is its tool's to remove.
			r.With(s.loadAlias, s.unmanagedWrites("alias_id", "alias")).Delete("/{alias_id}", s.deleteAlias)
		}
		integrations.Route("/aliases", aliases)
		integration.Route("/aliases", aliases)
		integration.Mount("/matchers", itemRoutes(s, matcherItems, owners))
		integration.Mount("/values", itemRoutes(s, valueItems, owners))
	},
}

// integrationSpec validates the request by docs/features.md §5 and maps its ids to
// references. Matchers and extracted values have their own routes.
func (s *Server) integrationSpec(ctx context.Context, a *projectAccess, req integrationJSON) (bastionv1.IntegrationSpec, error) {
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

// integrationRefsJSON answers an integration's refs (api-contract.md):
// what it holds, since nothing else refers to an integration.
type integrationRefsJSON struct {
	Matchers []refItem `json:"matchers"`
	Values   []refItem `json:"values"`
}

func integrationRefs(in *bastionv1.Integration) integrationRefsJSON {
	out := integrationRefsJSON{Matchers: []refItem{}, Values: []refItem{}}
	for _, m := range in.Spec.Matchers {
		out.Matchers = append(out.Matchers, refItem{m.ID, m.Name})
	}
	for _, v := range in.Spec.ExtractValues {
		out.Values = append(out.Values, refItem{v.ID, v.Name})
	}
	return out
}

// integrationEvent records a change to an integration's matchers, values
// or aliases, under the integration.
func (s *Server) integrationEvent(r *http.Request, in *bastionv1.Integration, format string, a ...any) {
	s.objectEvent(r, kinds.Integration.Name, idOf(in), in.Spec.DisplayName, fmt.Sprintf(format, a...))
}
