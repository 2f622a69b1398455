package apiserver

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/bastion-dev/bastion/internal/store"
)

// tokenJSON is an API token (api-contract.md, "API tokens").
type tokenJSON struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Expired bool      `json:"expired"`
	UserID  int64     `json:"user_id"`
}

// tokenPublicLen is how much of a token lists show as its id.
//
// Ours: the secret is shown once, when the token is made. Lists show only
// its first characters, which are enough to tell tokens apart and to
// delete one, and too few to use it; the store keeps only a hash.
const tokenPublicLen = 8

// tokenRoutes serves /user/tokens: a user's own API tokens.
func (s *Server) tokenRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listTokens)
	r.Post("/", s.createToken)
	r.Delete("/{token_id}", s.expireToken)
	return r
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	creds, err := s.opts.Store.Credentials(r.Context(), p.id, store.CredentialToken)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := make([]tokenJSON, 0, len(creds))
	for _, c := range creds {
		out = append(out, tokenJSON{ID: c.PublicID, Created: c.Created, Expired: c.Expired, UserID: c.UserID})
	}
	respond(w, http.StatusOK, out)
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	secret := newSecret()
	cred := store.Credential{
		Hash: hashSecret(secret), Kind: store.CredentialToken, PublicID: secret[:tokenPublicLen],
		UserID: p.id, Created: s.opts.Auth.Now().UTC().Truncate(time.Microsecond),
	}
	if err := s.opts.Store.PutCredential(r.Context(), cred); err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusCreated, tokenJSON{ID: secret, Created: cred.Created, UserID: p.id})
}

// expireToken accepts the whole token or the id lists show.
func (s *Server) expireToken(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	id := chi.URLParam(r, "token_id")
	if len(id) > tokenPublicLen {
		id = id[:tokenPublicLen]
	}
	err := s.opts.Store.ExpireCredential(r.Context(), p.id, store.CredentialToken, id)
	s.creds.forget()
	if errors.Is(err, store.ErrNotFound) {
		fail(w, http.StatusNotFound, "token not found")
		return
	}
	if err != nil {
		failErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
