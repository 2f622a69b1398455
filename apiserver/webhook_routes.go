package apiserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Incoming webhooks: /api/integrations/{alias}, outside sign-in. The alias
// names one integration, or (a project-level alias) every searchable
// integration of its project. Each integration checks the request's
// signature or token against its secret, then its matchers, and starts a
// task of its template with the extracted values as the environment.
//
// Answers (api-contract.md): 204 when at least one task was queued; 200
// {"message": "..."} saying why when the request was authentic for some
// integration but started nothing (a replayed GitHub delivery among them:
// "replay", see webhook_replay.go); 401 when it was authentic for none;
// 404 for an unknown alias; 413 for a body over maxWebhookBody; 503 when
// the cluster did not confirm a task's creation, so that it may have
// started (errTaskMayHaveStarted: a GitHub delivery is then not run again).
//
// Webhooks come from servers, which send no Origin or Sec-Fetch-Site
// header, so the cross-origin check (csrf.go) lets them through; the
// alias and the signature are what authenticate them, never a cookie.

// maxWebhookBody bounds an incoming body; GitHub caps its payloads at 25
// MB but pushes are far smaller, and the body is held in memory.
const maxWebhookBody = 1 << 20

// minAliasLength is the shortest alias the CRD allows; anything shorter
// names nothing and is refused before the lookup.
const minAliasLength = 16

// webhookMessage is the 200 answer: why nothing was started.
type webhookMessage struct {
	Message string `json:"message"`
}

func (s *Server) webhookRoutes() chi.Router {
	r := chi.NewRouter()
	r.Post("/{alias}", s.receiveWebhook)
	r.Get("/{alias}", s.receiveWebhook)
	return r
}

func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
			return
		}
		fail(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	a, integrations, err := s.aliasTarget(r.Context(), chi.URLParam(r, "alias"))
	if err != nil {
		failErr(w, r, err)
		return
	}
	if len(integrations) == 0 {
		respond(w, http.StatusOK, webhookMessage{"no task started: no integration is reachable through this alias"})
		return
	}
	req := webhookRequest{header: r.Header, body: body}
	started, authenticated := 0, 0
	var reasons []string
	for _, in := range integrations {
		d, err := s.deliver(r.Context(), a, in, req)
		if err != nil {
			failErr(w, r, err)
			return
		}
		logAPI().Info("incoming webhook", "project", a.project.Name, "integration", in.Name,
			"authentic", d.authentic, "started", d.started, "reason", d.reason)
		if d.authentic {
			authenticated++
		}
		if d.started {
			started++
		} else if d.authentic {
			reasons = append(reasons, fmt.Sprintf("integration %q: %s", in.Spec.DisplayName, d.reason))
		}
	}
	switch {
	case started > 0:
		w.WriteHeader(http.StatusNoContent)
	case authenticated == 0:
		fail(w, http.StatusUnauthorized, "authentication failed: the signature or token does not match the integration's secret")
	default:
		respond(w, http.StatusOK, webhookMessage{"no task started: " + strings.Join(reasons, "; ")})
	}
}

// delivery is what one integration made of a request. The reason (why no
// task started) is only told to a request that was authentic for it.
type delivery struct {
	authentic, started bool
	reason             string
}

func (s *Server) deliver(ctx context.Context, a *projectAccess, in *bastionv1.Integration, req webhookRequest) (delivery, error) {
	secret, err := s.webhookSecret(ctx, in)
	if err != nil {
		return delivery{}, err
	}
	if !authentic(in.Spec.AuthMethod, in.Spec.AuthHeader, secret, req) {
		return delivery{}, nil
	}
	// Only now, signature verified, is the delivery claimed.
	keys := deliveryKeys(in, req)
	at, claimed, err := s.deliveries.claim(ctx, keys)
	if err != nil {
		return delivery{}, err // fail closed: run nothing unclaimed
	}
	if !claimed {
		return delivery{authentic: true, reason: replayReason(req)}, nil
	}
	d, err := s.runDelivery(ctx, a, in, req)
	if !d.started && !errors.Is(err, errTaskMayHaveStarted) {
		s.deliveries.release(ctx, keys, at) // it ran nothing: a redelivery may run
	}
	return d, err
}

