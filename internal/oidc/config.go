package oidc

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// ProviderConfig is one OpenID Connect provider, from a --oidc-provider
// flag (ParseFlag) or a config file (LoadConfig). The JSON names are the
// config file's keys.
type ProviderConfig struct {
	// ID names the provider in URLs (/api/auth/oidc/{id}/login), so it is
	// limited to [a-z0-9_-]. Name, Color and Icon dress its button on the
	// sign-in page; Name defaults to ID.
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Color string `json:"color,omitempty"`
	Icon  string `json:"icon,omitempty"`

	// Issuer is the provider's issuer URL; discovery reads
	// Issuer + "/.well-known/openid-configuration", and ID tokens must
	// carry exactly this "iss".
	Issuer   string `json:"issuer"`
	ClientID string `json:"clientID"`

	// At most one of the three secret sources is set. ClientSecretRef is
	// only carried: the caller reads the Secret (it has the Kubernetes
	// client) and puts the value in ClientSecret before New. New reads
	// ClientSecretFile itself when ClientSecret is empty. None at all is a
	// public client, which PKCE still protects.
	ClientSecret     string     `json:"clientSecret,omitempty"`
	ClientSecretRef  *SecretRef `json:"clientSecretRef,omitempty"`
	ClientSecretFile string     `json:"clientSecretFile,omitempty"`

	// Scopes default to openid, profile and email; openid is added when
	// missing because without it there is no ID token.
	Scopes []string `json:"scopes,omitempty"`

	// Claims to read from the ID token (or userinfo); the defaults are
	// preferred_username, name and email.
	UsernameClaim string `json:"usernameClaim,omitempty"`
	NameClaim     string `json:"nameClaim,omitempty"`
	EmailClaim    string `json:"emailClaim,omitempty"`
}

// SecretRef names a key of a Kubernetes Secret in the manager's namespace.
type SecretRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// configFile is the shape of the file LoadConfig reads.
type configFile struct {
	Providers []ProviderConfig `json:"providers"`
}

var (
	idPattern = regexp.MustCompile(`^[a-z0-9_-]{1,63}$`)
	// Colors and icons end up in the console's markup and styles, so only
	// plain values get through: #rgb / #rrggbb / a CSS color name, and an
	// icon name.
	colorPattern = regexp.MustCompile(`^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-zA-Z]{1,32})$`)
	iconPattern  = regexp.MustCompile(`^[a-z0-9_-]{1,63}$`)
	// A scope token per RFC 6749 §3.3, minus the quote and backslash that
	// would only ever be typos here.
	scopePattern = regexp.MustCompile(`^[\x21\x23-\x5b\x5d-\x7e]+$`)
	claimPattern = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)
)

// LoadConfig reads providers from a YAML or JSON file shaped like
//
//	providers:
//	- id: google
//	  name: Google
//	  issuer: https://accounts.google.com
//	  clientID: ...
//	  clientSecretRef: {name: bastion-oidc, key: google}
//
// and validates them as a set. Unknown keys are errors (a misspelt
// clientSecretFile should not silently become a public client). Errors
// name the provider and the field, never a value that could be a secret.
func LoadConfig(path string) ([]ProviderConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oidc config: %w", err)
	}
	var file configFile
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		// The decoders name lines, keys and types, not values (the YAML
		// is only converted to JSON, which then decodes into strings), so
		// a secret's value does not end up here.
		return nil, fmt.Errorf("oidc config %s: %w", path, err)
	}
	if len(file.Providers) == 0 {
		return nil, fmt.Errorf("oidc config %s: no providers", path)
	}
	for i := range file.Providers {
		if err := file.Providers[i].normalize(); err != nil {
			return nil, fmt.Errorf("oidc config %s: providers[%d]: %w", path, i, err)
		}
	}
	if err := checkUnique(file.Providers); err != nil {
		return nil, fmt.Errorf("oidc config %s: %w", path, err)
	}
	return file.Providers, nil
}

// flagKeys are the keys ParseFlag knows, for its error messages.
var flagKeys = []string{"id", "name", "color", "icon", "issuer", "client-id", "client-secret-file", "client-secret-ref",
	"scopes", "username-claim", "name-claim", "email-claim"}

