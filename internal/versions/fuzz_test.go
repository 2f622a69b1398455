package versions

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzNext_keepsPrefixAndSuffixAndAddsOne: Next changes only the last run
// of ASCII digits, which grows by exactly one as a number, keeps its width
// unless every digit was a nine, and agrees with First about what has
// digits. Seeds: huge numbers, leading zeros, other scripts' digits,
// invalid UTF-8, NUL.
func FuzzNext_keepsPrefixAndSuffixAndAddsOne(f *testing.F) {
	for _, seed := range []string{
		"1.0.0", "v2-rc9", "007", "release-099", "99", "x", "", "٣", "３", "1.2.3-\xff",
		"a\x00b9", strings.Repeat("9", 400), "18446744073709551615", "9223372036854775807-beta",
		"../9", "$(touch /tmp/x)1", "1e999",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		next, err := Next(v)
		_, firstErr := First(v)
		if (err == nil) != (firstErr == nil) {
			t.Fatalf("Next(%q) err %v but First err %v", v, err, firstErr)
		}
		if err != nil {
			if strings.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 {
				t.Fatalf("Next(%q) refused a version with ASCII digits: %v", v, err)
			}
			return
		}
		prefix, digits, suffix, _ := split(v)
		if !strings.HasPrefix(next, prefix) || !strings.HasSuffix(next, suffix) || len(next) < len(v) {
			t.Fatalf("Next(%q) = %q changed the prefix %q or suffix %q", v, next, prefix, suffix)
		}
		got := next[len(prefix) : len(next)-len(suffix)]
		a, _ := new(big.Int).SetString(digits, 10)
		b, ok := new(big.Int).SetString(got, 10)
		if !ok || b.Sub(b, a).Cmp(big.NewInt(1)) != 0 {
			t.Fatalf("Next(%q) = %q: %s is not %s plus one", v, next, got, digits)
		}
		if allNines := strings.Trim(digits, "9") == ""; len(got) != len(digits)+map[bool]int{true: 1, false: 0}[allNines] {
			t.Fatalf("Next(%q) = %q: width %d from %d", v, next, len(got), len(digits))
		}
	})
}
