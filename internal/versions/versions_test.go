package versions

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

func TestVersionNext(t *testing.T) {
	tests := []struct {
		last, want string
	}{
		{"1.0.0", "1.0.1"},
		{"1.0.1", "1.0.2"},
		{"v2-rc9", "v2-rc10"},
		{"1.9", "1.10"},
		{"release-099", "release-100"},
		{"007", "008"},
		{"009", "010"},
		{"09", "10"},
		{"99", "100"},
		{"0", "1"},
		{"v1.2.3-beta", "v1.2.4-beta"},
		{"build-41+sha.abc", "build-42+sha.abc"},
		{"2024.12.31", "2024.12.32"},
		{"18446744073709551615", "18446744073709551616"},
		{"v٣-9", "v٣-10"}, // only ASCII digits are numbers
	}
	for _, tt := range tests {
		t.Run(tt.last, func(t *testing.T) {
			got, err := Next(tt.last)
			if err != nil {
				t.Fatalf("Next(%q): %v", tt.last, err)
			}
			if got != tt.want {
				t.Errorf("Next(%q) = %q, want %q", tt.last, got, tt.want)
			}
		})
	}
}

func TestVersionNext_refusesAVersionWithoutDigits(t *testing.T) {
	for _, v := range []string{"", "latest", "v.", "٣"} {
		_, err := Next(v)
		if !errors.Is(err, ErrNoDigits) {
			t.Errorf("Next(%q) error = %v, want ErrNoDigits", v, err)
			continue
		}
		want := fmt.Sprintf("version %q has no digits to increment", v)
		if err.Error() != want {
			t.Errorf("Next(%q) error = %q, want %q", v, err, want)
		}
	}
}

func TestVersionFirst(t *testing.T) {
	got, err := First("1.0.0")
	if err != nil || got != "1.0.0" {
		t.Errorf(`First("1.0.0") = %q, %v; want "1.0.0", nil`, got, err)
	}
	if _, err := First("latest"); !errors.Is(err, ErrNoDigits) {
		t.Errorf(`First("latest") error = %v, want ErrNoDigits`, err)
	}
}

func TestVersionSequence(t *testing.T) {
	v, err := First("1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		got = append(got, v)
		if v, err = Next(v); err != nil {
			t.Fatal(err)
		}
	}
	if want := "1.0.0 1.0.1 1.0.2"; strings.Join(got, " ") != want {
		t.Errorf("sequence = %q, want %q", strings.Join(got, " "), want)
	}
}

// lastDigits finds the last group of ASCII digits independently of split:
// RE2's \d and \D are ASCII-only, and the greedy prefix ends on a non-digit.
var lastDigits = regexp.MustCompile(`(?s)^(.*\D)?(\d+)(\D*)$`)

// FuzzNext checks the invariant for any input with a digit: the prefix and
// suffix are unchanged and the number in between is one more, at the same
// width unless every digit was a nine.
func FuzzNext(f *testing.F) {
	for _, seed := range []string{"1.0.0", "v2-rc9", "release-099", "999", "a9b", "x", "", "\xff9\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, last string) {
		got, err := Next(last)
		m := lastDigits.FindStringSubmatch(last)
		if m == nil {
			if !errors.Is(err, ErrNoDigits) {
				t.Fatalf("Next(%q) = %q, %v; want ErrNoDigits", last, got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Next(%q): %v", last, err)
		}
		prefix, digits, suffix := m[1], m[2], m[3]
		if !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, suffix) || len(got) < len(prefix)+len(suffix) {
			t.Fatalf("Next(%q) = %q changed the prefix %q or suffix %q", last, got, prefix, suffix)
		}
		newDigits := got[len(prefix) : len(got)-len(suffix)]
		oldN, _ := new(big.Int).SetString(digits, 10)
		newN, ok := new(big.Int).SetString(newDigits, 10)
		if !ok || newN.Cmp(oldN.Add(oldN, big.NewInt(1))) != 0 {
			t.Fatalf("Next(%q) = %q: %q is not %q + 1", last, got, newDigits, digits)
		}
		wantLen := len(digits)
		if strings.Trim(digits, "9") == "" {
			wantLen++ // only a carry out of the top digit widens the number
		}
		if len(newDigits) != wantLen {
			t.Fatalf("Next(%q) = %q: width %d, want %d", last, got, len(newDigits), wantLen)
		}
	})
}
