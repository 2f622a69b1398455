package runner

import (
	"strings"
	"unicode/utf8"
)

// Fragment masking (docs/reliability.md §7).
//
// Ansible wraps its warnings and errors at 80 columns (Python's textwrap)
// and breaks words longer than a line, and words at their hyphens, so a
// long secret (a token, a JWT, a base64 key)
// reaches the output in pieces on consecutive lines, none of them whole.
// Masking whole values alone left every piece readable.
//
// So, besides whole values, every secret longer than fragmentLen (in every
// escaped form the sink knows) has all its fragmentLen-byte substrings
// indexed, and each line is scanned with a window of that width: every run
// of bytes covered by windows that are substrings of a secret is masked.
// A run includes the bytes of a secret on either side of a window only as
// far as windows match, so a piece of a secret is masked as soon as it is
// fragmentLen bytes long, wherever it starts.
//
// Pieces shorter than fragmentLen are where the wrap cuts a secret: at the
// end of the line where it starts and at the start of the line where it
// ends. Three edge rules take those:
//   - a line that ends with a prefix of a secret of at least edgeMin
//     bytes: the prefix is masked;
//   - a line that starts with a suffix of a secret of at least edgeMin
//     bytes: the suffix is masked;
//   - a line that follows one whose masked run reached its end, mid-secret:
//     the start of the line that continues that secret is masked, however
//     short (and if that is the whole line, the continuation passes on).
//
// What remains: a piece shorter than edgeMin at the end of the line where a
// secret starts (ansible had fewer than edgeMin columns left), a piece
// shorter than edgeMin at the start of a line when the line before it in
// its stream was not the one that continued (the carry is kept per stream,
// redactingSink.carry, so stdout and stderr interleaving does not break
// it), and pieces of
// a secret that has spaces in it where a wrap breaks it into words shorter
// than fragmentLen. fragmentLen balances that residue against masking
// ordinary text: 12 bytes of a random token are never ordinary output, but
// text that shares 12 bytes with a secret is masked where it appears (the
// host inside a secret database URL, a secret made of words). Pieces are
// masked anywhere in a line, not only at its edges where wraps put them:
// other printers cut secrets too (a truncated token, terraform's "│ "
// before each wrapped line).
//
// The index costs about 35 bytes of memory per byte of secret; it stops at
// maxIndexed bytes of secrets (every escaped form counted: at most about
// 9 MiB), beyond which secrets are masked whole only. Ordinary secrets
// (keys, tokens, passwords) are a few KiB; a Kubernetes Secret can hold 1 MiB.
const (
	fragmentLen = 12
	edgeMin     = 6
	maxIndexed  = 256 << 10
)

// The rolling hash of a window: a polynomial in hashBase over its bytes.
// A bit set of the hashes' top bits answers "no" for almost every window
// without a map lookup; the map of the substrings themselves confirms.
const (
	hashBase   = 0x100000001b3
	filterBits = 18
)

// hashBasePowK is hashBase^fragmentLen, to drop a window's first byte.
var hashBasePowK = func() uint64 {
	p := uint64(1)
	for i := 0; i < fragmentLen; i++ {
		p *= hashBase
	}
	return p
}()

// fragmentIndex holds the pieces of the long secrets.
type fragmentIndex struct {
	filter [1 << filterBits / 64]uint64
	grams  map[string]struct{}
	// prefixes and suffixes of edgeMin..fragmentLen-1 bytes, each with what
	// follows the prefix in its secret (for the next line).
	prefixes map[string][]string
	suffixes map[string]struct{}
	// The edgeMin bytes that end a prefix and that start a suffix, packed:
	// one lookup per line rules out almost every line's edges.
	prefixEnds, suffixStarts map[uint64]struct{}
	forms                    []string // the long secrets, every escaped form
	indexed                  int      // bytes of forms indexed
}

// addLong indexes one form of a secret; forms of fragmentLen bytes or
// fewer, and any past maxIndexed, are left to whole-value masking.
func (f *fragmentIndex) addLong(form string) {
	if len(form) <= fragmentLen || f.indexed+len(form) > maxIndexed {
		return
	}
	f.indexed += len(form)
	if f.grams == nil {
		f.grams = map[string]struct{}{}
		f.prefixes = map[string][]string{}
		f.suffixes = map[string]struct{}{}
		f.prefixEnds, f.suffixStarts = map[uint64]struct{}{}, map[uint64]struct{}{}
	}
	f.forms = append(f.forms, form)
	windows(form, func(i int, h uint64) {
		word, bit := filterBit(h)
		f.filter[word] |= bit
		f.grams[form[i:i+fragmentLen]] = struct{}{}
	})
	for n := edgeMin; n < fragmentLen; n++ {
		f.prefixes[form[:n]] = append(f.prefixes[form[:n]], form[n:])
		f.suffixes[form[len(form)-n:]] = struct{}{}
		f.prefixEnds[packEdge(form[n-edgeMin:])] = struct{}{}
		f.suffixStarts[packEdge(form[len(form)-n:])] = struct{}{}
	}
}

// filterBit is where a window's hash is in the filter: the top bits of the
// hash times a large odd number, so that every byte of the window (the
// last one too, which alone reaches only the hash's low bits) moves them.
func filterBit(h uint64) (word int, bit uint64) {
	top := (h * 0x9e3779b97f4a7c15) >> (64 - filterBits)
	return int(top / 64), 1 << (top % 64)
}

