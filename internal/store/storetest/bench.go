package storetest

import (
	"fmt"
	"testing"

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
