package apiserver

import (
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Fuzz targets for the validators the handlers call after decode, the
// parts that need no cluster. Each asserts what the rule promises, not
// only that it returns.

// asBadRequest insists that a refusal is a user message (400), one line.
func asBadRequest(t *testing.T, input any, err error) string {
	t.Helper()
	var bad badRequest
	if !errors.As(err, &bad) {
		t.Fatalf("%q refused with %T %v, want a badRequest", input, err, err)
	}
	if bad == "" || strings.ContainsAny(string(bad), "\n\r") {
		t.Fatalf("%q refused with %q: empty or not one line", input, string(bad))
	}
	return string(bad)
}

// FuzzGitURL_acceptsOnlyWhatGitReadsAsARepositoryNeverAnOption checks the
// git URL classifier and the branch rule of a repository: whatever is
// accepted cannot be read by git as an option or a command transport
// (ext::, --upload-pack=…, ssh://-oProxyCommand=…), is stable when checked
// again, and a refusal never repeats the URL (it may hold a password).
func FuzzGitURL_acceptsOnlyWhatGitReadsAsARepositoryNeverAnOption(f *testing.F) {
	for _, seed := range []string{
		"https://example.com/r.git", "HTTPS://Example.com/r.git", "git@github.com:o/r.git", "/srv/repo",
		"file:///srv/repo", "ssh://git@host:2222/r.git", "git://host/r", "ext::sh -c touch% /tmp/pwned",
		"--upload-pack=touch /tmp/pwned", "-oProxyCommand=touch /tmp/x", "ssh://-oProxyCommand=touch%20x/r",
		"ssh://-oProxyCommand=x@host/r", "fd::17", "https://user:hunter2@host/r", "host:../../etc",
		"https://host/r\n--upload-pack=x", "https://ho\x00st/r", "\xff\xfe", "https://[::1/r", "ssh://h%2Fst/r",
		"file://", "https:///path", "a:b", "C:\\repo", "../../etc/passwd", "https://例え.jp/r", "ssh://host:-22/r",
	} {
		f.Add(seed, "main")
	}
	f.Add("https://h/r", "--foo")
	f.Add("https://h/r", "main; touch /tmp/x")
	f.Fuzz(func(t *testing.T, raw, branch string) {
		out, kind, err := gitURL(raw)
		if err != nil {
			msg := asBadRequest(t, raw, err)
			if len(strings.TrimSpace(raw)) >= 3 && strings.Contains(msg, strings.TrimSpace(raw)) {
				t.Fatalf("refusing %q repeats it: %q", raw, msg)
			}
		} else {
			checkAcceptedGitURL(t, raw, out, kind)
		}
		for _, kind := range []string{urlLocal, "https"} {
			b, err := gitBranch(branch, kind)
			if err != nil {
				if msg := asBadRequest(t, branch, err); len(branch) >= 3 && strings.Contains(msg, branch) {
					t.Fatalf("refusing the branch %q repeats it", branch)
				}
				continue
			}
			if strings.HasPrefix(b, "-") || hasSpaceOrControl(b) || b == "" && kind != urlLocal {
				t.Fatalf("branch %q accepted as %q for a %s URL", branch, b, kind)
			}
		}
	})
}

func checkAcceptedGitURL(t *testing.T, raw, out, kind string) {
	t.Helper()
	switch {
	case strings.HasPrefix(out, "-"):
		t.Fatalf("%q accepted as %q, which git reads as an option", raw, out)
	case hasSpaceOrControl(out) || !utf8.ValidString(out) && strings.ContainsRune(out, 0):
		t.Fatalf("%q accepted with a space or control character", raw)
	case transportURL.MatchString(out) && !schemeURL.MatchString(out):
		t.Fatalf("%q accepted in git's <transport>:: form", raw)
	case !strings.EqualFold(out, strings.TrimSpace(raw)):
		t.Fatalf("%q accepted as %q: more than the scheme's case changed", raw, out)
	}
	if again, kind2, err := gitURL(out); err != nil || again != out || kind2 != kind {
		t.Fatalf("%q accepted as %q %s, but checking that again gives %q %s %v", raw, out, kind, again, kind2, err)
	}
	switch kind {
	case urlLocal:
		if !strings.HasPrefix(out, "/") {
			t.Fatalf("%q is local but not absolute", out)
		}
	case "ssh", "https", "file", "git":
		if kind == urlSSH && !schemeURL.MatchString(out) {
			if !scpLike(out) {
				t.Fatalf("%q classified ssh without a scheme but not scp-like", out)
			}
			return
		}
		u, err := url.Parse(out)
		if err != nil || u.Scheme != kind {
			t.Fatalf("%q classified %s but parses as %v %v", out, kind, u, err)
		}
		if strings.HasPrefix(u.Hostname(), "-") || strings.HasPrefix(u.User.Username(), "-") {
			t.Fatalf("%q accepted with a host or user git would pass to ssh as an option", out)
		}
		if _, has := u.User.Password(); has {
			t.Fatalf("%q accepted with a password in it", out)
		}
	default:
		t.Fatalf("%q classified %q, not a type of spec §3", out, kind)
	}
}

// FuzzPaths_inventoryAndPlaybookStayInsideTheRepository: a path the API
// accepts, joined to any checkout, stays inside it.
func FuzzPaths_inventoryAndPlaybookStayInsideTheRepository(f *testing.F) {
	for _, seed := range []string{
		"inventory/hosts", "../etc/hosts", "/etc/hosts", "a/../../b", "a/./b", "..", ".", "a/..",
		"a\x00b", "..\\..\\x", "…/x", "a//b", "./../x", " ../x", "~/x", "$(touch x)", "a/..%2f..",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for what, check := range map[string]func(string) error{"inventory": inventoryPath, "playbook": playbookPath} {
			if err := check(p); err != nil {
				asBadRequest(t, p, err)
				continue
			}
			if !filepath.IsLocal(strings.TrimSpace(p)) {
				t.Fatalf("%s path %q accepted but leaves the directory it is joined to", what, p)
			}
		}
	})
}

