package apiserver

import "strings"

// generateName is a metadata.generateName prefix made from a display name,
// so that `kubectl get` shows recognisable names: lower-case letters,
// digits and dashes, at most 40 characters (Project names must leave room
// for the suffix and the namespace prefix), falling back to kind.
func generateName(display, kind string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(display) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" || name[0] < 'a' {
		name = strings.Trim(kind+"-"+name, "-")
	}
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return name + "-"
}
