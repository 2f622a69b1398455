package jsonw

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func FuzzAppendString_isByteForByteWhatJSONMarshalWrites(f *testing.F) {
	for _, s := range Tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

// TestAppendString_isWhatJSONMarshalWrites: the seeds, random texts of
// every byte, and random runes.
func TestAppendString_isWhatJSONMarshalWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 23))
	for _, s := range Tricky {
		checkString(t, s)
	}
	for range 20_000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		checkString(t, string(b))
	}
	for range 5_000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteRune(rune(rng.IntN(0x110000)))
		}
		checkString(t, sb.String())
	}
}

func checkString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("%q:\n got %s\nwant %s", s, got[1:], want)
	}
}

// TestAppendTime_isWhatMarshalJSONWritesOrDeclines: random instants in
// random zones (whole minutes, seconds, a day and more), and the years
// MarshalJSON refuses.
func TestAppendTime_isWhatMarshalJSONWritesOrDeclines(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("min", 5*3600+30*60), time.FixedZone("neg", -(9*3600 + 45*60)),
		time.FixedZone("sec", 3600+7), time.FixedZone("day", 24*3600), time.FixedZone("max", 24*3600-60)}
	instants := []time.Time{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), {}}
	for range 20_000 {
		instants = append(instants, time.Unix(rng.Int64N(253_402_300_800)-62_135_596_800, rng.Int64N(1e9)))
	}
	for i, at := range instants {
		tm := at.In(zones[i%len(zones)])
		want, err := tm.MarshalJSON()
		got, ok := AppendTime([]byte("x"), tm)
		switch {
		case ok && err != nil:
			t.Fatalf("%v: written as %s, MarshalJSON refuses it (%v)", tm, got[1:], err)
		case ok && !bytes.Equal(got, append([]byte("x"), want...)):
			t.Fatalf("%v:\n got %s\nwant %s", tm, got[1:], want)
		case !ok && !bytes.Equal(got, []byte("x")):
			t.Fatalf("%v: declined but appended %q", tm, got[1:])
		case !ok && err == nil && tm.Year() >= 0 && tm.Year() <= 9999 && tm.Location() == time.UTC:
			t.Fatalf("%v: declined a UTC time of a year MarshalJSON writes", tm)
		}
	}
}