// FuzzEnvironment_specKeepsValidJSONAndProcessSafeNames: environmentSpec
// accepts only JSON objects, keeps them as valid compact JSON, gives the
// process no variable name it could not hold, and reads its own output
// back the same.
func FuzzEnvironment_specKeepsValidJSONAndProcessSafeNames(f *testing.F) {
	f.Add("env", `{"a": 1}`, `{"PORT": 8080, "X": "$(touch /tmp/x)"}`)
	f.Add("e", `[1]`, `{"A=B": "x"}`)
	f.Add("e", `{"a": {"b": [1e400]}}`, `{"": 1}`)
	f.Add(" ", "null", "{\"\x00\": 1}")
	f.Add("e", `{"deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`, `{"N": null}`)
	f.Add("e", "{\"a\": \"\xff\"}", `{"T": true, "U": "\u2028"}`)
	f.Fuzz(func(t *testing.T, name, vars, env string) {
		spec, err := environmentSpec(environmentJSON{Name: name, JSON: vars, Env: env})
		if err != nil {
			asBadRequest(t, vars, err)
			return
		}
		if spec.DisplayName != strings.TrimSpace(name) || spec.DisplayName == "" {
			t.Fatalf("name %q kept as %q", name, spec.DisplayName)
		}
		if spec.ExtraVars != nil {
			// json.Valid, not Unmarshal: 1e400 is valid JSON that a float64
			// cannot hold, and it is kept as written.
			raw := spec.ExtraVars.Raw
			if !json.Valid(raw) || len(raw) == 0 || raw[0] != '{' {
				t.Fatalf("json %q kept as %q, not an object", vars, spec.ExtraVars.Raw)
			}
		}
		for k := range spec.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				t.Fatalf("env %q gives the process the name %q", env, k)
			}
		}
		// What the API shows of it is accepted again as the same spec.
		shown, _ := json.Marshal(spec.Env)
		if len(spec.Env) == 0 {
			shown = []byte("{}") // as toEnvironmentJSON shows none
		}
		again := environmentJSON{Name: spec.DisplayName, Env: string(shown)}
		if spec.ExtraVars != nil {
			again.JSON = string(spec.ExtraVars.Raw)
		}
		spec2, err := environmentSpec(again)
		if err != nil || len(spec2.Env) != len(spec.Env) || (spec.ExtraVars == nil) != (spec2.ExtraVars == nil) ||
			spec.ExtraVars != nil && string(spec.ExtraVars.Raw) != string(spec2.ExtraVars.Raw) {
			t.Fatalf("environment %q %q does not read back: %+v then %+v %v", vars, env, spec, spec2, err)
		}
		for k, v := range spec.Env {
			if spec2.Env[k] != v {
				t.Fatalf("env %s = %q read back as %q", k, v, spec2.Env[k])
			}
		}
	})
}

