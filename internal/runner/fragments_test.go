package runner

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// wrapLikeAnsible cuts text into lines of width bytes, as Python's
// textwrap does with a word longer than a line (break_long_words): the
// word fills the rest of the current line and then whole lines.
func wrapLikeAnsible(text string, width int) []string {
	var lines []string
	for len(text) > width {
		lines = append(lines, text[:width])
		text = text[width:]
	}
	return append(lines, text)
}

// maskedLines sends lines through a sink that knows secrets.
func maskedLines(secrets []string, lines ...string) []string {
	out := &collector{}
	sink := &redactingSink{next: out}
	sink.add(secrets...)
	for _, l := range lines {
		sink.Line(time.Time{}, l)
	}
	return out.all()
}

// leakedPiece is the first piece of secret, n bytes or longer, that text
// holds, or "".
func leakedPiece(text, secret string, n int) string {
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+n]) {
			return secret[i : i+n]
		}
	}
	return ""
}

// The same secret wrapped on stderr while stdout prints between its
// pieces: each stream keeps its own carry, so stderr is masked exactly as
// if it had been alone (a shared carry would lose the continuation's short
// start after each stdout line), and stdout is left as it was.
func TestRedactingSink_continuesAWrappedSecretOnItsOwnStream(t *testing.T) {
	secret := benchSecrets(10)[7][:160]
	const between = "ok: [web] between the pieces"
	for start := 0; start < 79; start++ {
		text := "[WARNING]: " + strings.Repeat("w", start) + " could not locate file in lookup: " + secret + ".pem' in expected paths"
		wrapped := wrapLikeAnsible(text, 79)
		out := &collector{}
		sink := &redactingSink{next: out}
		sink.add(secret)
		for _, l := range wrapped {
			sink.StderrLine(time.Time{}, l)
			sink.Line(time.Time{}, between)
		}
		stdout, stderr := out.streams()
		if alone := maskedLines([]string{secret}, wrapped...); strings.Join(stderr, "\n") != strings.Join(alone, "\n") {
			t.Fatalf("start %d: stderr masked differently with stdout between:\n%s\nalone:\n%s", start, strings.Join(stderr, "\n"), strings.Join(alone, "\n"))
		}
		if len(stdout) != len(wrapped) || strings.Join(stdout, "") != strings.Repeat(between, len(wrapped)) {
			t.Fatalf("start %d: stdout changed: %q", start, stdout)
		}
	}
}

// A 160-character secret wrapped at 79 columns, starting at every column
// of the first line: no piece of it of edgeMin bytes or more is left,
// neither on a line nor across the lines joined back together.
func TestRedactingSink_masksEveryPieceOfALongSecretWrappedOverLines(t *testing.T) {
	secret := benchSecrets(10)[7][:160] // random base64, no repeats
	for start := 0; start < 79; start++ {
		text := "[WARNING]: " + strings.Repeat("w", start) + " could not locate file in lookup: " + secret + ".pem' in expected paths"
		out := maskedLines([]string{secret}, wrapLikeAnsible(text, 79)...)
		joined := strings.Join(out, "")
		if piece := leakedPiece(joined, secret, edgeMin); piece != "" {
			t.Fatalf("start %d: a piece %q of the secret is left:\n%s", start, piece, strings.Join(out, "\n"))
		}
		if !strings.Contains(joined, ".pem' in expected paths") || !strings.Contains(joined, "could not locate file") {
			t.Fatalf("start %d: ordinary text was masked:\n%s", start, strings.Join(out, "\n"))
		}
	}
}

// Pieces at odd offsets inside a line, in the middle of ordinary text.
func TestRedactingSink_masksAPieceOfALongSecretAnywhereInALine(t *testing.T) {
	secret := benchSecrets(10)[9][:100]
	for _, c := range []struct{ from, to int }{{0, 12}, {37, 50}, {1, 99}, {88, 100}, {50, 62}} {
		piece := secret[c.from:c.to]
		out := maskedLines([]string{secret}, "before "+piece+" after")
		if out[0] != "before ******** after" {
			t.Errorf("piece [%d:%d]: %q", c.from, c.to, out[0])
		}
	}
	// Two pieces on one line, each masked on its own.
	out := maskedLines([]string{secret}, "a "+secret[3:20]+" b "+secret[60:75]+" c")
	if out[0] != "a ******** b ******** c" {
		t.Errorf("two pieces: %q", out[0])
	}
}

