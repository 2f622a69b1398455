// Package objname turns the names users type into metadata.generateName
// prefixes, so that `kubectl get templates` lists "deploy-app-x7k2p"
// rather than an opaque id while display names stay free-form.
package objname

import "strings"

// MaxPrefix bounds the prefix before its trailing '-'. The apiserver adds
// five random characters, so a name is at most 46 characters: short
// enough that derived names (a Template's Tasks are "<template>-xxxxx",
// and carry the template's name in a label of at most 63) stay valid.
const MaxPrefix = 40

// GenerateName returns a DNS-1123 label prefix ending in '-' for
// metadata.generateName: display lower-cased, every run of characters
// other than a-z and 0-9 turned into one '-', trimmed of dashes and cut to
// MaxPrefix. When nothing of display survives (empty, or only
// punctuation or non-Latin letters) the prefix comes from fallback, the
// kind's word such as "template"; if that is unusable too, "obj".
func GenerateName(display, fallback string) string {
	if p := sanitize(display); p != "" {
		return p + "-"
	}
	if p := sanitize(fallback); p != "" {
		return p + "-"
	}
	return "obj-"
}

func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			// Dashes are only written between letters and digits, so the
			// result never starts or ends with one.
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	out := b.String()
	if len(out) > MaxPrefix {
		out = strings.TrimRight(out[:MaxPrefix], "-")
	}
	return out
}
