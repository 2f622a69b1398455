package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// unsafeYAML renders variables as a YAML document (flow style) in which
// every string, however deeply nested, carries ansible's !unsafe tag, so
// ansible never templates it: a survey answer or a value from a webhook
// holding "{{ lookup('pipe', …) }}" stays text. Numbers, booleans and null
// stay as they are. Keys are quoted but untagged: ansible does not template
// names.
func unsafeYAML(vars map[string]any) string {
	var b strings.Builder
	writeUnsafe(&b, vars)
	b.WriteByte('\n')
	return b.String()
}

func writeUnsafe(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		b.WriteString("!unsafe ")
		b.WriteString(yamlQuote(v))
	case map[string]any:
		b.WriteByte('{')
		keys := sortedKeys(v)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(yamlQuote(k))
			b.WriteString(": ")
			writeUnsafe(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeUnsafe(b, e)
		}
		b.WriteByte(']')
	case float64:
		// Never exponent notation, which YAML 1.1 would read as a string.
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	default:
		b.WriteString(fmt.Sprint(v))
	}
}

// yamlQuote writes a YAML double-quoted scalar that any YAML 1.1 or 1.2
// parser (PyYAML included) reads back as s: printable ASCII as is, and
// every other character escaped, so no control, line-break or
// non-printable character ever appears raw in the file.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// splitVars divides the final variables into those ansible may template
// (the Environment's, its secret ones) and the task's own (its extra
// variables, survey answers, webhook values, secret answers), which it
// must not. Each name is in exactly one of the two.
func (t *taskRun) splitVars() (trusted, untrusted map[string]any, err error) {
	vars, fromTask, err := t.vars()
	if err != nil {
		return nil, nil, err
	}
	trusted, untrusted = map[string]any{}, map[string]any{}
	for k, v := range vars {
		if fromTask[k] {
			untrusted[k] = v
		} else {
			trusted[k] = v
		}
	}
	return trusted, untrusted, nil
}

// keysOf is the set of names in a sorted list.
func keysOf(names []string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}
