package cron

import (
	"strings"
	"testing"
	"time"
)

// FuzzValidate_neverPanicsAndAgreesWithParse: any text is either a
// schedule that fires within five years of any instant, each time later
// than the one before, or an error that starts with "Cron: ".
func FuzzValidate_neverPanicsAndAgreesWithParse(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/5 * * * *", "0 0 30 2 *", "0 0 29 2 *", "@every 1s", "@hourly", "CRON_TZ=UTC",
		"CRON_TZ=Europe/Paris 0 9 * * 1-5", "TZ=../../etc/passwd * * * * *", "CRON_TZ= * * * * *",
		"* * * * * *", "99999999999999999999 * * * *", "*/0 * * * *", "1-0 * * * *", "\x00", "\xff * * * *",
		"0 0 * * 7", "$(touch /tmp/x)", "@every", "TZ=", "@ * * * * *", strings.Repeat("*/1,", 200) + " * * * *",
	} {
		f.Add(seed)
	}
	from := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr)
		if verr := Validate(expr); (verr == nil) != (err == nil) {
			t.Fatalf("Validate(%q) = %v but Parse gives %v", expr, verr, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), ErrorPrefix) || s != nil {
				t.Fatalf("Parse(%q) = %v, %v: want a nil schedule and a %q error", expr, s, err, ErrorPrefix)
			}
			return
		}
		next := s.Next(from)
		if next.IsZero() || !next.After(from) || next.Sub(from) > 5*366*24*time.Hour {
			t.Fatalf("%q accepted but its next time after %s is %s", expr, from, next)
		}
		if next.Second() != 0 || next.Nanosecond() != 0 {
			t.Fatalf("%q fires at %s, not on the minute", expr, next)
		}
		if after := s.Next(next); !after.IsZero() && !after.After(next) {
			t.Fatalf("%q fires at %s, then at %s", expr, next, after)
		}
	})
}
