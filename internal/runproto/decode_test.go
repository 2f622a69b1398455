package runproto

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/jsonw"
)

// FuzzDecodeBatch_isWhatEncodingJSONReads: whatever the body, DecodeBatch
// gives what encoding/json's decoder gives, the same batch or an error;
// and what the hand-written reader accepts, encoding/json accepts too.
func FuzzDecodeBatch_isWhatEncodingJSONReads(f *testing.F) {
	at := time.Date(2026, 11, 27, 2, 3, 4, 5006007, time.FixedZone("z", 5400))
	for i, s := range jsonw.Tricky {
		body, _ := Batch{Lines: []Line{{Seq: int64(i), Time: at, Output: s, Stream: StreamStderr}, {Seq: int64(i) + 1, Time: at, Output: s}}}.AppendJSON(nil)
		f.Add(body)
	}
	for _, s := range []string{
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"a\ud83d\ude00b"}]}`, // a surrogate pair
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"\ud800"}]}`,         // a lone one
		`{"lines":[{"seq":01,"time":"2026-01-02T03:04:05Z","output":""}]}`,
		`{"lines":[{"seq":1e3,"time":"2026-01-02T03:04:05Z","output":""}]}`,
		`{"lines":[{"seq":-0,"time":"2026-01-02T03:04:05Z","output":"x"}]} trailing`,
		`{"lines":[{"seq":9223372036854775808,"time":"2026-01-02T03:04:05Z","output":""}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05+24:00","output":""}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"\u0000\/\"","stream":"\u0073tderr"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"a","stream":"x","seq":2}]}`,
		`{"lines":[],"phase":"running"}`, `{"lines":[{"seq":1,"time":null,"output":"a"}]}`, `{"LINES":[{"SEQ":1}]}`,
		`{"lines":[{"seq":-9223372036854775808,"time":"2026-01-02T03:04:05Z","output":"x"}]}`,
		`{"lines":[{"seq":9223372036854775807,"time":"2026-01-02T03:04:05Z","output":"x"}]}`,
		`{"lines":[{"seq":9999999999999999999,"time":"2026-01-02T03:04:05Z","output":"x"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05.123456789123Z","output":"x"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05+23:59","output":"x"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02t03:04:05z","output":"x"}]}`,
		`{"lines":[{"seq":1,"time":"0000-01-01T00:00:00+01:00","output":"x"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"\u0000\uFFFF\uffFe\u00e9\/"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"\u12"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"a\"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"` + "\x7f\xef\xbf\xbd" + `"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"x","stream":""}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"x"}],"lines":[{"seq":2,"time":"2026-01-02T03:04:05Z","output":"y"}]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"x"}]}` + "\n",
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"x"},]}`,
		`{"lines":[{"seq":1,"time":"2026-01-02T03:04:05Z","output":"x"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecode(t, body)
		if lines, ok := readLinesOnly(body); ok {
			var want Batch
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatalf("read by hand, but json.Unmarshal says %v:\n%s", err, body)
			}
			if !sameBatch(Batch{Lines: lines}, want) {
				t.Fatalf("read by hand as %+v, by json.Unmarshal as %+v:\n%s", lines, want.Lines, body)
			}
		}
	})
}

// TestDecodeBatch_readsTheRunnersBatchesByHand: every batch of lines alone
// that AppendJSON writes, tricky texts and random bytes included, is read
// by hand (so the fast way is the usual one) and as encoding/json reads it.
func TestDecodeBatch_readsTheRunnersBatchesByHand(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	at := time.Date(2026, 11, 27, 2, 3, 4, 5006007, time.Local)
	var lines []Line
	for i, s := range jsonw.Tricky {
		lines = append(lines, Line{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Minute), Output: s})
	}
	lines[2].Stream = StreamStderr
	batches := []Batch{{Lines: lines}}
	for range 3_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		batches = append(batches, Batch{Lines: []Line{{Seq: rng.Int64N(1 << 62), Time: time.Unix(rng.Int64N(1e10), rng.Int64N(1e9)).UTC(), Output: string(b)}}})
	}
	for _, b := range batches {
		body, err := b.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := readLinesOnly(body); !ok {
			t.Fatalf("the runner's batch is not read by hand:\n%s", body)
		}
		checkDecode(t, body)
	}
	// Batches with more than lines, or none, go to encoding/json.
	for _, b := range []Batch{{Phase: PhaseRunning}, {Lines: lines[:1], Exit: &Exit{Code: 1, Message: "m"}}, {Commit: &Commit{Hash: "h"}}} {
		body, _ := b.AppendJSON(nil)
		if _, ok := readLinesOnly(body); ok {
			t.Fatalf("read by hand, with more than lines:\n%s", body)
		}
		checkDecode(t, body)
	}
}

