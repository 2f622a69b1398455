// Package cron owns what a Schedule's cron format means. The API validates
// with it before saving and the Schedule controller parses with it, so the
// two can never disagree about an expression.
package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// Schedules may name a zone with CRON_TZ=; the manager's image may have
	// no zoneinfo, so the binary carries its own.
	_ "time/tzdata"

	robfig "github.com/robfig/cron/v3"
)

// ErrorPrefix starts every error of this package: the API answers
// 400 {"error": "Cron: ..."} with the message as it is.
const ErrorPrefix = "Cron: "

// Schedule tells the next fire time after a given time.
type Schedule = robfig.Schedule

// neverReference is where Parse looks for a first fire time. Any date a
// five-field expression can name (even 29 February) falls within the five
// years robfig searches from here; a fixed instant keeps Parse independent
// of the clock.
var neverReference = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Parse reads a cron expression as robfig/cron's standard parser does: five
// fields (minute, hour, day of month, month, day of week), an optional
// CRON_TZ=<zone> prefix, and the descriptors @yearly, @annually, @monthly,
// @weekly, @daily, @midnight and @hourly, which stand for five-field
// expressions.
//
// Two things the standard parser takes are refused, because a Schedule fires
// at most once a minute, on the minute:
//   - @every <duration>, which fires at a constant interval from whenever it
//     starts, down to seconds;
//   - expressions that match no date at all, such as "0 0 30 2 *".
//
// Without CRON_TZ= the Schedule controller reads an expression in UTC.
func Parse(expr string) (s Schedule, err error) {
	if strings.HasPrefix(strings.TrimSpace(stripZone(expr)), "@every ") {
		return nil, errors.New(ErrorPrefix + "@every is not supported: use five fields, for example \"*/5 * * * *\"")
	}
	// robfig v3.0.1 panics on a zone prefix with nothing after it
	// ("CRON_TZ=UTC"); user input must never crash the caller.
	defer func() {
		if recover() != nil {
			s, err = nil, fmt.Errorf("%s%q is not a zone followed by five fields", ErrorPrefix, expr)
		}
	}()
	s, err = robfig.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("%s%w", ErrorPrefix, err)
	}
	if s.Next(neverReference).IsZero() {
		return nil, fmt.Errorf("%s%q matches no date", ErrorPrefix, expr)
	}
	return s, nil
}

// Validate reports whether expr is a cron expression Parse accepts. Its
// error's message starts with ErrorPrefix.
func Validate(expr string) error {
	_, err := Parse(expr)
	return err
}

// stripZone drops a leading TZ= or CRON_TZ= word, as robfig does before it
// looks for a descriptor.
func stripZone(expr string) string {
	if !strings.HasPrefix(expr, "TZ=") && !strings.HasPrefix(expr, "CRON_TZ=") {
		return expr
	}
	if i := strings.IndexByte(expr, ' '); i >= 0 {
		return expr[i:]
	}
	return ""
}
