package apiserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// What an incoming webhook is checked against (api-contract.md, "Incoming
// webhooks"): its signature or token, then every matcher; and what it
// hands the task it starts: the extracted values. These are pure
// functions of the request, so they are tested without a cluster.

// githubSignatureHeader carries GitHub's HMAC-SHA256 of the body.
const githubSignatureHeader = "X-Hub-Signature-256"

// webhookRequest is the part of an incoming request the checks read.
type webhookRequest struct {
	header http.Header
	body   []byte
}

// authentic reports whether req proves it knows secret, as method says.
// An empty secret proves nothing: anyone could sign with it. Every
// comparison takes the same time whatever the inputs share.
func authentic(method bastionv1.IntegrationAuthMethod, header string, secret []byte, req webhookRequest) bool {
	if method == bastionv1.AuthNone {
		return true
	}
	if len(secret) == 0 {
		return false
	}
	switch method {
	case bastionv1.AuthGitHub:
		sig, ok := strings.CutPrefix(req.header.Get(githubSignatureHeader), "sha256=")
		return ok && validHMAC(secret, req.body, sig)
	case bastionv1.AuthHMAC:
		return validHMAC(secret, req.body, req.header.Get(header))
	case bastionv1.AuthToken:
		// Hashing both sides first makes the comparison independent of
		// the lengths too.
		got, want := sha256.Sum256([]byte(req.header.Get(header))), sha256.Sum256(secret)
		return subtle.ConstantTimeCompare(got[:], want[:]) == 1
	}
	return false
}

// validHMAC reports whether hexSig is the HMAC-SHA256 of body under secret.
func validHMAC(secret, body []byte, hexSig string) bool {
	sig, err := hex.DecodeString(strings.TrimSpace(hexSig))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), sig)
}

// lookup finds what a matcher or an extracted value reads: a header, the
// whole body (string), or a value in the JSON body at a dotted path such
// as commits.0.id (json). The answer is raw JSON; found is false when the
// header is absent or the path leads nowhere.
func (req webhookRequest) lookup(source, dataType, key string) (raw json.RawMessage, found bool) {
	switch {
	case source == sourceHeader:
		values := req.header.Values(key)
		if len(values) == 0 {
			return nil, false
		}
		return jsonString(values[0]), true
	case dataType == dataString:
		return jsonString(string(req.body)), true
	default:
		return jsonPath(req.body, key)
	}
}

func jsonString(s string) json.RawMessage {
	data, _ := json.Marshal(s) // a string always marshals
	return data
}

// jsonPath walks a dotted path into a JSON document: object keys by name,
// array elements by index.
func jsonPath(doc []byte, path string) (json.RawMessage, bool) {
	cur := json.RawMessage(bytes.TrimSpace(doc))
	for _, step := range strings.Split(path, ".") {
		if len(cur) == 0 {
			return nil, false
		}
		switch cur[0] {
		case '{':
			var obj map[string]json.RawMessage
			if json.Unmarshal(cur, &obj) != nil {
				return nil, false
			}
			next, ok := obj[step]
			if !ok {
				return nil, false
			}
			cur = next
		case '[':
			var arr []json.RawMessage
			i, err := strconv.Atoi(step)
			if json.Unmarshal(cur, &arr) != nil || err != nil || i < 0 || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
		default:
			return nil, false
		}
		cur = bytes.TrimSpace(cur)
	}
	if !json.Valid(cur) {
		return nil, false
	}
	return cur, true
}

// textOf is how a matcher compares a value: a JSON string as its text,
// null as empty, anything else (numbers, booleans, objects) as compact JSON.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return string(raw)
	}
	return compact.String()
}

// holds reports whether m holds for req. A value that is absent counts
// as empty, so "unequals" holds for it and "equals" and "contains" don't.
func holds(m bastionv1.IntegrationMatcher, req webhookRequest) bool {
	var actual string
	if raw, found := req.lookup(m.MatchType, m.BodyDataType, m.Key); found {
		actual = textOf(raw)
	}
	switch m.Method {
	case "equals":
		return actual == m.Value
	case "unequals":
		return actual != m.Value
	case "contains":
		return strings.Contains(actual, m.Value)
	}
	return false
}

// firstFailing is the first matcher of in that does not hold for req, or
// "" when they all do.
func firstFailing(in *bastionv1.Integration, req webhookRequest) string {
	for _, m := range in.Spec.Matchers {
		if !holds(m, req) {
			return fmt.Sprintf("matcher %q does not hold", m.Name)
		}
	}
	return ""
}

// extractValues reads each extracted value of in from req: JSON values as
// they are (a number stays a number), headers and whole bodies as strings.
// A value the request does not carry is left out.
func extractValues(in *bastionv1.Integration, req webhookRequest) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, v := range in.Spec.ExtractValues {
		if raw, found := req.lookup(v.ValueSource, v.BodyDataType, v.Key); found {
			out[v.Variable] = raw
		}
	}
	return out
}