// windows calls fn with the start and the hash of every fragmentLen-byte
// window of s.
func windows(s string, fn func(start int, hash uint64)) {
	var h uint64
	for i := 0; i < len(s); i++ {
		h = h*hashBase + uint64(s[i])
		if i >= fragmentLen {
			h -= uint64(s[i-fragmentLen]) * hashBasePowK
		}
		if i >= fragmentLen-1 {
			fn(i-fragmentLen+1, h)
		}
	}
}

// span is a run of bytes [from, to) of a line to mask.
type span struct{ from, to int }

// find returns the runs of line that are pieces of a secret, in order and
// not overlapping, and the possible continuations on the next line when
// the last run reaches the end of line mid-secret. carry holds the
// continuations left by the line before.
func (f *fragmentIndex) find(line string, carry []string) (runs []span, next []string) {
	if f.grams == nil {
		return nil, nil
	}
	n, after := continued(line, carry)
	if n > 0 {
		runs = append(runs, span{0, n})
	}
	if n := f.startingSuffix(line); n > 0 {
		runs = addSpan(runs, span{0, n})
	}
	windows(line, func(i int, h uint64) {
		if word, bit := filterBit(h); f.filter[word]&bit == 0 {
			return
		}
		if _, ok := f.grams[line[i:i+fragmentLen]]; ok {
			runs = addSpan(runs, span{i, i + fragmentLen})
		}
	})
	switch {
	case len(runs) == 0 || runs[len(runs)-1].to < len(line):
	case len(line) >= fragmentLen:
		next = f.continuations(line[len(line)-fragmentLen:])
	case n == len(line):
		// A line shorter than a window, all of it the rest of a secret
		// (textwrap puts a short piece between hyphens on a line of its own).
		next = after
	}
	if n, rest := f.endingPrefix(line); n > 0 && (len(runs) == 0 || runs[len(runs)-1].to < len(line)) {
		runs = addSpan(runs, span{len(line) - n, len(line)})
		next = rest
	}
	return runs, next
}

// addSpan appends s to runs, merging it with the last run when they touch
// (windows arrive in order of their start).
func addSpan(runs []span, s span) []span {
	if n := len(runs); n > 0 && s.from <= runs[n-1].to {
		runs[n-1].to = max(runs[n-1].to, s.to)
		return runs
	}
	return append(runs, s)
}

// continued is how many bytes at the start of line continue one of the
// secrets' rests in carry, and, when that is the whole line, what is left
// of the rests it continues.
func continued(line string, carry []string) (best int, after []string) {
	for _, rest := range carry {
		n := 0
		for n < len(rest) && n < len(line) && rest[n] == line[n] {
			n++
		}
		best = max(best, n)
		if n == len(line) && n < len(rest) {
			after = append(after, rest[n:])
		}
	}
	return best, after
}

// continuations are what follows tail, the last window of a line, in each
// secret holding it (a window can recur in a secret, or be in several).
func (f *fragmentIndex) continuations(tail string) []string {
	var rests []string
	for _, form := range f.forms {
		for at := 0; ; {
			i := strings.Index(form[at:], tail)
			if i < 0 {
				break
			}
			if end := at + i + fragmentLen; end < len(form) {
				rests = append(rests, form[end:])
			}
			at += i + 1
		}
	}
	return rests
}

// endingPrefix is the longest prefix of a secret, edgeMin to fragmentLen-1
// bytes, that line ends with, and the rests of the secrets it begins.
func (f *fragmentIndex) endingPrefix(line string) (int, []string) {
	if len(line) < edgeMin {
		return 0, nil
	}
	if _, ok := f.prefixEnds[packEdge(line[len(line)-edgeMin:])]; !ok {
		return 0, nil
	}
	for n := min(fragmentLen-1, len(line)); n >= edgeMin; n-- {
		if rests, ok := f.prefixes[line[len(line)-n:]]; ok {
			return n, rests
		}
	}
	return 0, nil
}

// startingSuffix is the length of the longest suffix of a secret, edgeMin
// to fragmentLen-1 bytes, that line starts with.
func (f *fragmentIndex) startingSuffix(line string) int {
	if len(line) < edgeMin {
		return 0
	}
	if _, ok := f.suffixStarts[packEdge(line)]; !ok {
		return 0
	}
	for n := min(fragmentLen-1, len(line)); n >= edgeMin; n-- {
		if _, ok := f.suffixes[line[:n]]; ok {
			return n
		}
	}
	return 0
}

// packEdge is the first edgeMin bytes of s (at least that long) as a key.
func packEdge(s string) uint64 {
	var k uint64
	for i := 0; i < edgeMin; i++ {
		k = k<<8 | uint64(s[i])
	}
	return k
}

// maskSpans replaces each run of line with the mask, widened to whole
// UTF-8 characters so no half of one is left behind.
func maskSpans(line string, runs []span) string {
	var whole []span
	for _, s := range runs {
		for s.from > 0 && !utf8.RuneStart(line[s.from]) {
			s.from--
		}
		for s.to < len(line) && !utf8.RuneStart(line[s.to]) {
			s.to++
		}
		whole = addSpan(whole, s)
	}
	var b strings.Builder
	b.Grow(len(line))
	last := 0
	for _, s := range whole {
		b.WriteString(line[last:s.from])
		b.WriteString(mask)
		last = s.to
	}
	b.WriteString(line[last:])
	return b.String()
}
