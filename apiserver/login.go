package apiserver

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bastion-dev/bastion/internal/users"
)

// loginOptions is the body of GET /auth/login.
type loginOptions struct {
	OIDCProviders     []oidcProviderJSON `json:"oidc_providers"`
	LoginWithPassword bool               `json:"login_with_password"`
}

type oidcProviderJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color,omitempty"`
	Icon  string `json:"icon,omitempty"`
}

func (s *Server) loginOptions(w http.ResponseWriter, _ *http.Request) {
	respond(w, http.StatusOK, loginOptions{
		OIDCProviders:     s.oidcList(),
		LoginWithPassword: !s.opts.DisablePasswordLogin,
	})
}

type loginRequest struct {
	Auth     string `json:"auth"`
	Password string `json:"password"`
}

// dummyHash is compared against when the login names nobody, so that an
// unknown login takes as long as a wrong password and logins cannot be
// enumerated by timing. Made on first use, not at package init: every
// process of the binary runs the inits, each local task's `bastion runner`
// included, and a bcrypt hash costs it 70-220 ms of CPU (issue #22). New
// makes it, so the first unknown login costs no more than the others.
var dummyHash = sync.OnceValue(func() []byte {
	hash, err := bcrypt.GenerateFromPassword([]byte("bastion-no-such-user"), bcrypt.DefaultCost)
	if err != nil {
		panic(err) // only for a cost out of range or a password over 72 bytes
	}
	return hash
})

// login signs in with a username or email and a password (POST /auth/login).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opts.DisablePasswordLogin {
		fail(w, http.StatusForbidden, "password sign-in is turned off on this server; use a single sign-on provider")
		return
	}
	var req loginRequest
	if !decode(w, r, &req) {
		return
	}
	req.Auth = strings.TrimSpace(req.Auth)
	switch {
	case req.Auth == "":
		fail(w, http.StatusBadRequest, "Username is required")
		return
	case req.Password == "":
		fail(w, http.StatusBadRequest, "Password is required")
		return
	}
	// The user is looked up first so that the delay is the account's,
	// whichever of its spellings is typed. An unknown login costs the same
	// lookup, so the answer still tells nothing about existence.
	user, err := s.opts.Users.FindByLogin(r.Context(), req.Auth)
	if err != nil && !errors.Is(err, users.ErrNotFound) {
		failErr(w, r, err)
		return
	}
	account, addr := signInAccount(user, req.Auth), s.proxies.clientAddress(r)
	done, err := s.limiter.inTurn(r.Context(), addr)
	if err != nil {
		return // the client went away while it waited: nothing was tried
	}
	defer done()
	wait, what, triedAt, err := s.limiter.try(r.Context(), account, addr)
	if err != nil {
		failErr(w, r, err) // fail closed: an uncounted guess is no guess
		return
	}
	if wait > 0 {
		seconds := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		fail(w, http.StatusTooManyRequests, fmt.Sprintf(
			"too many failed sign-ins for this %s; try again in %s", what, (time.Duration(seconds)*time.Second).String()))
		return
	}
	ok := false
	if user != nil && !user.Spec.External {
		ok, err = s.opts.Users.CheckPassword(r.Context(), user, req.Password)
		if err != nil {
			failErr(w, r, err)
			return
		}
	} else {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(req.Password))
	}
	if !ok { // counted by try already
		fail(w, http.StatusUnauthorized, "Incorrect login or password")
		return
	}
	if err := s.limiter.succeeded(r.Context(), account, addr, triedAt); err != nil {
		failErr(w, r, err)
		return
	}
	if _, err := s.startSession(w, r, user); err != nil {
		failErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// logout ends the request's session on the server, not just in the
// browser: a copied cookie stops working too.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		err := s.opts.Store.DeleteCredential(r.Context(), hashSecret(c.Value))
		s.creds.forget()
		if err != nil {
			failErr(w, r, err)
			return
		}
	}
	s.clearSession(w, r)
	w.WriteHeader(http.StatusNoContent)
}
