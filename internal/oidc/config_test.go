package oidc

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// secret is planted in every config below; no error may repeat it.
const secret = "s3cr3t-VALUE-123"

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	yamlFile := writeFile(t, "oidc.yaml", `
providers:
- id: google
  name: Google
  color: "#4285f4"
  icon: google
  issuer: https://accounts.google.com
  clientID: bastion.apps.googleusercontent.com
  clientSecretRef: {name: bastion-oidc, key: google}
- id: corp_sso
  issuer: https://sso.corp.example/realms/ops
  clientID: bastion
  clientSecret: `+secret+`
  scopes: [groups, email]
  usernameClaim: upn
`)
	got, err := LoadConfig(yamlFile)
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderConfig{{
		ID: "google", Name: "Google", Color: "#4285f4", Icon: "google",
		Issuer: "https://accounts.google.com", ClientID: "bastion.apps.googleusercontent.com",
		ClientSecretRef: &SecretRef{Name: "bastion-oidc", Key: "google"},
		Scopes:          []string{"openid", "profile", "email"},
		UsernameClaim:   "preferred_username", NameClaim: "name", EmailClaim: "email",
	}, {
		ID: "corp_sso", Name: "corp_sso", Issuer: "https://sso.corp.example/realms/ops", ClientID: "bastion",
		ClientSecret: secret, Scopes: []string{"openid", "groups", "email"},
		UsernameClaim: "upn", NameClaim: "name", EmailClaim: "email",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadConfig:\n got %+v\nwant %+v", got, want)
	}

	jsonFile := writeFile(t, "oidc.json", `{"providers":[{"id":"gitlab","issuer":"https://gitlab.com","clientID":"x","clientSecretFile":"/etc/bastion/gitlab"}]}`)
	got, err = LoadConfig(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ClientSecretFile != "/etc/bastion/gitlab" || got[0].Name != "gitlab" {
		t.Errorf("LoadConfig(json) = %+v", got)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	// base is one valid provider; each case breaks it one way, always with
	// the secret in the file.
	const base = "  issuer: https://idp.example\n  clientID: bastion\n  clientSecret: " + secret + "\n"
	for name, tc := range map[string]struct{ content, want string }{
		"no providers":       {"providers: []\n", "no providers"},
		"missing id":         {"providers:\n- name: x\n" + base, "id is required"},
		"bad id":             {"providers:\n- id: Google Login\n" + base, "id must be"},
		"duplicate id":       {"providers:\n- id: a\n" + base + "- id: a\n" + base, `"a" is used twice`},
		"missing issuer":     {"providers:\n- id: a\n  clientID: bastion\n  clientSecret: " + secret + "\n", "issuer is required"},
		"issuer scheme":      {"providers:\n- id: a\n  issuer: ftp://idp.example\n  clientID: b\n  clientSecret: " + secret + "\n", "http or https"},
		"issuer credentials": {"providers:\n- id: a\n  issuer: https://u:" + secret + "@idp.example\n  clientID: b\n", "credentials"},
		"missing client id":  {"providers:\n- id: a\n  issuer: https://idp.example\n  clientSecret: " + secret + "\n", "client id is required"},
		"two secret sources": {"providers:\n- id: a\n" + base + "  clientSecretFile: /x\n", "one way only"},
		"bad secret ref":     {"providers:\n- id: a\n  issuer: https://idp.example\n  clientID: b\n  clientSecretRef: {name: Bad_Name, key: k}\n", "Secret name"},
		"bad color":          {"providers:\n- id: a\n  color: \"red;background:url(x)\"\n" + base, "color"},
		"bad icon":           {"providers:\n- id: a\n  icon: \"<svg>\"\n" + base, "icon"},
		"bad scope":          {"providers:\n- id: a\n  scopes: [\"openid email\"]\n" + base, "scopes"},
		"unknown field":      {"providers:\n- id: a\n  clientSecrte: x\n" + base, "clientSecrte"},
		"secret of a type":   {"providers:\n- id: a\n  issuer: https://idp.example\n  clientID: b\n  clientSecret: [" + secret + "]\n", "clientSecret"},
		"broken yaml":        {"providers:\n- id: a\n  clientSecret: \"" + secret + "\n  issuer: [\n", "oidc config"},
		"tab in yaml":        {"providers:\n- id: a\n\tclientSecret: " + secret + "\n", "oidc config"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(writeFile(t, "oidc.yaml", tc.content))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestParseFlag(t *testing.T) {
	got, err := ParseFlag("id=google,name=Google,issuer=https://accounts.google.com,client-id=123.apps,client-secret-file=/path,color=#4285f4,icon=google")
	if err != nil {
		t.Fatal(err)
	}
	want := ProviderConfig{
		ID: "google", Name: "Google", Color: "#4285f4", Icon: "google",
		Issuer: "https://accounts.google.com", ClientID: "123.apps", ClientSecretFile: "/path",
		Scopes:        []string{"openid", "profile", "email"},
		UsernameClaim: "preferred_username", NameClaim: "name", EmailClaim: "email",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFlag:\n got %+v\nwant %+v", got, want)
	}

	got, err = ParseFlag(`id=corp,name=Acme\, Inc.,issuer=https://sso.acme.example,client-id=bastion,client-secret-ref=bastion-oidc/corp,scopes=groups email,username-claim=upn,name-claim=display_name,email-claim=mail`)
	if err != nil {
		t.Fatal(err)
	}
	want = ProviderConfig{
		ID: "corp", Name: "Acme, Inc.", Issuer: "https://sso.acme.example", ClientID: "bastion",
		ClientSecretRef: &SecretRef{Name: "bastion-oidc", Key: "corp"},
		Scopes:          []string{"openid", "groups", "email"},
		UsernameClaim:   "upn", NameClaim: "display_name", EmailClaim: "mail",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFlag:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseFlagErrors(t *testing.T) {
	const base = "id=a,issuer=https://idp.example,client-id=b"
	for name, tc := range map[string]struct{ value, want string }{
		"inline secret":       {base + ",client-secret=" + secret, "client-secret-file"},
		"item without key":    {base + "," + secret, "item 4 is not key=value"},
		"unknown key":         {base + ",client-secrett=" + secret, "item 4 has an unknown key; the keys are id, name"},
		"secret as key":       {base + ",s3cr3t-value=1", "item 4 has an unknown key"},
		"key twice":           {base + ",id=c", `"id" given twice`},
		"missing issuer":      {"id=a,client-id=b,client-secret-file=/" + secret, "issuer is required"},
		"missing client id":   {"id=a,issuer=https://idp.example,client-secret-file=/" + secret, "client id is required"},
		"bad id":              {"id=A B,issuer=https://idp.example,client-id=b", "id must be"},
		"bad ref":             {base + ",client-secret-ref=" + secret, "SECRET-NAME/KEY"},
		"escaped into secret": {base + `,client-secret-file=/x\,client-secret=` + secret + ",client-secret-ref=s/k", "one way only"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseFlag(tc.value)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}