// ParseFlag reads one provider from a flag value of comma-separated
// key=value pairs:
//
//	id=google,name=Google,issuer=https://accounts.google.com,client-id=...,
//	client-secret-file=/etc/bastion/google,color=#4285f4,icon=google
//
// Other keys: client-secret-ref=SECRET/KEY, scopes="openid groups"
// (space-separated), username-claim, name-claim, email-claim. A backslash
// escapes a comma or a backslash inside a value. The secret itself is
// refused here: command lines show up in process lists and pod specs.
func ParseFlag(value string) (ProviderConfig, error) {
	var c ProviderConfig
	seen := map[string]bool{}
	for i, part := range splitEscaped(value) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			// The part itself is not quoted back: it may be a secret that
			// lost its key.
			return ProviderConfig{}, fmt.Errorf("oidc provider flag: item %d is not key=value", i+1)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if seen[key] && slices.Contains(flagKeys, key) {
			return ProviderConfig{}, fmt.Errorf("oidc provider flag: %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "id":
			c.ID = val
		case "name":
			c.Name = val
		case "color":
			c.Color = val
		case "icon":
			c.Icon = val
		case "issuer":
			c.Issuer = val
		case "client-id":
			c.ClientID = val
		case "client-secret":
			return ProviderConfig{}, errors.New("oidc provider flag: client-secret is not accepted on the command line; use client-secret-file or client-secret-ref")
		case "client-secret-file":
			c.ClientSecretFile = val
		case "client-secret-ref":
			name, k, ok := strings.Cut(val, "/")
			if !ok {
				return ProviderConfig{}, errors.New("oidc provider flag: client-secret-ref must be SECRET-NAME/KEY")
			}
			c.ClientSecretRef = &SecretRef{Name: name, Key: k}
		case "scopes":
			c.Scopes = strings.Fields(val)
		case "username-claim":
			c.UsernameClaim = val
		case "name-claim":
			c.NameClaim = val
		case "email-claim":
			c.EmailClaim = val
		default:
			// Not quoted back either: "secret=" with the key forgotten
			// would otherwise print the secret.
			return ProviderConfig{}, fmt.Errorf("oidc provider flag: item %d has an unknown key; the keys are %s", i+1, strings.Join(flagKeys, ", "))
		}
	}
	if err := c.normalize(); err != nil {
		return ProviderConfig{}, fmt.Errorf("oidc provider flag: %w", err)
	}
	return c, nil
}

func checkUnique(cfgs []ProviderConfig) error {
	seen := map[string]bool{}
	for _, c := range cfgs {
		if seen[c.ID] {
			return fmt.Errorf("provider id %q is used twice", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// normalize validates c and fills its defaults. Messages quote only the
// id (once it is known to be well formed) and field names.
func (c *ProviderConfig) normalize() error {
	if c.ID == "" {
		return errors.New("id is required")
	}
	if !idPattern.MatchString(c.ID) {
		return errors.New("id must be 1-63 characters of a-z, 0-9, '-' and '_'")
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("provider %q: "+format, append([]any{c.ID}, args...)...)
	}
	if c.Name == "" {
		c.Name = c.ID
	}
	if c.Color != "" && !colorPattern.MatchString(c.Color) {
		return fail("color must be #rgb, #rrggbb or a color name")
	}
	if c.Icon != "" && !iconPattern.MatchString(c.Icon) {
		return fail("icon must be an icon name of a-z, 0-9, '-' and '_'")
	}
	if c.Issuer == "" {
		return fail("issuer is required")
	}
	if err := checkIssuer(c.Issuer); err != nil {
		return fail("issuer %s", err)
	}
	if c.ClientID == "" {
		return fail("client id is required")
	}
	sources := 0
	for _, set := range []bool{c.ClientSecret != "", c.ClientSecretRef != nil, c.ClientSecretFile != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return fail("give the client secret one way only: inline, from a Secret, or from a file")
	}
	if r := c.ClientSecretRef; r != nil {
		if r.Name == "" || len(validation.IsDNS1123Subdomain(r.Name)) > 0 {
			return fail("client secret ref needs a valid Secret name")
		}
		if r.Key == "" || len(validation.IsConfigMapKey(r.Key)) > 0 {
			return fail("client secret ref needs a valid key")
		}
	}
	if len(c.Scopes) == 0 {
		c.Scopes = []string{"openid", "profile", "email"}
	}
	for _, s := range c.Scopes {
		if !scopePattern.MatchString(s) {
			return fail("scopes must be plain scope names")
		}
	}
	if !slices.Contains(c.Scopes, "openid") {
		c.Scopes = append([]string{"openid"}, c.Scopes...)
	}
	for _, claim := range []struct {
		field *string
		def   string
	}{{&c.UsernameClaim, "preferred_username"}, {&c.NameClaim, "name"}, {&c.EmailClaim, "email"}} {
		if *claim.field == "" {
			*claim.field = claim.def
		}
		if !claimPattern.MatchString(*claim.field) {
			return fail("claim names must be printable and without spaces")
		}
	}
	return nil
}

// checkIssuer accepts an absolute http(s) URL. Plain http stays allowed for
// providers on loopback or inside the cluster. Credentials in the URL are
// refused: they would be sent with discovery and show up in errors.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil {
		return errors.New("is not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return errors.New("must be an http or https URL")
	}
	if u.Host == "" {
		return errors.New("has no host")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must not have a query or fragment")
	}
	return nil
}

// splitEscaped splits s at commas that are not preceded by a backslash,
// and undoes the escapes.
func splitEscaped(s string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == ',' || s[i+1] == '\\'):
			cur.WriteByte(s[i+1])
			i++
		case s[i] == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(parts, cur.String())
}
