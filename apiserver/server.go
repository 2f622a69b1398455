// Package apiserver serves Bastion's HTTP surface on one port: the /api
// routes that Semaphore clients expect, and the embedded console. It reads
// and writes Kubernetes resources and never calls a reconciler.
package apiserver

import (
	"context"
	"io/fs"
	"net/http"
	"net/netip"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/oidc"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
	"github.com/bastion-dev/bastion/internal/users"
)

// Options configures the server.
type Options struct {
	// Version is reported by GET /api/info.
	Version string
	// PublicURL is the address users reach the console at (web_host,
	// --external-url). Browsers' Origin may name it even when a proxy
	// rewrote Host.
	PublicURL string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// X-Forwarded-Host are believed (--trusted-proxies); from any other
	// peer those headers are ignored.
	TrustedProxies []netip.Prefix
	// Console is the built console (index.html and assets/).
	Console fs.FS
	// Hub and WSAuth serve /api/ws; the route exists only when both are
	// set, so the websocket is never mounted without authentication.
	Hub    *hub.Hub
	WSAuth WSAuth
	// WS tunes /api/ws; the zero value is the production setting.
	WS WSOptions
	// Client (cached) and Reader (uncached) reach the cluster; Store keeps
	// task output. With all three set, runners can report to /api/runner.
	Client client.Client
	Reader client.Reader
	Store  store.Store
	// Informers is the manager's cache (the one Client reads). The task
	// and template lists index each project's tasks from its Task
	// informer; without it they answer 503.
	Informers cache.Informers
	// Keys tells of key Secrets that change, per project namespace
	// (controllers.SecretWatches); key Secrets are not in Informers. Without
	// it, lists showing keys see only this API's own writes.
	Keys KeyEvents
	// RunTokens holds the tokens of the runs this process's controllers
	// started (controllers.Options.RunTokens); the runner endpoint takes a
	// run's token from it rather than read the input Secret. Nil: it reads.
	RunTokens *runtoken.Book

	// Users signs users in and manages them. With Client, Store and IDs it
	// turns on the signed-in API (docs/features.md §7); without, only /ping, /info,
	// the runner routes and the console are served.
	Users *users.Store
	// IDs allocates the ids of objects the API creates, so that an answer
	// carries the id at once and FIFO follows arrival.
	IDs *ids.Allocator
	// ManagerNamespace holds the global id counters.
	ManagerNamespace string
	// DisablePasswordLogin turns password sign-in off (OIDC only).
	DisablePasswordLogin bool
	// OIDC is the configured single sign-on providers; nil means none.
	OIDC *oidc.Providers
	// Auth tunes sessions and sign-in limits; the zero value is the
	// production setting.
	Auth AuthOptions
	// TaskPods is what projects and templates may choose for their task
	// pods: a PUT naming another runner image or service account is
	// refused, and GET /api/task_pods/options lists them for the console.
	TaskPods taskpods.Policy
	// DemoRepoURL is where runners clone the demo repository that the
	// manager serves (internal/demorepo); "" refuses demo projects.
	DemoRepoURL string
	// EditManagedObjects lets /api edit and delete the objects that a
	// GitOps tool manages (docs/gitops.md); off (the default) they are
	// read-only and answers name their manager in managed_by.
	EditManagedObjects bool
}

// Server is the HTTP handler of the manager.
type Server struct {
	opts    Options
	limiter *loginLimiter
	creds   *credentialCache
	proxies proxyTrust
	origins originPolicy
	// tasks indexes every project's tasks for the lists, and lists keeps
	// their encoded answers; both nil without Informers.
	tasks *taskIndex
	lists *listCache
	// deliveries remembers the GitHub deliveries run (webhook_replay.go).
	deliveries *replayGuard
}

// New returns the manager's HTTP handler.
func New(opts Options) http.Handler {
	opts.Auth = opts.Auth.withDefaults()
	dummyHash() // made now, so that no sign-in pays for it
	s := &Server{opts: opts, limiter: newLoginLimiter(opts.Auth, opts.Store), creds: newCredentialCache(opts.Auth.Now),
		proxies: opts.TrustedProxies, origins: newOriginPolicy(opts.PublicURL, opts.TrustedProxies),
		deliveries: &replayGuard{store: opts.Store, now: opts.Auth.Now}}
	if opts.Informers != nil && opts.Store != nil {
		s.lists = newListCache()
		s.tasks = newTaskIndex(opts.Store, s.lists.changed, s.templateNamesByID)
		if err := s.watchLists(context.Background(), opts.Informers, opts.Keys); err != nil {
			logAPI().Error(err, "the task and template lists cannot watch the cache; they will answer 503")
			s.tasks, s.lists = nil, nil
		}
	}
	r := chi.NewRouter()
	// Fixed order: request id, recovery, headers, then the routes. The
	// cross-origin check covers every /api call (see csrf.go).
	r.Use(middleware.RequestID, middleware.Recoverer, securityHeaders)
	r.With(s.crossOriginProtection).Mount("/api", s.apiRoutes())
	r.Handle("/*", newConsoleHandler(opts.Console))
	return r
}

// contentSecurityPolicy is the console's: its scripts, styles, fonts and
// calls (the websocket included: 'self' covers ws: and wss: of this host)
// come from this origin only, no page may frame it, and a form or a <base>
// cannot point elsewhere. Styles allow 'unsafe-inline' for the style
// attributes PatternFly sets; scripts never do. API answers carry it too:
// a JSON body opened as a page then runs nothing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer should carry.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		next.ServeHTTP(w, r)
	})
}
