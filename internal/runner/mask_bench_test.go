package runner

import (
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchSecrets are n distinct, random-looking secrets of 40 to 200
// characters (tokens, JWTs, base64 keys: the kind ansible wraps).
func benchSecrets(n int) []string {
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for seed := 0; b.Len() < 200; seed++ {
			sum := sha512.Sum512([]byte(fmt.Sprintf("bench-secret-%d-%d", i, seed)))
			b.WriteString(base64.RawURLEncoding.EncodeToString(sum[:]))
		}
		out[i] = b.String()[:40+i*160/max(n-1, 1)]
	}
	return out
}

// BenchmarkRedactingSink: 10 secrets of 40-200 characters, 100-byte lines
// of ordinary ansible output, one line in 100 holding a secret
// (go test ./internal/runner -run '^$' -bench RedactingSink -benchtime 2000000x).
func BenchmarkRedactingSink(b *testing.B) {
	secrets := benchSecrets(10)
	sink := &redactingSink{next: discard{}}
	sink.add(secrets...)
	lines := make([]string, 100)
	for i := range lines {
		line := fmt.Sprintf("ok: [web%03d] => (item=/etc/app/conf.d/%04d.conf) changed=false elapsed=0.%04ds msg=done ", i, i*7, i*13)
		if i == 50 {
			line = "    \"msg\": \"" + secrets[i%10] + "\""
		}
		lines[i] = (line + strings.Repeat("-", 100))[:100]
	}
	var at time.Time
	b.SetBytes(100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink.Line(at, lines[i%len(lines)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

type discard struct{}

func (discard) Line(time.Time, string)       {}
func (discard) StderrLine(time.Time, string) {}
