package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// cookieName is the login cookie; one sign-in at a time per browser (a
// second Login replaces the first attempt).
const cookieName = "bastion_oidc_login"

// loginState is what Login hands to Callback through the browser. It is
// encrypted, not just signed: the PKCE verifier and nonce only protect the
// flow while nobody but this server can read them.
type loginState struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Query    string `json:"q,omitempty"`
	// Link, set by Link, binds the attempt to the signed-in session that
	// asked to link an identity to its user.
	Link    string `json:"l,omitempty"`
	Expires int64  `json:"e"` // unix seconds; inside the seal so it cannot be stretched
}

// sealer encrypts login states with AES-256-GCM. The provider id is the
// additional data, so a cookie from one provider's Login fails at another
// provider's Callback.
type sealer struct{ aead cipher.AEAD }

func newSealer(secret []byte) (*sealer, error) {
	var key []byte
	if len(secret) == 0 {
		key = make([]byte, 32)
		rand.Read(key) // never fails (crypto/rand panics rather than return short)
	} else {
		// Derive rather than use the secret directly, so a key shared with
		// something else (or a short passphrase) still yields a proper
		// AES-256 key used only here.
		k, err := hkdf.Key(sha256.New, secret, nil, "bastion oidc login cookie", 32)
		if err != nil {
			return nil, fmt.Errorf("oidc: cookie key: %w", err)
		}
		key = k
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(st loginState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(st.Provider))), nil
}

func (s *sealer) open(value, provider string) (loginState, error) {
	var st loginState
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return st, errors.New("malformed login cookie")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(provider))
	if err != nil {
		return st, errors.New("login cookie does not open")
	}
	if err := json.Unmarshal(plain, &st); err != nil || st.Provider != provider {
		return st, errors.New("login cookie is not for this provider")
	}
	return st, nil
}

// randomToken is a state or nonce: 128 random bits, URL-safe.
func randomToken() string { return rand.Text() }