// A secret with quotes, backslashes and a non-ASCII letter, in pieces of
// its JSON-escaped forms (ansible prints values JSON-escaped), cut in the
// middle of an escape; the output stays valid UTF-8.
func TestRedactingSink_masksPiecesOfTheEscapedFormsOfALongSecret(t *testing.T) {
	secret := `Qz"ab\cd-é-0123456789-"quoted"\path\to-é-9876543210-end`
	for _, form := range []string{jsonEscaped(secret), jsonEscaped(jsonEscaped(secret)), asciiEscaped(jsonEscaped(secret))} {
		for _, text := range wrapLikeAnsible(`"msg": "`+form+`"`, 23) {
			out := maskedLines([]string{secret}, text)[0]
			if !utf8.ValidString(out) {
				t.Errorf("invalid UTF-8: %q", out)
			}
			if piece := leakedPiece(out, form, fragmentLen); piece != "" {
				t.Errorf("%q left %q of the escaped form", out, piece)
			}
		}
		out := maskedLines([]string{secret}, wrapLikeAnsible(`"msg": "`+form+`"`, 23)...)
		if piece := leakedPiece(strings.Join(out, ""), form, edgeMin); piece != "" {
			t.Errorf("wrapped %q: %q is left: %q", form, piece, out)
		}
	}
}

// A line that continues a secret the line before ended inside is masked
// at its start however short the continuation; a line that does not
// continue it is left alone.
func TestRedactingSink_masksTheShortRestOfASecretOnTheNextLine(t *testing.T) {
	secret := benchSecrets(10)[5][:60]
	out := maskedLines([]string{secret}, "x "+secret[:57], secret[57:]+" tail", secret[57:]+" again")
	want := []string{"x ********", "******** tail", secret[57:] + " again"}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, out[i], want[i])
		}
	}
}

// Ordinary ansible output is not touched by ten long secrets, one of which
// is made of words, nor is a piece of a secret shorter than fragmentLen in
// the middle of a line (the documented residue).
func TestRedactingSink_leavesOrdinaryOutputAlone(t *testing.T) {
	secrets := append(benchSecrets(9), "correct horse battery staple, the admin password of prod")
	lines := []string{
		"PLAY [all] *********************************************************************",
		"TASK [Gathering Facts] *********************************************************",
		"ok: [web001] => (item=/etc/app/conf.d/0007.conf) changed=false elapsed=0.0013s msg=done",
		`fatal: [db1]: FAILED! => {"changed": false, "msg": "Failed to connect to the host via ssh: Permission denied (publickey,password)."}`,
		"localhost                  : ok=1    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0",
		"[WARNING]: An unhandled exception occurred while running the lookup plugin",
		"a correct answer, a horse, a battery",
		"in the middle " + secrets[0][20:31] + " of a line",
	}
	out := maskedLines(secrets, lines...)
	for i := range lines {
		if out[i] != lines[i] {
			t.Errorf("line %d changed:\n%q\n%q", i, lines[i], out[i])
		}
	}
}

// Python's textwrap also breaks at hyphens, so a secret with hyphens can be
// cut into short pieces, one of them alone on a line between two others.
func TestRedactingSink_masksShortPiecesWhereTheWrapBreaksAtHyphens(t *testing.T) {
	secret := "ab-" + benchSecrets(10)[3][:30] + "-cd-" + benchSecrets(10)[4][:80] + "-ef"
	// textwrap's chunks: "ab-", 30 bytes and "-", "cd-", 80 bytes and "-", "ef".
	lines := []string{
		"[WARNING]: could not locate file: x/" + secret[:3], // a 3-byte prefix: left (the residue)
		secret[3:34],  // a whole line of the secret
		secret[34:37], // "cd-", alone on its line
		secret[37:],   // the rest
		"-ef",         // a new line that starts like the secret's end, too short to be one
	}
	out := maskedLines([]string{secret}, lines...)
	want := []string{"[WARNING]: could not locate file: x/ab-", "********", "********", "********", "-ef"}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, out[i], want[i])
		}
	}
}

// A short line that continues a secret passes the continuation on: the
// secret's last piece on the line after is masked too.
func TestRedactingSink_followsASecretThroughAShortLine(t *testing.T) {
	secret := benchSecrets(10)[6][:40] + "-cd-ef"
	out := maskedLines([]string{secret}, "lookup: "+secret[:41], "cd-", "ef.pem' in expected paths")
	want := []string{"lookup: ********", "********", "********.pem' in expected paths"}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, out[i], want[i])
		}
	}
}
