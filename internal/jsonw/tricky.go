package jsonw

import "strings"

// Tricky are texts where a hand-written JSON string writer goes wrong:
// every kind of byte below 0x20, the HTML characters, quotes and
// backslashes, each kind of invalid UTF-8, the two separators JavaScript
// does not allow in a string, and the characters around them. The tests
// of every writer built on this package run them.
var Tricky = []string{
	"", "plain", `quotes " and \ backslash`, "<script>&amp;</script>", "tab\tnl\nret\rbs\bff\f",
	"\x00\x01\x1b[31mred\x1b[0m\x1f\x7f", "caf\u00e9 \u2192 \U0001F600", "\u2027\u2028\u2029\u202a",
	"\xff", "\xc3", "\xe2\x80", "a\xed\xa0\x80b" /* a surrogate */, "\xf4\x90\x80\x80" /* past U+10FFFF */, "\xc0\xaf",
	strings.Repeat("ok ", 1000) + "\x00",
}
