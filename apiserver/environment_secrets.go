package apiserver

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"regexp"
	"slices"
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// An Environment's secret variables and its password live in one Secret
// (api/v1alpha1/environment_types.go): key "var.NAME" is an extra
// variable, "env.NAME" an environment variable, "password" the vault
// password. The API lists their names and writes their values; it never
// answers, logs or records a value.

// environmentSecretJSON is one secret variable (api-contract.md,
// "environment"). A read answers Secret as "" and no Operation.
type environmentSecretJSON struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Operation string `json:"operation,omitempty"`
}

// secretPrefixes maps a secret's type to the prefix of its key.
var secretPrefixes = map[string]string{
	"var": bastionv1.EnvironmentSecretVarPrefix,
	"env": bastionv1.EnvironmentSecretEnvPrefix,
}

// secretName is what a Secret's data keys may hold after the prefix.
var secretName = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// secretID is the id of a secret variable: derived from its key, so it is
// the same on every read and needs no counter or bookkeeping in the Secret,
// and a key added with kubectl has one too. 53 bits, so that JavaScript
// clients read it exactly; renaming a variable gives it a new id.
func secretID(key string) int64 {
	sum := sha256.Sum256([]byte(key))
	return int64(binary.BigEndian.Uint64(sum[:8])>>11) | 1
}

// listSecrets names the secret variables of data, in order, values empty.
func listSecrets(data map[string][]byte) []environmentSecretJSON {
	out := []environmentSecretJSON{}
	for _, key := range slices.Sorted(maps.Keys(data)) {
		for typ, prefix := range secretPrefixes {
			if name, ok := strings.CutPrefix(key, prefix); ok {
				out = append(out, environmentSecretJSON{ID: secretID(key), Type: typ, Name: name})
			}
		}
	}
	return out
}

// applySecrets returns data with the password (when one is given: an
// empty one keeps the stored password, since reads never show it) and the
// operations applied, or the first problem; data itself is not changed.
// Items without an operation are what a client read back; they change
// nothing.
func applySecrets(data map[string][]byte, password string, ops []environmentSecretJSON) (map[string][]byte, error) {
	out := maps.Clone(data)
	if out == nil {
		out = map[string][]byte{}
	}
	if password != "" {
		out[bastionv1.EnvironmentSecretPassword] = []byte(password)
	}
	byID := func(id int64) (string, error) {
		for key := range out {
			if secretID(key) == id && isSecretVariable(key) {
				return key, nil
			}
		}
		return "", invalidf("secret %d does not exist in this environment", id)
	}
	for _, op := range ops {
		switch op.Operation {
		case "":
		case "create":
			key, err := secretKey(op.Type, op.Name)
			if err != nil {
				return nil, err
			}
			if _, taken := out[key]; taken {
				return nil, invalidf("the secret %s %q already exists in this environment", op.Type, op.Name)
			}
			out[key] = []byte(op.Secret)
		case "update":
			key, err := byID(op.ID)
			if err != nil {
				return nil, err
			}
			value := out[key]
			if op.Secret != "" {
				value = []byte(op.Secret)
			}
			if op.Name != "" && op.Name != secretVariableName(key) {
				renamed, err := secretKey(secretVariableType(key), op.Name)
				if err != nil {
					return nil, err
				}
				if _, taken := out[renamed]; taken {
					return nil, invalidf("the secret %s %q already exists in this environment", secretVariableType(key), op.Name)
				}
				delete(out, key)
				key = renamed
			}
			out[key] = value
		case "delete":
			key, err := byID(op.ID)
			if err != nil {
				return nil, err
			}
			delete(out, key)
		default:
			return nil, invalidf("a secret's operation must be create, update or delete, not %q", op.Operation)
		}
	}
	return out, nil
}

// secretKey is the data key of a new secret variable.
func secretKey(typ, name string) (string, error) {
	prefix, ok := secretPrefixes[typ]
	if !ok {
		return "", invalidf("a secret's type must be var or env, not %q", typ)
	}
	if name == "" {
		return "", badRequest("a secret's name is required")
	}
	if !secretName.MatchString(name) {
		return "", invalidf("the secret name %q may hold only letters, digits, '-', '_' and '.'", name)
	}
	return prefix + name, nil
}

func isSecretVariable(key string) bool { return secretVariableType(key) != "" }

// secretVariableType is var or env for a secret variable's key, else "".
func secretVariableType(key string) string {
	for typ, prefix := range secretPrefixes {
		if strings.HasPrefix(key, prefix) {
			return typ
		}
	}
	return ""
}

func secretVariableName(key string) string {
	return key[len(secretPrefixes[secretVariableType(key)]):]
}
