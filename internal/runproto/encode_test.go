package runproto

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/jsonw"
)

func FuzzBatchJSON_isByteForByteWhatJSONMarshalWrites(f *testing.F) {
	for i, s := range jsonw.Tricky {
		f.Add(s, int64(i), "", "", 0)
		f.Add(s, int64(i+1)<<40, StreamStderr, s, i)
	}
	f.Fuzz(func(t *testing.T, output string, seq int64, stream, message string, code int) {
		at := time.Unix(1_700_000_000, seq%1e9).In(time.FixedZone("z", int(seq%97)*60))
		checkBatchJSON(t, Batch{Lines: []Line{{Seq: seq, Time: at, Output: output, Stream: stream}}, Phase: stream,
			Commit: &Commit{Hash: output, Message: message}, Exit: &Exit{Code: code, Message: message}})
	})
}

// TestBatchJSON_isWhatJSONMarshalWrites: batches with and without lines,
// phase, commit and exit; every tricky text as a line; random bytes;
// times in several zones and one a year json.Marshal refuses.
func TestBatchJSON_isWhatJSONMarshalWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 11, 27, 2, 3, 4, 5006007, time.UTC)
	checkBatchJSON(t, Batch{})
	checkBatchJSON(t, Batch{Phase: PhaseRunning})
	checkBatchJSON(t, Batch{Commit: &Commit{Hash: "abc", Message: "<msg>"}, Exit: &Exit{Code: 2}})
	var lines []Line
	for i, s := range jsonw.Tricky {
		lines = append(lines, Line{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Hour).In(time.FixedZone("z", i*1800)), Output: s})
	}
	lines[3].Stream = StreamStderr
	checkBatchJSON(t, Batch{Lines: lines})
	checkBatchJSON(t, Batch{Lines: lines, Phase: PhaseRunning, Commit: &Commit{Hash: "h", Message: "m"}, Exit: &Exit{Code: 1, Message: "x"}})
	for range 5_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		checkBatchJSON(t, Batch{Lines: []Line{{Seq: rng.Int64(), Time: time.Unix(rng.Int64N(1e10), rng.Int64N(1e9)), Output: string(b)}}})
	}
	if _, err := (Batch{Lines: []Line{{Seq: 1, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}).AppendJSON(nil); err == nil {
		t.Error("a line of the year 10000 was written; json.Marshal refuses it")
	}
}

func checkBatchJSON(t *testing.T, b Batch) {
	t.Helper()
	want, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.AppendJSON([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("\n got %s\nwant %s", got[1:], want)
	}
}

func BenchmarkBatchJSON(b *testing.B) {
	batch := Batch{Lines: make([]Line, 1000)}
	for i := range batch.Lines {
		batch.Lines[i] = Line{Seq: int64(i + 1), Time: time.Now(), Output: "TASK [deploy : copy the unit file] *** changed: [web-01] => (item=bastion.service)"}
	}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = batch.AppendJSON(buf[:0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch.Lines)), "ns/line")
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(batch)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch.Lines)), "ns/line")
	})
}
