package cron

import (
	"strings"
	"testing"
	"time"
)

func TestCronParse_acceptsWhatTheStandardParserAccepts(t *testing.T) {
	from := time.Date(2030, time.March, 4, 10, 7, 30, 0, time.UTC)
	tests := []struct {
		expr string
		next time.Time
	}{
		{"* * * * *", time.Date(2030, time.March, 4, 10, 8, 0, 0, time.UTC)},
		{"*/5 * * * *", time.Date(2030, time.March, 4, 10, 10, 0, 0, time.UTC)},
		{"0 0 * * *", time.Date(2030, time.March, 5, 0, 0, 0, 0, time.UTC)},
		{"30 9 * * mon-fri", time.Date(2030, time.March, 5, 9, 30, 0, 0, time.UTC)},
		{"0 12 1 jan,jul *", time.Date(2030, time.July, 1, 12, 0, 0, 0, time.UTC)},
		{"  15 10 * * *  ", time.Date(2030, time.March, 4, 10, 15, 0, 0, time.UTC)},
		{"0 0 29 2 *", time.Date(2032, time.February, 29, 0, 0, 0, 0, time.UTC)},
		{"@daily", time.Date(2030, time.March, 5, 0, 0, 0, 0, time.UTC)},
		{"@hourly", time.Date(2030, time.March, 4, 11, 0, 0, 0, time.UTC)},
		// 09:00 in Berlin (UTC+1 in early March) is 08:00 UTC.
		{"CRON_TZ=Europe/Berlin 0 9 * * *", time.Date(2030, time.March, 5, 8, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			if got := s.Next(from); !got.Equal(tt.next) {
				t.Errorf("Parse(%q).Next(%s) = %s, want %s", tt.expr, from, got, tt.next)
			}
			if err := Validate(tt.expr); err != nil {
				t.Errorf("Validate(%q) = %v", tt.expr, err)
			}
		})
	}
}

func TestCronValidate_refusesWithACronPrefixedMessage(t *testing.T) {
	tests := []struct {
		expr, message string
	}{
		{"", "Cron: empty spec string"},
		{"* * * *", "Cron: expected exactly 5 fields, found 4: [* * * *]"},
		{"0 * * * * *", "Cron: expected exactly 5 fields, found 6: [0 * * * * *]"},
		{"60 * * * *", "Cron: end of range (60) above maximum (59): 60"},
		{"* 24 * * *", "Cron: end of range (24) above maximum (23): 24"},
		{"* * * * mon-xyz", `Cron: failed to parse int from xyz: strconv.Atoi: parsing "xyz": invalid syntax`},
		{"@fortnightly", "Cron: unrecognized descriptor: @fortnightly"},
		{"@every 1m", `Cron: @every is not supported: use five fields, for example "*/5 * * * *"`},
		{"CRON_TZ=UTC @every 1s", `Cron: @every is not supported: use five fields, for example "*/5 * * * *"`},
		{"CRON_TZ=Mars/Olympus 0 0 * * *", "Cron: provided bad location Mars/Olympus: unknown time zone Mars/Olympus"},
		{"CRON_TZ=UTC", `Cron: "CRON_TZ=UTC" is not a zone followed by five fields`},
		{"0 0 30 2 *", `Cron: "0 0 30 2 *" matches no date`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			err := Validate(tt.expr)
			if err == nil {
				t.Fatalf("Validate(%q) = nil, want %q", tt.expr, tt.message)
			}
			if !strings.HasPrefix(err.Error(), ErrorPrefix) {
				t.Errorf("Validate(%q) = %q, want the prefix %q", tt.expr, err, ErrorPrefix)
			}
			if err.Error() != tt.message {
				t.Errorf("Validate(%q) = %q, want %q", tt.expr, err, tt.message)
			}
			if s, perr := Parse(tt.expr); s != nil || perr == nil {
				t.Errorf("Parse(%q) = %v, %v; want nil and an error", tt.expr, s, perr)
			}
		})
	}
}

// FuzzParse: whatever a user types, Parse answers without panicking, and
// every refusal carries the prefix the API relies on.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"* * * * *", "CRON_TZ=UTC", "TZ=", "@every 1s", "0 0 30 2 *", "1-2/0 * * * *"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), ErrorPrefix) {
				t.Fatalf("Parse(%q) = %q, want the prefix %q", expr, err, ErrorPrefix)
			}
			return
		}
		if s.Next(neverReference).IsZero() {
			t.Fatalf("Parse(%q) accepted a schedule that never fires", expr)
		}
	})
}
