package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// CommitSink is a Sink that also wants the commit as soon as it is known.
type CommitSink interface {
	SetCommit(hash, message string)
}

// Result is how a run ended.
type Result struct {
	CommitHash    string
	CommitMessage string
	// ExitCode of the program; -1 when it never ran.
	ExitCode int
	// Err says what went wrong before or around the program (a failed
	// clone, a path outside the checkout, a missing binary). Nil with a
	// non-zero ExitCode means the program itself failed.
	Err error
}

// Succeeded reports whether the task succeeded.
func (r Result) Succeeded() bool { return r.Err == nil && r.ExitCode == 0 }

// taskRun is one run in progress.
type taskRun struct {
	in      *Inputs
	work    string   // the task's work directory
	private string   // credentials and generated files, mode 0700
	scratch []string // other directories of the run, removed when it ends
	out     *redactingSink

	binaries map[string]string // app binary overrides (tests); default from PATH
}

// Run runs the task described by in inside workDir, sending every output
// line (with secrets masked) to sink.
func Run(ctx context.Context, in *Inputs, workDir string, sink Sink) Result {
	t := &taskRun{in: in, work: workDir, out: &redactingSink{next: sink}}
	res := Result{ExitCode: -1}
	if err := t.prepare(); err != nil {
		res.Err = err
		return res
	}
	defer os.RemoveAll(t.private)
	defer func() {
		for _, dir := range t.scratch {
			_ = os.RemoveAll(dir)
		}
	}()

	checkout := filepath.Join(workDir, "repository")
	res.CommitHash, res.CommitMessage, res.Err = t.checkout(ctx, checkout)
	if res.Err != nil {
		return res
	}
	if c, ok := sink.(CommitSink); ok {
		c.SetCommit(res.CommitHash, res.CommitMessage)
	}
	if app := t.in.Spec.App; app == "terraform" || app == "tofu" {
		// Several steps, with a confirmation between plan and apply.
		res.ExitCode, res.Err = t.terraform(ctx, checkout, sink)
		return res
	}
	cmd, err := t.command(checkout)
	if err != nil {
		res.Err = err
		return res
	}
	cmd.program = true
	res.ExitCode, res.Err = run(ctx, cmd, t.out)
	return res
}

func (t *taskRun) prepare() error {
	if err := os.MkdirAll(t.work, 0o700); err != nil {
		return err
	}
	private, err := os.MkdirTemp(t.work, "private-")
	if err != nil {
		return err
	}
	t.private = private
	return nil
}

