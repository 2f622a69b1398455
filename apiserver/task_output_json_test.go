package apiserver

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/jsonw"
	"github.com/bastion-dev/bastion/internal/store"
)

func FuzzOutputJSON_isByteForByteWhatJSONMarshalWrites(f *testing.F) {
	for _, s := range jsonw.Tricky {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, stderr bool) {
		checkOutputJSON(t, store.Line{Seq: 1, Time: time.Unix(1_700_000_000, 123456000).UTC(), Output: text, Stderr: stderr})
	})
}

// TestAppendOutputJSON_isWhatJSONMarshalWrites holds the hand-written
// record to json.Marshal's bytes, which Semaphore's clients and the
// console read: the seeds, then random texts of every byte, then random
// runes, with random times.
func TestAppendOutputJSON_isWhatJSONMarshalWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 23))
	randomTime := func() time.Time {
		return time.UnixMicro(rng.Int64N(253_402_300_799_000_000)).UTC() // up to the year 9999
	}
	for _, s := range jsonw.Tricky {
		checkOutputJSON(t, store.Line{Time: randomTime(), Output: s})
		checkOutputJSON(t, store.Line{Time: randomTime(), Output: s, Stderr: true})
	}
	for range 20_000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		checkOutputJSON(t, store.Line{Time: randomTime(), Output: string(b), Stderr: rng.IntN(2) == 0})
	}
	for range 5_000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteRune(rune(rng.IntN(0x110000)))
		}
		checkOutputJSON(t, store.Line{Time: randomTime(), Output: sb.String()})
	}
	// Times the fast path leaves to json.Marshal: another zone, and a year
	// json.Marshal refuses (an error either way, as before).
	checkOutputJSON(t, store.Line{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)), Output: "zone"})
	if _, err := appendOutputJSON(nil, 1, store.Line{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a time in the year 10000 was written; json.Marshal refuses it")
	}
}

func checkOutputJSON(t *testing.T, l store.Line) {
	t.Helper()
	const taskID = 4321
	want, err := json.Marshal(outputJSON{TaskID: taskID, Time: l.Time, Output: l.Output, Stream: l.Stream()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := appendOutputJSON([]byte("prefix"), taskID, l)
	if err != nil {
		t.Fatalf("%q: %v", l.Output, err)
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%q at %v:\n got %s\nwant %s", l.Output, l.Time, got[len("prefix"):], want)
	}
}

func BenchmarkAppendOutputJSON(b *testing.B) {
	l := store.Line{Seq: 1, Time: time.Now().UTC(), Output: "TASK [deploy : copy the unit file] *** changed: [web-01] => (item=bastion.service)"}
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf, _ = appendOutputJSON(buf[:0], 1, l)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(outputJSON{TaskID: 1, Time: l.Time, Output: l.Output, Stream: l.Stream()})
		}
	})
}