// TestDecodeBatch_readsBodiesOfEdgeTokensAsEncodingJSONDoes: bodies built
// at random from the tokens where a hand-written reader goes wrong
// (integers at int64's edges and not quite integers, times at the edges of
// RFC 3339 and past them, every escape, surrogates alone and paired,
// invalid UTF-8, control characters), each checked against encoding/json.
func TestDecodeBatch_readsBodiesOfEdgeTokensAsEncodingJSONDoes(t *testing.T) {
	seqs := []string{"0", "-0", "1", "-1", "01", "1.0", "1e2", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "99999999999999999999", "-", "", "00", " 1", "1 "}
	times := []string{`"2026-01-02T03:04:05Z"`, `"2026-01-02T03:04:05.000000001+23:59"`, `"2026-01-02T03:04:05-00:00"`,
		`"2026-01-02T03:04:05+24:00"`, `"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59.999999999-23:59"`, `"2026-02-30T00:00:00Z"`,
		`"2026-01-02T03:04:05,5Z"`, `null`, `"2026-01-02 03:04:05Z"`, `"2026-01-02T03:04:05Z\u0000"`, `"2026-01-02T24:00:00Z"`}
	pieces := []string{"a", "é", `\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u0041`, `\u00e9`, `\uD800`, `\udc00`,
		`\ud83d\ude00`, `\uFFFF`, `\u0000`, `\u12G4`, `\x`, "\x7f", "\xff", "\xc3", "\xe2\x82\xac", "\xed\xa0\x80", "\t", `\`, `\u`, "<", "\u2028"}
	rng := rand.New(rand.NewPCG(7, 8))
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(5) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String() + `"`
	}
	byHand := 0
	for range 30_000 {
		var b strings.Builder
		b.WriteString(`{"lines":[`)
		for j := range 1 + rng.IntN(3) {
			if j > 0 {
				b.WriteByte(',')
			}
			tm := times[0]
			if rng.IntN(4) == 0 {
				tm = times[rng.IntN(len(times))]
			}
			b.WriteString(`{"seq":` + seqs[rng.IntN(len(seqs))] + `,"time":` + tm + `,"output":` + str())
			if rng.IntN(2) == 0 {
				b.WriteString(`,"stream":` + str())
			}
			b.WriteByte('}')
		}
		body := []byte(b.String() + `]}`)
		if _, ok := readLinesOnly(body); ok {
			byHand++
		}
		checkDecode(t, body)
	}
	if byHand == 0 {
		t.Fatal("no body was read by hand: the test checks only encoding/json against itself")
	}
}

// TestDecodeBatch_aBodyOfLineOpeningsAllocatesAtMostTwiceItsSize: the
// slice is sized by what the body can hold (a Line takes about what its
// shortest JSON does), not by how many lines the body seems to open, which
// made nine times the body's size.
func TestDecodeBatch_aBodyOfLineOpeningsAllocatesAtMostTwiceItsSize(t *testing.T) {
	body := []byte(`{"lines":[` + strings.Repeat(`{"seq":`, (MaxBatchBytes-16)/7))
	allocs := testing.AllocsPerRun(1, func() {
		if _, ok := readLinesOnly(body); ok {
			t.Fatal("read by hand")
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	readLinesOnly(body)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 2*uint64(len(body)) || allocs > 2 {
		t.Fatalf("refusing a %d-byte body allocated %d bytes in %.0f allocations", len(body), grew, allocs)
	}
}

// checkDecode: DecodeBatch gives what json.NewDecoder(…).Decode gives.
func checkDecode(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := DecodeBatch(body)
	var want Batch
	wantErr := json.NewDecoder(bytes.NewReader(body)).Decode(&want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("error %v, encoding/json's %v:\n%s", gotErr, wantErr, body)
	}
	if gotErr == nil && !sameBatch(got, want) {
		t.Fatalf("read as %+v, encoding/json reads %+v:\n%s", got, want, body)
	}
}

// sameBatch compares times by instant and offset: each parse makes its own
// fixed zone.
func sameBatch(a, b Batch) bool {
	if len(a.Lines) != len(b.Lines) || (a.Lines == nil) != (b.Lines == nil) || a.Phase != b.Phase ||
		!jsonEqual(a.Commit, b.Commit) || !jsonEqual(a.Exit, b.Exit) {
		return false
	}
	for i := range a.Lines {
		x, y := a.Lines[i], b.Lines[i]
		_, ox := x.Time.Zone()
		_, oy := y.Time.Zone()
		if x.Seq != y.Seq || x.Output != y.Output || x.Stream != y.Stream || !x.Time.Equal(y.Time) || ox != oy {
			return false
		}
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func BenchmarkDecodeBatch(b *testing.B) {
	batch := Batch{Lines: make([]Line, 1000)}
	for i := range batch.Lines {
		batch.Lines[i] = Line{Seq: int64(i + 1), Time: time.Now(), Output: "TASK [deploy : copy the unit file] *** changed: [web-01] => (item=bastion.service) \x1b[0m"}
	}
	body, _ := batch.AppendJSON(nil)
	b.Run("DecodeBatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeBatch(body); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch.Lines)), "ns/line")
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out Batch
			if err := json.NewDecoder(strings.NewReader(string(body))).Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch.Lines)), "ns/line")
	})
}