// baseEnv is the environment every program starts from: a clean one, not
// the runner's.
func (t *taskRun) baseEnv() []string {
	home := filepath.Join(t.work, "home")
	_ = os.MkdirAll(home, 0o700)
	env := []string{"PATH=" + pathOr(os.Getenv("PATH")), "HOME=" + home, "LANG=C.UTF-8"}
	for _, name := range passedThrough {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// passedThrough are the runner's own variables that programs get: where
// temporary files go, and how to reach the network (a company's proxy and
// private CA, set on the runner image or the manager, are needed by git,
// terraform's providers and ansible alike).
var passedThrough = []string{
	"TMPDIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO",
}

func pathOr(p string) string {
	if p == "" {
		return "/usr/local/bin:/usr/bin:/bin"
	}
	return p
}

// programEnv adds the Environment's variables, the secret ones, and the
// task's type and versions, for the program itself.
func (t *taskRun) programEnv() ([]string, error) {
	s := t.in.Spec
	vars := map[string]string{}
	for k, v := range s.Env {
		vars[k] = v
	}
	// The Environment's last: it wins, as for variables (a task's own
	// Secret may not carry env. keys at all; the TaskReconciler refuses them).
	for _, name := range []string{s.TaskSecret, s.EnvironmentSecret} {
		secret, err := t.in.secretValues(name, "env.")
		if err != nil {
			return nil, err
		}
		for k, v := range secret {
			vars[k] = v
			t.redact(v)
		}
	}
	vars["SEMAPHORE_TASK_TYPE"] = s.TaskType
	vars["SEMAPHORE_TASK_INCOMING_VERSION"] = s.IncomingVersion
	vars["SEMAPHORE_TASK_TARGET_VERSION"] = s.TargetVersion
	env := t.baseEnv()
	for _, k := range sortedKeys(vars) {
		env = append(env, k+"="+vars[k])
	}
	return env, nil
}

// extraVars merges the task's and Environment's variables (already merged
// by the engine) with the secret ones; secrets win, and among them the
// Environment's win over the task's answers, as the Environment's plain
// variables win over the task's (runspec's mergeVars): the managers wrote
// it, a task_runner answered the task.
func (t *taskRun) extraVars() (map[string]any, error) {
	vars, _, err := t.vars()
	return vars, err
}

// vars is extraVars, with the set of names whose final value the task set
// (runspec's TaskVarNames, or the task's secret answers).
func (t *taskRun) vars() (map[string]any, map[string]bool, error) {
	vars := map[string]any{}
	if len(t.in.Spec.ExtraVars) > 0 {
		if err := json.Unmarshal(t.in.Spec.ExtraVars, &vars); err != nil {
			return nil, nil, fmt.Errorf("Environment and extra variables must be valid JSON: %v", err)
		}
	}
	fromTask := keysOf(t.in.Spec.TaskVarNames)
	fromEnvironment, fromTaskSecret, err := t.secretVarsBySource()
	if err != nil {
		return nil, nil, err
	}
	for k, v := range fromTaskSecret {
		vars[k], fromTask[k] = v, true
	}
	for k, v := range fromEnvironment {
		vars[k], fromTask[k] = v, false
	}
	return vars, fromTask, nil
}

// secretVarsBySource reads the "var." keys of the Environment's Secret and
// of the task's own (its secret survey answers), and masks every value in
// the output.
func (t *taskRun) secretVarsBySource() (environment, task map[string]string, err error) {
	if environment, err = t.in.secretValues(t.in.Spec.EnvironmentSecret, "var."); err != nil {
		return nil, nil, err
	}
	if task, err = t.in.secretValues(t.in.Spec.TaskSecret, "var."); err != nil {
		return nil, nil, err
	}
	for _, values := range []map[string]string{environment, task} {
		for _, v := range values {
			t.redact(v)
		}
	}
	return environment, task, nil
}

// plainAndSecretVars divides the final variables into those whose value
// came from a Secret and the rest. Only the rest may be written into a
// program's argv: /proc/<pid>/cmdline is readable by every user of the
// machine (`ps` shows it), so secret values go through the environment or
// a 0600 file in the private directory instead.
func (t *taskRun) plainAndSecretVars() (plain map[string]any, secret map[string]string, err error) {
	vars, err := t.extraVars()
	if err != nil {
		return nil, nil, err
	}
	fromEnvironment, fromTask, err := t.secretVarsBySource()
	if err != nil {
		return nil, nil, err
	}
	secret = map[string]string{}
	for _, values := range []map[string]string{fromTask, fromEnvironment} {
		for k, v := range values {
			secret[k] = v // the Environment's last: it wins, as in vars
			delete(vars, k)
		}
	}
	return vars, secret, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// redact masks these values wherever they appear in the output.
func (t *taskRun) redact(values ...string) { t.out.add(values...) }

// redactingSink masks secret values in every line before passing it on.
type redactingSink struct {
	next    Sink
	mu      sync.Mutex
	secrets []string
	pieces  fragmentIndex // pieces of the long ones (fragments.go)
	// carry holds, per stream (stdout, stderr), the rests of a secret the
	// stream's last line ended inside: a wrapped secret continues on the
	// next line of its own stream, whatever the other printed between.
	carry [2][]string
}

// mask is what a secret, or a piece of one, becomes in the output.
const mask = "********"

func (r *redactingSink) add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		for _, line := range strings.Split(strings.TrimSpace(v), "\n") {
			// Short values would mask ordinary words; a 3-character
			// password is not a secret worth mangling the log for.
			if line = strings.TrimSpace(line); len(line) >= 4 {
				for _, form := range escapedForms(line) {
					if !slices.Contains(r.secrets, form) {
						r.secrets = append(r.secrets, form)
						r.pieces.addLong(form)
					}
				}
			}
		}
	}
	// Longest first: a secret that is part of another must not be masked
	// first and leave the rest of the longer one showing.
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// escapedForms is a secret as programs print it: as it is, and escaped the
// way JSON writes it, which is how ansible shows every value (a debug of
// a variable, a module's result, a failure's message): a password with a
// quote or a backslash never appears as it is in ansible's output. Also
// escaped twice (a module's JSON result quoted in a failure message, the
// to_json filter's text shown by debug), and both with non-ASCII letters as
// \u escapes (Python's json.dumps by default).
func escapedForms(s string) []string {
	once, ascii := jsonEscaped(s), asciiEscaped(jsonEscaped(s))
	forms := []string{s, once, jsonEscaped(once), ascii, jsonEscaped(ascii)}
	out := forms[:1]
	for _, f := range forms[1:] {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// jsonEscaped is s inside a JSON string, without the quotes and without
// Go's escaping of <, > and & (which Python's JSON does not do).
func jsonEscaped(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// asciiEscaped writes every non-ASCII character of s as JSON's \uXXXX
// (UTF-16, as Python does with ensure_ascii).
func asciiEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func (r *redactingSink) Line(at time.Time, text string) {
	r.next.Line(at, r.mask(text, outStream))
}

func (r *redactingSink) StderrLine(at time.Time, text string) {
	r.next.StderrLine(at, r.mask(text, errStream))
}

// The streams, as indexes of redactingSink.carry.
const (
	outStream = iota
	errStream
)

// mask replaces every known secret value in text, then every piece of a
// long one (a secret ansible wrapped over several lines).
func (r *redactingSink) mask(text string, stream int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, mask)
		}
	}
	runs, next := r.pieces.find(text, r.carry[stream])
	r.carry[stream] = next
	if len(runs) > 0 {
		text = maskSpans(text, runs)
	}
	return text
}

// collector keeps lines in memory (short git answers, tests).
type collector struct {
	mu     sync.Mutex
	text   []string
	stderr []bool // per line: from the program's stderr
}

func (c *collector) Line(_ time.Time, s string)       { c.add(s, false) }
func (c *collector) StderrLine(_ time.Time, s string) { c.add(s, true) }

func (c *collector) add(s string, stderr bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = append(c.text, s)
	c.stderr = append(c.stderr, stderr)
}

// streams splits the lines by stream, each in the order it was read.
func (c *collector) streams() (stdout, stderr []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.text {
		if c.stderr[i] {
			stderr = append(stderr, s)
		} else {
			stdout = append(stdout, s)
		}
	}
	return stdout, stderr
}

func (c *collector) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.text...)
}