// FuzzTemplate_validateAnswersSpecMessagesAndKeepsArgumentsAsOneElementEach
// decodes a template body and validates it: a refusal is a 400; an
// accepted template's arguments are a JSON array of strings, each one argv
// element whatever it holds.
func FuzzTemplate_validateAnswersSpecMessagesAndKeepsArgumentsAsOneElementEach(f *testing.F) {
	f.Add(`{"name":"t","playbook":"site.yml","repository_id":1,"environment_id":1,"arguments":"[\"; touch /tmp/x\", \"$(id)\", \"a\\nb\"]"}`)
	f.Add(`{"name":"t","playbook":"../../etc/passwd","repository_id":1,"environment_id":1}`)
	f.Add(`{"name":"t","playbook":"/etc/passwd","repository_id":1,"environment_id":1}`)
	f.Add(`{"name":"b","playbook":"p","repository_id":1,"environment_id":1,"type":"build","start_version":"v"}`)
	f.Add(`{"name":"b","playbook":"p","repository_id":1,"environment_id":1,"type":"build","start_version":"1.99999999999999999999999"}`)
	f.Add(`{"name":"s","playbook":"p","repository_id":1,"environment_id":1,"survey_vars":[{"name":"a","title":"A"},{"name":" a","title":"B"}]}`)
	f.Add(`{"name":"a","playbook":"p","repository_id":1,"environment_id":1,"arguments":"{\"not\": \"an array\"}"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var req templateRequest
		if ok, _ := decodeBody(t, []byte(body), &req); !ok {
			return
		}
		if err := req.validate(); err != nil {
			asBadRequest(t, body, err)
			return
		}
		if strings.TrimSpace(req.Name) == "" || strings.TrimSpace(req.Playbook) == "" || req.RepositoryID == 0 || req.EnvironmentID == 0 {
			t.Fatalf("%s accepted without a required field", body)
		}
		if playbookPath(req.Playbook) != nil {
			t.Fatalf("%s accepted a playbook outside the repository", body)
		}
		args, err := parseArguments(deref(req.Arguments))
		if err != nil {
			t.Fatalf("%s accepted, then its arguments fail: %v", body, err)
		}
		var want []string
		if strings.TrimSpace(deref(req.Arguments)) != "" {
			_ = json.Unmarshal([]byte(*req.Arguments), &want)
		}
		if len(args) != len(want) {
			t.Fatalf("arguments %q became %d argv elements, want %d", deref(req.Arguments), len(args), len(want))
		}
		for i := range args {
			if args[i] != want[i] {
				t.Fatalf("argument %d %q became %q", i, want[i], args[i])
			}
		}
	})
}

// FuzzTask_startRulesRefuseOptionsAndCheckTheSurvey: a task's environment
// is a JSON object or nothing; its branch, limit and commit can never be
// an option; an int survey answer is digits and an enum one is listed.
func FuzzTask_startRulesRefuseOptionsAndCheckTheSurvey(f *testing.F) {
	f.Add(`{"n": "12"}`, "main", "web", "abcd", "12")
	f.Add(`{"n": 1e999}`, "--upload-pack=touch /tmp/x", "-x", "--foo", "$(id)")
	f.Add(`[]`, " -b", "all;reboot", "zzzz", "`id`")
	f.Add(`{"n": "1; touch /tmp/x", "e": "b|c"}`, "feature/x", "a\nb", "ABCDEF0123", "9\n")
	f.Fuzz(func(t *testing.T, environment, branch, limit, commit, answer string) {
		req := taskRequest{Environment: environment, GitBranch: branch, Limit: limit, CommitHash: commit}
		if err := checkRunOptions(&req); err != nil {
			asBadRequest(t, req, err)
		} else {
			for _, v := range []string{branch, limit} {
				if strings.HasPrefix(strings.TrimSpace(v), "-") {
					t.Fatalf("%q accepted; it would reach argv as an option", v)
				}
			}
			if commit != "" && !commitHash.MatchString(strings.TrimSpace(commit)) {
				t.Fatalf("commit %q accepted", commit)
			}
		}
		env, err := parseEnvironment(environment)
		if err != nil {
			if msg := asBadRequest(t, environment, err); msg != "Environment and extra variables must be valid JSON" {
				t.Fatalf("environment %q refused with %q, not spec §5's words", environment, msg)
			}
			return
		}
		if env != nil {
			var obj map[string]json.RawMessage
			if json.Unmarshal(env, &obj) != nil || obj == nil {
				t.Fatalf("environment %q kept as %q, not an object", environment, env)
			}
		}
		// Answer an int and an enum survey variable: the rules decide alone.
		vars, _ := json.Marshal(map[string]string{"n": answer})
		filled := strings.TrimSpace(answer) != ""
		for _, sv := range []bastionv1.SurveyVar{
			{Name: "n", Title: "Count", Type: "int"},
			{Name: "n", Title: "Colour", Type: "enum", Values: []bastionv1.SurveyVarValue{{Name: "red", Value: "red"}}},
			{Name: "n", Title: "Needed", Required: true},
		} {
			err := checkSurvey([]bastionv1.SurveyVar{sv}, vars)
			ok := !filled || sv.Type == "int" && digitsOnly.MatchString(answer) || sv.Type == "enum" && answer == "red" || sv.Type == ""
			if sv.Required {
				ok = filled
			}
			if (err == nil) != ok {
				t.Fatalf("%s answer %q: err %v, want ok=%v", sv.Type, answer, err, ok)
			}
			if err != nil {
				asBadRequest(t, answer, err)
			}
		}
	})
}

// FuzzIntegrationItems_matchersAndValuesNeedEveryFieldAndKnownKinds:
// accepted matchers and values name a known source, method and body type.
func FuzzIntegrationItems_matchersAndValuesNeedEveryFieldAndKnownKinds(f *testing.F) {
	f.Add("m", "body", "equals", "json", "ref", "refs/heads/main")
	f.Add("m", "header", "contains", "", "X-GitHub-Event", "push")
	f.Add(" ", "cookie", "regex", "xml", "a..b", "")
	f.Add("m", "body", "unequals", "string", "$(id)", "\x00")
	f.Fuzz(func(t *testing.T, name, source, method, dataType, key, value string) {
		m := matcherRequest{matcherJSON{Name: name, MatchType: source, Method: method, BodyDataType: dataType, Key: key, Value: value}}
		if got, err := m.item(); err != nil {
			asBadRequest(t, m, err)
		} else if got.Name == "" || got.Key == "" || got.Value == "" ||
			!oneOfStrings(got.Method, "equals", "unequals", "contains") || !validSource(got.MatchType, got.BodyDataType) {
			t.Fatalf("matcher %+v accepted as %+v", m, got)
		}
		v := valueRequest{valueJSON{Name: name, ValueSource: source, BodyDataType: dataType, Key: key, Variable: value}}
		if got, err := v.item(); err != nil {
			asBadRequest(t, v, err)
		} else if got.Name == "" || got.Key == "" || got.Variable == "" || !validSource(got.ValueSource, got.BodyDataType) {
			t.Fatalf("value %+v accepted as %+v", v, got)
		}
		if raw, err := taskParamsOf(json.RawMessage(value)); err != nil {
			asBadRequest(t, value, err)
		} else if raw != nil && !json.Valid(raw.Raw) {
			t.Fatalf("task_params %q kept as invalid JSON %q", value, raw.Raw)
		}
	})
}

func oneOfStrings(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

func validSource(source, dataType string) bool {
	return source == sourceHeader && dataType == "" || source == sourceBody && oneOfStrings(dataType, dataJSON, dataString)
}
