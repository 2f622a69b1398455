package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/oidc"
)

// AnnotationOIDCIdentity links a User to the provider identity that signs
// it in: "<provider id>|<subject>". The subject is the provider's stable key
// for a person; names and emails may change at the provider.
const AnnotationOIDCIdentity = "automation.bastion.dev/oidc-identity"

// oidcList is the sign-in page's provider buttons.
func (s *Server) oidcList() []oidcProviderJSON {
	out := []oidcProviderJSON{}
	if s.opts.OIDC == nil {
		return out
	}
	for _, p := range s.opts.OIDC.List() {
		out = append(out, oidcProviderJSON{ID: p.ID, Name: p.Name, Color: p.Color, Icon: p.Icon})
	}
	return out
}

// oidcLogin starts a sign-in at the provider (a browser navigation, with
// the console's query string, which the callback gives back).
func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		s.oidcFailed(w, r, oidc.ErrUnknownProvider)
		return
	}
	if err := s.opts.OIDC.Login(w, r, chi.URLParam(r, "provider")); err != nil {
		s.oidcFailed(w, r, err)
	}
}

// oidcCallback finishes a sign-in: the provider's identity becomes a
// session of the linked (or a new, external) user, and the browser goes to
// the console's base page with the query string it started with.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		s.oidcFailed(w, r, oidc.ErrUnknownProvider)
		return
	}
	identity, query, err := s.opts.OIDC.Callback(w, r, chi.URLParam(r, "provider"))
	if err != nil {
		s.oidcFailed(w, r, err)
		return
	}
	user, err := s.userForIdentity(r.Context(), identity)
	if err != nil {
		logAPI().Error(err, "linking a single sign-on identity", "provider", identity.ProviderID)
		s.oidcFailed(w, r, fmt.Errorf("%w: could not link your account; the server log has the details", oidc.ErrSignInFailed))
		return
	}
	if _, err := s.startSession(w, r, user); err != nil {
		failErr(w, r, err)
		return
	}
	target := s.basePath() + "/"
	if query != "" {
		target += "?" + query
	}
	http.Redirect(w, r, target, http.StatusFound)
}

// oidcFailed sends the browser back to the sign-in page with the reason,
// which the page shows. The reason never holds a code or a token.
func (s *Server) oidcFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, oidc.ErrUnknownProvider) {
		fail(w, http.StatusNotFound, "no such sign-in provider")
		return
	}
	http.Redirect(w, r, s.basePath()+"/auth/login?error="+url.QueryEscape(err.Error()), http.StatusFound)
}

// basePath is the public URL's path ("" at the root).
func (s *Server) basePath() string {
	u, err := url.Parse(s.opts.PublicURL)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// userForIdentity finds the user an identity signs in as:
//  1. the user already linked to it;
//  2. else the user with the same email, if the provider verified that
//     email (an unverified one would let anyone who can register
//     "admin@…" at the provider take over that account);
//  3. else a new external user, named from the identity.
func (s *Server) userForIdentity(ctx context.Context, id oidc.Identity) (*bastionv1.User, error) {
	link := id.ProviderID + "|" + id.Subject
	all, err := s.opts.Users.List(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Annotations[AnnotationOIDCIdentity] == link {
			return &all[i], nil
		}
	}
	if id.Email != "" && id.EmailVerified {
		for i := range all {
			if strings.EqualFold(all[i].Spec.Email, id.Email) && all[i].Annotations[AnnotationOIDCIdentity] == "" {
				return s.linkIdentity(ctx, &all[i], link)
			}
		}
	}
	spec := bastionv1.UserSpec{
		Username: s.freeUsername(all, id.Username), Name: id.Name, Email: id.Email, External: true,
	}
	if spec.Email == "" || !id.EmailVerified || s.opts.Users.CheckUnique(ctx, bastionv1.UserSpec{Email: spec.Email, Username: spec.Username}, "") != nil {
		// Emails must be unique and present; one the provider does not
		// vouch for is not taken, so it cannot shadow a local user.
		spec.Email = spec.Username + "@" + id.ProviderID + ".sso.invalid"
	}
	if spec.Name == "" {
		spec.Name = spec.Username
	}
	user, err := s.opts.Users.CreateExternal(ctx, spec, map[string]string{AnnotationOIDCIdentity: link})
	if err != nil {
		return nil, err
	}
	return user, s.waitCached(ctx, user)
}

func (s *Server) linkIdentity(ctx context.Context, user *bastionv1.User, link string) (*bastionv1.User, error) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, AnnotationOIDCIdentity, link)
	if err := s.opts.Client.Patch(ctx, user, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return nil, err
	}
	return user, s.waitCached(ctx, user)
}

// freeUsername is want, or want-2, want-3… when a user has it already.
func (s *Server) freeUsername(all []bastionv1.User, want string) string {
	taken := map[string]bool{}
	for _, u := range all {
		taken[u.Spec.Username] = true
	}
	if want == "" {
		want = "user"
	}
	name := want
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s-%d", want, n)
	}
	return name
}