// runDelivery starts in's task for an authentic request, unless a matcher says
// no or the template is gone (then the reason says so).
func (s *Server) runDelivery(ctx context.Context, a *projectAccess, in *bastionv1.Integration, req webhookRequest) (delivery, error) {
	d := delivery{authentic: true}
	if d.reason = firstFailing(in, req); d.reason != "" {
		return d, nil
	}
	if in.Spec.TemplateRef == nil || in.Spec.TemplateRef.Name == "" {
		d.reason = "it has no template"
		return d, nil
	}
	template := &bastionv1.Template{}
	err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.Spec.TemplateRef.Name}, template)
	if apierrors.IsNotFound(err) || err == nil && !template.DeletionTimestamp.IsZero() {
		d.reason = "its template no longer exists"
		return d, nil
	}
	if err != nil {
		return d, err
	}
	err = s.startWebhookTask(ctx, a, in, template, extractValues(in, req))
	var bad badRequest
	if errors.As(err, &bad) {
		d.reason = err.Error() // task_params written around the API
		return d, nil
	}
	d.started = err == nil
	return d, err
}

// webhookSecret is the password of the integration's login_password key,
// read from the apiserver (Secrets are never cached), or nil when the key
// is missing, of another type or unset. It is never logged.
func (s *Server) webhookSecret(ctx context.Context, in *bastionv1.Integration) ([]byte, error) {
	if in.Spec.AuthMethod == bastionv1.AuthNone || in.Spec.AuthSecretRef == nil {
		return nil, nil
	}
	key := &corev1.Secret{}
	err := s.opts.Reader.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.Spec.AuthSecretRef.Name}, key)
	if apierrors.IsNotFound(err) {
		logAPI().Info("an integration's auth key is missing; its webhooks cannot authenticate", "integration", in.Name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if bastionv1.KeyType(key.Labels[bastionv1.LabelKeyType]) != bastionv1.KeyTypeLoginPassword {
		logAPI().Info("an integration's auth key is not a login_password key; its webhooks cannot authenticate", "integration", in.Name)
		return nil, nil
	}
	return key.Data[bastionv1.KeyPassword], nil
}

// aliasTarget resolves an alias to its project and the integrations it
// reaches; an unknown alias (or one whose project is gone) is a 404.
func (s *Server) aliasTarget(ctx context.Context, value string) (*projectAccess, []*bastionv1.Integration, error) {
	alias, err := s.findAlias(ctx, value)
	if err != nil {
		return nil, nil, err
	}
	project := &bastionv1.Project{}
	err = s.opts.Client.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(alias.Namespace)}, project)
	if apierrors.IsNotFound(err) || err == nil && (!project.DeletionTimestamp.IsZero() ||
		bastionv1.ProjectNamespace(project.Name) != alias.Namespace) {
		return nil, nil, notFound("integration alias")
	}
	if err != nil {
		return nil, nil, err
	}
	a := &projectAccess{project: project, id: idOf(project)}
	list := &bastionv1.IntegrationList{}
	if err := s.opts.Client.List(ctx, list, inNS(alias.Namespace)); err != nil {
		return nil, nil, err
	}
	var out []*bastionv1.Integration
	for i := range list.Items {
		in := &list.Items[i]
		reached := in.Spec.Searchable
		if ref := alias.Spec.IntegrationRef; ref != nil && ref.Name != "" {
			reached = ref.Name == in.Name
		}
		if reached && in.DeletionTimestamp.IsZero() {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idOf(out[i]) < idOf(out[j]) })
	return a, out, nil
}

// findAlias finds the alias object whose alias is value. Aliases are
// credentials, so they are compared in constant time.
func (s *Server) findAlias(ctx context.Context, value string) (*bastionv1.IntegrationAlias, error) {
	if len(value) < minAliasLength {
		return nil, notFound("integration alias")
	}
	list := &bastionv1.IntegrationAliasList{}
	if err := s.opts.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var found *bastionv1.IntegrationAlias
	for i := range list.Items {
		alias := &list.Items[i]
		if subtle.ConstantTimeCompare([]byte(alias.Spec.Alias), []byte(value)) == 1 && alias.DeletionTimestamp.IsZero() {
			found = alias
		}
	}
	if found == nil {
		return nil, notFound("integration alias")
	}
	return found, nil
}
