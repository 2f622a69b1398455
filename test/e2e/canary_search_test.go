package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// A canary is a secret made for a test: a distinctive random core that
// nothing else in the product can produce, plus, for most kinds, a tail of
// characters that encoders change (a quote, a backslash, <&>, a non-ASCII
// letter), so that a secret printed JSON- or shell-escaped is still found.
//
// What is searched is the core, and the core in the encodings a leak takes
// on its way out: as is (which also covers JSON- and URL-escaped forms, the
// core being letters and digits), URL-escaped (PEM lines hold + and /),
// hexadecimal, and base64 (standard and URL alphabets) at each of the three
// alignments it can have inside a longer encoded text.
type canary struct {
	kind  string
	value string   // what the product is given
	cores []string // what is searched for, each at least 12 characters
}

const canaryAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newCore is "cnry" and 22 random letters and digits (113 bits).
func newCore(t *testing.T) string {
	t.Helper()
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = canaryAlphabet[int(b[i])%len(canaryAlphabet)]
	}
	return "cnry" + string(b)
}

// newCanary is a canary whose value is its core followed by tail.
func newCanary(t *testing.T, kind, tail string) canary {
	core := newCore(t)
	return canary{kind: kind, value: core + tail, cores: []string{core}}
}

// linesCanary searches for every line of a multi-line secret (a PEM key)
// that is long enough to be distinctive, its armour lines excepted.
func linesCanary(kind, value string) canary {
	c := canary{kind: kind, value: value}
	for _, line := range strings.Split(value, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 12 && !strings.HasPrefix(line, "-----") {
			c.cores = append(c.cores, line)
		}
	}
	return c
}

// needle is one encoded form of a core.
type needle struct {
	text, encoding string
}

// needles lists the forms of every core.
func (c canary) needles() []needle {
	var out []needle
	seen := map[string]bool{}
	add := func(text, encoding string) {
		if len(text) >= 12 && !seen[text] {
			seen[text] = true
			out = append(out, needle{text, encoding})
		}
	}
	for _, core := range c.cores {
		add(core, "as is")
		add(url.QueryEscape(core), "URL-escaped")
		add(url.PathEscape(core), "URL-escaped")
		add(hex.EncodeToString([]byte(core)), "hex")
		add(strings.ToUpper(hex.EncodeToString([]byte(core))), "hex")
		for shift := 0; shift < 3; shift++ {
			for _, enc := range []struct {
				name string
				e    *base64.Encoding
			}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
				add(alignedBase64(enc.e, core, shift), fmt.Sprintf("%s+%d", enc.name, shift))
			}
		}
	}
	return out
}

// alignedBase64 is the part of the base64 of core, preceded by shift other
// bytes, that depends on core alone: whatever surrounds core in a longer
// text, its encoding holds this string.
func alignedBase64(e *base64.Encoding, core string, shift int) string {
	enc := e.EncodeToString(append(make([]byte, shift), core...))
	start := 0
	if shift > 0 {
		start = 4 // the first group mixes in the bytes before core
	}
	end := len(enc) - 4 // the last group may mix in the bytes after it
	if start >= end {
		return ""
	}
	return enc[start:end]
}

// finding is one needle found in one haystack.
type finding struct {
	where, kind, encoding, context string
}

func (f finding) String() string {
	return fmt.Sprintf("%s: the %s (%s) in …%s…", f.where, f.kind, f.encoding, f.context)
}

// search returns every form of every canary found in text.
func search(where, text string, canaries []canary) []finding {
	var out []finding
	for _, c := range canaries {
		for _, n := range c.needles() {
			if i := strings.Index(text, n.text); i >= 0 {
				from, to := max(0, i-60), min(len(text), i+len(n.text)+60)
				out = append(out, finding{where, c.kind, n.encoding, strings.ReplaceAll(text[from:to], "\n", "⏎")})
			}
		}
	}
	return out
}

// found reports whether some form of c is in text.
func found(text string, c canary) bool { return len(search("", text, []canary{c})) > 0 }

// recorder keeps every answer the test's clients received from Bastion:
// status, headers (but Set-Cookie, which carries a session by design) and
// body, and every websocket frame.
type recorder struct {
	mu      sync.Mutex
	answers []string
	next    http.RoundTripper
	// except holds answers that carry a secret by design (the one answer
	// that creates an API token), kept apart from the others.
	except []string
}

func newRecorder() *recorder { return &recorder{next: http.DefaultTransport} }

// RoundTrip passes the request on and records the answer.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s -> %d\n", req.Method, req.URL.Path, resp.StatusCode)
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		if name != "Set-Cookie" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(resp.Header[name], ", "))
	}
	b.Write(body)
	r.add(b.String())
	return resp, nil
}

func (r *recorder) add(answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, answer)
}

// setAside moves the last recorded answer out of the searched ones.
func (r *recorder) setAside() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.answers[len(r.answers)-1]
	r.answers = r.answers[:len(r.answers)-1]
	r.except = append(r.except, last)
	return last
}

func (r *recorder) all() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.answers), strings.Join(r.answers, "\n")
}

// bearerTransport signs every request with an API token.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}
