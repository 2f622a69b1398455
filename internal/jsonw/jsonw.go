// Package jsonw writes the JSON of the records that a long task log is
// made of, one per line, by hand: the bytes encoding/json writes for them,
// without its reflection and without checking again what a Marshaler
// returned. The runner's batches and the manager's /output records spend
// most of their CPU in encoding/json otherwise (docs/benchmarks.md, "The
// output path"). Tests hold every function here to encoding/json's bytes.
package jsonw

import (
	"time"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as encoding/json writes a string: <, > and &
// escaped for HTML, control characters escaped, invalid UTF-8 replaced by
// U+FFFD, and U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendTime appends t as time.Time's MarshalJSON writes it (RFC 3339
// with nanoseconds, quoted), and reports false, appending nothing, for a
// time MarshalJSON would refuse (a year outside 0–9999, an offset of
// seconds or of a day or more): the caller then asks encoding/json, which
// gives the error.
func AppendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, offset := t.Zone(); offset%60 != 0 || offset <= -24*3600 || offset >= 24*3600 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
