package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// BenchmarkAppendLines measures AppendLines with batches of 1,000 typical
// ansible lines (about 90 bytes) to one task, and reports lines per second.
func BenchmarkAppendLines(b *testing.B, open Open) {
	const batch = 1000
	s := open(b)
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	ls := make([]store.Line, batch)
	for i := range ls {
		ls[i] = store.Line{Time: base, Output: fmt.Sprintf("ok: [web-%02d.example.com] => (item=nginx) changed=false attempts=1 elapsed=0.%03ds", i%40, i)}
	}
	var seq int64
	for b.Loop() {
		for i := range ls {
			seq++
			ls[i].Seq = seq
		}
		if err := s.AppendLines(b.Context(), key, ls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(seq)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkSignIn measures what the sign-in limits cost a failed sign-in:
// one SignInRecord and one SignInAttempt (which counts it, before the
// password is compared), for accounts and addresses that vary as a
// guessing botnet's do.
func BenchmarkSignIn(b *testing.B, open Open) {
	s := open(b)
	n := 0
	for b.Loop() {
		n++
		account, address := fmt.Sprintf("account-%d", n%500), fmt.Sprintf("198.51.100.%d", n%250)
		if _, err := s.SignInRecord(b.Context(), account, address); err != nil {
			b.Fatal(err)
		}
		f := store.SignInWindow{Now: base.Add(time.Duration(n) * time.Millisecond), Window: 15 * time.Minute, MaxGuessers: 256}
		if _, err := s.SignInAttempt(b.Context(), account, address, f, func(store.SignInRecord) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimDelivery measures a GitHub delivery's claim of its two keys.
func BenchmarkClaimDelivery(b *testing.B, open Open) {
	s := open(b)
	n := 0
	for b.Loop() {
		n++
		at := base.Add(time.Duration(n) * time.Millisecond)
		keys := []string{fmt.Sprintf("uid/id/%d", n), fmt.Sprintf("uid/body/%d", n)}
		if ok, err := s.ClaimDeliveries(b.Context(), keys, at, at.Add(-24*time.Hour)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
