package runproto

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// DecodeBatch reads a batch as json.NewDecoder(…).Decode would, and gives
// the same Batch or the same error. A batch of lines alone, written as
// AppendJSON writes it, which is every batch of a running task but its
// first and last, is read by hand: encoding/json spent about 1.7 µs a
// line there, most of the manager's CPU after the store's
// (docs/benchmarks.md, "The output path"). Whatever the hand-written
// reader does not expect, to the byte (another key, another order,
// whitespace, a number that is not a plain integer, a surrogate escape,
// invalid UTF-8, anything after the batch), it leaves to encoding/json,
// which then reads the whole body: a runner holding its token can send
// anything, and gets encoding/json's answer to it.
func DecodeBatch(data []byte) (Batch, error) {
	if lines, ok := readLinesOnly(data); ok {
		return Batch{Lines: lines}, nil
	}
	var b Batch
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&b)
	return b, err
}

// readLinesOnly reads exactly {"lines":[LINE,…]} with at least one LINE,
// each {"seq":N,"time":"…","output":"…"} and optionally ,"stream":"…"
// before its closing brace.
func readLinesOnly(data []byte) ([]Line, bool) {
	r := reader{data: data}
	if !r.lit(`{"lines":[`) {
		return nil, false
	}
	// As many lines as the body could hold: each line read here takes at
	// least minLineBytes, so a body of nothing but `{"seq":` does not
	// make a slice nine times its size before it is refused.
	lines := make([]Line, 0, min(bytes.Count(data, []byte(`{"seq":`)), len(data)/minLineBytes))
	for {
		var l Line
		if !r.lit(`{"seq":`) || !r.int(&l.Seq) || !r.lit(`,"time":`) {
			return nil, false
		}
		quoted, ok := r.plainString()
		// time.Time's own UnmarshalJSON, as encoding/json would call it.
		if !ok || l.Time.UnmarshalJSON(quoted) != nil || !r.lit(`,"output":`) || !r.str(&l.Output) {
			return nil, false
		}
		if r.lit(`,"stream":`) && !r.str(&l.Stream) {
			return nil, false
		}
		if !r.lit(`}`) {
			return nil, false
		}
		lines = append(lines, l)
		if r.lit(`]}`) {
			return lines, r.pos == len(r.data)
		}
		if !r.lit(`,`) {
			return nil, false
		}
	}
}

// minLineBytes is the shortest line readLinesOnly reads:
// {"seq":0,"time":"0000-01-01T00:00:00Z","output":""} and a comma or the
// batch's end.
const minLineBytes = len(`{"seq":0,"time":"0000-01-01T00:00:00Z","output":""},`)

type reader struct {
	data []byte
	pos  int
	buf  []byte // a string's unescaped bytes, reused from string to string
}

// lit consumes s if the input goes on with it.
func (r *reader) lit(s string) bool {
	if bytes.HasPrefix(r.data[r.pos:], []byte(s)) {
		r.pos += len(s)
		return true
	}
	return false
}

// int reads a JSON integer as encoding/json reads one into an int64: no
// fraction, no exponent, no leading zero, within range.
func (r *reader) int(v *int64) bool {
	start := r.pos
	if r.pos < len(r.data) && r.data[r.pos] == '-' {
		r.pos++
	}
	digits := r.pos
	for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
		r.pos++
	}
	if r.pos == digits || r.data[digits] == '0' && r.pos-digits > 1 || r.pos-digits > 19 {
		return false
	}
	// At most 19 digits: the value fits in a uint64, and int64's range
	// is checked on it.
	var n uint64
	for _, c := range r.data[digits:r.pos] {
		n = n*10 + uint64(c-'0')
	}
	neg := digits > start
	if !neg && n > 1<<63-1 || neg && n > 1<<63 {
		return false
	}
	*v = int64(n)
	if neg {
		*v = -*v
	}
	return true
}

// plainString returns a string literal with its quotes, if it has no
// escape, no control character and only valid UTF-8.
func (r *reader) plainString() ([]byte, bool) {
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		return nil, false
	}
	for i := r.pos + 1; i < len(r.data); i++ {
		switch c := r.data[i]; {
		case c == '"':
			s := r.data[r.pos : i+1]
			r.pos = i + 1
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string literal into v, as encoding/json would: the escapes
// \" \\ \/ \b \f \n \r \t and \uXXXX outside the surrogates. A surrogate
// escape (encoding/json pairs them, or replaces a lone one), a control
// character or invalid UTF-8 (which encoding/json replaces) is not read
// here.
func (r *reader) str(v *string) bool {
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		return false
	}
	i := r.pos + 1
	out := r.buf[:0]
	escaped := false // most lines have no escape, and are copied at once
	start := i
	for i < len(r.data) {
		for i < len(r.data) && plain[r.data[i]] {
			i++
		}
		if i == len(r.data) {
			return false
		}
		c := r.data[i]
		switch {
		case c == '"':
			seg := r.data[start:i]
			if !utf8.Valid(seg) {
				return false
			}
			if !escaped {
				*v = string(seg)
			} else {
				r.buf = append(out, seg...)
				*v = string(r.buf)
			}
			r.pos = i + 1
			return true
		case c != '\\': // a control character
			return false
		}
		seg := r.data[start:i]
		if !utf8.Valid(seg) || i+1 >= len(r.data) {
			return false
		}
		out = append(out, seg...)
		escaped = true
		switch e := r.data[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(r.data) {
				return false
			}
			n, ok := hex4(r.data[i+2 : i+6])
			if !ok || n >= 0xd800 && n <= 0xdfff {
				return false
			}
			out = utf8.AppendRune(out, n)
			i += 4
		default:
			return false
		}
		i += 2
		start = i
	}
	return false
}

// plain[c] is true for the bytes a JSON string holds as they are: not the
// closing quote, not a backslash, not a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	var n rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
