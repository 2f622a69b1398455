// Package versions owns the arithmetic of build versions: a build
// template's first task gets the template's start version, and each later
// task increments the last group of digits of the previous version, keeping
// whatever comes before and after it (1.0.0 → 1.0.1, v2-rc9 → v2-rc10).
package versions

import (
	"errors"
	"fmt"
)

// ErrNoDigits is returned for a version with nothing to increment. A build
// template whose start version has no digits could number only its first
// task, so it is refused up front rather than on the second run.
var ErrNoDigits = errors.New("has no digits to increment")

// First is the version of a build template's first task: the start version
// itself, provided Next can carry on from it.
func First(startVersion string) (string, error) {
	if _, _, _, ok := split(startVersion); !ok {
		return "", noDigits(startVersion)
	}
	return startVersion, nil
}

// Next increments the last group of ASCII digits in last, keeping the prefix
// and suffix byte for byte.
//
// Leading zeros: the number keeps its width while the result fits, so
// 007 → 008 and release-099 → release-100; it grows by one digit only when
// every digit was a nine (99 → 100, 09 → 10). The arithmetic is done on the
// digits as text, so a group of any length increments without overflow.
func Next(last string) (string, error) {
	prefix, digits, suffix, ok := split(last)
	if !ok {
		return "", noDigits(last)
	}
	return prefix + increment(digits) + suffix, nil
}

// split finds the last run of ASCII digits. Only ASCII digits count: other
// Unicode digits (٣, ３) are part of the prefix or suffix, as any letter is.
func split(v string) (prefix, digits, suffix string, ok bool) {
	end := len(v)
	for end > 0 && !isDigit(v[end-1]) {
		end--
	}
	if end == 0 {
		return "", "", "", false
	}
	start := end
	for start > 0 && isDigit(v[start-1]) {
		start--
	}
	return v[:start], v[start:end], v[end:], true
}

// increment adds one to a non-empty string of ASCII digits.
func increment(digits string) string {
	b := []byte(digits)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	// Every digit was a nine and is now a zero: the carry adds a digit.
	return "1" + string(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func noDigits(v string) error {
	return fmt.Errorf("version %q %w", v, ErrNoDigits)
}
