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
	"github.com/bastion-dev/bastion/internal/store"
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

// oidcLink starts linking a provider identity to the signed-in user (a
// browser navigation from the user's settings). Only a browser session
// may link, and only from this site: a page elsewhere must not be able to
// send a signed-in browser through the provider to link whatever identity
// that browser is signed in to there.
func (s *Server) oidcLink(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	switch {
	case s.opts.OIDC == nil:
		s.oidcFailed(w, r, oidc.ErrUnknownProvider)
		return
	case p.kind != store.CredentialSession:
		fail(w, http.StatusForbidden, "linking single sign-on needs a browser session, not an API token")
		return
	case r.Header.Get("Sec-Fetch-Site") == "cross-site":
		fail(w, http.StatusForbidden, "linking single sign-on must start from this site")
		return
	}
	if err := s.opts.OIDC.Link(w, r, chi.URLParam(r, "provider"), p.credential); err != nil {
		s.oidcFailed(w, r, err)
	}
}

// oidcCallback finishes a sign-in: the provider's identity becomes a
// session of the linked (or a new, external) user, and the browser goes to
// the console's base page with the query string it started with. A link
// started by oidcLink instead links the identity to the session's user.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		s.oidcFailed(w, r, oidc.ErrUnknownProvider)
		return
	}
	identity, started, err := s.opts.OIDC.Callback(w, r, chi.URLParam(r, "provider"))
	if err != nil {
		s.oidcFailed(w, r, err)
		return
	}
	if started.Link != "" {
		s.finishLink(w, r, identity, started)
		return
	}
	user, err := s.userForIdentity(r.Context(), identity)
	if err != nil {
		var refused linkRefused
		if !errors.As(err, &refused) {
			logAPI().Error(err, "linking a single sign-on identity", "provider", identity.ProviderID)
			err = errors.New("could not link your account; the server log has the details")
		}
		s.oidcFailed(w, r, fmt.Errorf("%w: %s", oidc.ErrSignInFailed, err.Error()))
		return
	}
	if _, err := s.startSession(w, r, user); err != nil {
		failErr(w, r, err)
		return
	}
	s.toConsole(w, r, started.Query)
}

// finishLink links identity to the user of the session that started the
// link, if that session is still the one signed in here.
func (s *Server) finishLink(w http.ResponseWriter, r *http.Request, identity oidc.Identity, started oidc.Started) {
	p, _ := s.principalOf(r)
	if p == nil || p.kind != store.CredentialSession || p.credential != started.Link {
		s.oidcFailed(w, r, fmt.Errorf("%w: sign in again, then link single sign-on from your account", oidc.ErrSignInFailed))
		return
	}
	link := identity.ProviderID + "|" + identity.Subject
	all, err := s.opts.Users.List(r.Context())
	if err != nil {
		failErr(w, r, err)
		return
	}
	if other := linkedTo(all, link); other != nil && other.Name != p.user.Name {
		s.oidcFailed(w, r, fmt.Errorf("%w: this %s identity is already linked to another user", oidc.ErrSignInFailed, identity.ProviderID))
		return
	}
	if _, err := s.linkIdentity(r.Context(), p.user, link); err != nil {
		failErr(w, r, err)
		return
	}
	s.event(r, store.Event{ObjectType: "user", ObjectID: p.id, ObjectName: p.user.Spec.Username, UserID: p.id, Username: p.user.Spec.Username,
		Description: fmt.Sprintf("User %s linked single sign-on %s", p.user.Spec.Username, identity.ProviderID)})
	s.toConsole(w, r, started.Query)
}

// toConsole sends the browser to the console's base page with query.
func (s *Server) toConsole(w http.ResponseWriter, r *http.Request, query string) {
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

// linkRefused is a sign-in refused for a reason the user may read.
type linkRefused string

func (e linkRefused) Error() string { return string(e) }

// linkedTo is the user linked to the identity link, or nil.
func linkedTo(all []bastionv1.User, link string) *bastionv1.User {
	for i := range all {
		if all[i].Annotations[AnnotationOIDCIdentity] == link {
			return &all[i]
		}
	}
	return nil
}

// userForIdentity finds the user an identity signs in as:
//  1. the user already linked to it;
//  2. else an external user who is not an admin, has no link yet and has
//     the same email, if the provider verified that email (an unverified
//     one would let anyone who can register "admin@…" at the provider take
//     over that account): an operator may create such users ahead;
//  3. else, if that verified email is an admin's or a user's with a
//     password, nobody: a provider never takes over such an account on its
//     own. Its owner signs in with the password and links the identity
//     (oidcLink), which proves they hold both;
//  4. else a new external user, named from the identity.
func (s *Server) userForIdentity(ctx context.Context, id oidc.Identity) (*bastionv1.User, error) {
	link := id.ProviderID + "|" + id.Subject
	all, err := s.opts.Users.List(ctx)
	if err != nil {
		return nil, err
	}
	if u := linkedTo(all, link); u != nil {
		return u, nil
	}
	if id.Email != "" && id.EmailVerified {
		for i := range all {
			u := &all[i]
			if !strings.EqualFold(u.Spec.Email, id.Email) || u.Annotations[AnnotationOIDCIdentity] != "" {
				continue
			}
			if u.Spec.Admin || !u.Spec.External {
				return nil, linkRefused("an account with this email already exists; sign in to it with its password, then link " +
					id.ProviderID + " from your account")
			}
			return s.linkIdentity(ctx, u, link)
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
	// A username may not be another user's email either (users.Clash).
	taken := map[string]bool{}
	for _, u := range all {
		taken[strings.ToLower(u.Spec.Username)] = true
		taken[strings.ToLower(u.Spec.Email)] = true
	}
	if want == "" {
		want = "user"
	}
	name := want
	for n := 2; taken[strings.ToLower(name)]; n++ {
		name = fmt.Sprintf("%s-%d", want, n)
	}
	return name
}
