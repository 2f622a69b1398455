package backup

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse_refusesCleanlyOrRoundTrips: any file is either refused with a
// *ParseError (at most ten problems, each one line of valid UTF-8) or
// accepted, and an accepted backup written out again parses to the same
// backup. Seeds: the examples of the parse tests, deep nesting, huge
// numbers, NUL and invalid UTF-8, names with ../ and shell text.
func FuzzParse_refusesCleanlyOrRoundTrips(f *testing.F) {
	for _, seed := range []string{
		`{"meta":{"name":"p"}}`, `{}`, `null`, `[]`, `{"meta":{"name":"p"},"meta":{"name":"q"}}`,
		`{"meta":{"name":"p","max_parallel_tasks":1e999}}`, `{"meta":{"name":"p","max_parallel_tasks":99999999999999999999}}`,
		`{"meta":{"name":"p"},"keys":[{"name":"../../etc","type":"none"}]}`,
		`{"meta":{"name":"p"},"keys":[{"name":"k","type":"none"}],"repositories":[{"name":"r","git_url":"ext::sh -c touch% /tmp/x","git_branch":"--upload-pack=x","ssh_key":"k"}]}`,
		`{"meta":{"name":"p"},"templates":[{"name":"t","playbook":"../../etc/passwd","repository":"r","environment":"e","type":"build","start_version":"x"}]}`,
		`{"meta":{"name":"p"},"schedules":[{"cron_format":"CRON_TZ=UTC","template":"t"}]}`,
		`{"meta":{"name":"\u0000\ufffd"},"views":[{"title":"v","position":-1}]}`, "{\"meta\":{\"name\":\"\xff\"}}",
		`{"meta":{"name":"p"},"environments":[{"name":"e","json":"{\"a\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}","env":"{\"A=B\":1}"}]}`,
		`{"meta":{"name":"p"},"inventories":[{"name":"i","type":"file","inventory":"/etc/hosts","ssh_key":"k"}]}`,
		`{"meta":{"name":"p"},"integrations":[{"name":"i","template":"t","auth_method":"github","matchers":[{"name":"m","match_type":"body","method":"regex","key":"a","value":"b"}]}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			var perr *ParseError
			if !errors.As(err, &perr) || b != nil || len(perr.Problems) == 0 || len(perr.Problems) > maxProblems {
				t.Fatalf("Parse(%q) = %v, %v: want a *ParseError of 1 to %d problems", data, b, err, maxProblems)
			}
			for _, p := range perr.Problems {
				if !utf8.ValidString(p) || strings.ContainsAny(p, "\n\r") || strings.Contains(p, "backup.") {
					t.Fatalf("Parse(%q) problem %q: not one clean line", data, p)
				}
			}
			return
		}
		again, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("Parse(%q) accepted what cannot be written out: %v", data, err)
		}
		b2, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its own output %s is refused: %v", data, again, err)
		}
		if !reflect.DeepEqual(b, b2) {
			third, _ := json.Marshal(b2)
			t.Fatalf("a backup changed through a round trip:\n%s\n%s", again, third)
		}
	})
}
