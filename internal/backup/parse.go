package backup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cron"
)

// MaxSize is the largest file Parse reads. A project's definitions are a
// few kilobytes; five megabytes leave room for large static inventories
// while bounding what one request can make the server hold.
const MaxSize = 5 << 20

// maxProblems bounds the problems one error lists: enough to fix a file in
// a few rounds, short enough to read in an error banner.
const maxProblems = 10

// ParseError says everything Parse found wrong with a file, up to
// maxProblems of it.
type ParseError struct {
	Problems []string
	// More counts the problems found beyond those listed.
	More int
}

func (e *ParseError) Error() string {
	msg := "invalid backup: " + strings.Join(e.Problems, "; ")
	if e.More > 0 {
		msg += fmt.Sprintf(" (and %d more problems)", e.More)
	}
	return msg
}

// topKeys are the file's top-level keys, in the order they are listed.
var topKeys = []string{
	"meta", "templates", "repositories", "keys", "views", "inventories",
	"environments", "integrations", "integration_aliases", "schedules",
}

// Parse reads and checks a backup file. It refuses anything a restore
// could not turn into exactly the objects the file describes: a file over
// MaxSize, JSON that is not a backup's shape, keys or fields it does not
// know (rather than drop them silently), missing names, two objects of a
// kind with the same name, references to names the file does not have,
// values outside an enum, bad cron expressions, and what the CRDs' own
// rules would refuse. A file Parse accepts restores without a validation
// error, so a restore never stops half way for the file's sake.
//
// The error is a *ParseError listing up to ten problems, each prefixed
// with where it is: `templates[2] "Deploy": inventory "prod" is not in the
// backup`.
func Parse(data []byte) (*Backup, error) {
	if len(data) > MaxSize {
		return nil, &ParseError{Problems: []string{fmt.Sprintf(
			"the file is %.1f MiB; a backup may be at most %d MiB", float64(len(data))/(1<<20), MaxSize>>20)}}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &ParseError{Problems: []string{documentError(data, err)}}
	}
	if top == nil {
		return nil, &ParseError{Problems: []string{"a backup is a JSON object, not null"}}
	}

	p := &parser{}
	var unknown []string
	for key := range top {
		if !slices.Contains(topKeys, key) {
			unknown = append(unknown, key)
		}
	}
	slices.Sort(unknown)
	for _, key := range unknown {
		p.addf("unknown key %q: a backup has the keys %s", key, strings.Join(topKeys, ", "))
	}

	b := &Backup{}
	if raw, ok := top["meta"]; !ok || isNull(raw) {
		p.addf("meta is missing: it holds the project's name")
	} else if err := decodeStrict(raw, &b.Meta); err != nil {
		p.addf("meta: %s", describe(err))
	} else {
		p.meta(&b.Meta)
	}

	keys := decodeList[Key](p, top, "keys", "name")
	repos := decodeList[Repository](p, top, "repositories", "name")
	invs := decodeList[Inventory](p, top, "inventories", "name")
	envs := decodeList[Environment](p, top, "environments", "name")
	views := decodeList[View](p, top, "views", "title")
	tpls := decodeList[Template](p, top, "templates", "name")
	scheds := decodeList[Schedule](p, top, "schedules", "name")
	ints := decodeList[Integration](p, top, "integrations", "name")
	b.IntegrationAliases = decodeStrings(p, top, "integration_aliases")

	// Names are collected from every element, decoded or not, so that one
	// malformed inventory does not also make every template naming it
	// "not in the backup".
	p.keys = nameSet(p, "keys", "name", keys)
	p.repos = nameSet(p, "repositories", "name", repos)
	p.invs = nameSet(p, "inventories", "name", invs)
	p.envs = nameSet(p, "environments", "name", envs)
	p.views = nameSet(p, "views", "title", views)
	p.tpls = nameSet(p, "templates", "name", tpls)
	p.ints = nameSet(p, "integrations", "name", ints)

	b.Keys = check(p, keys, p.key)
	b.Repositories = check(p, repos, p.repository)
	b.Inventories = check(p, invs, p.inventory)
	b.Environments = check(p, envs, p.environment)
	b.Views = check(p, views, p.view)
	b.Schedules = check(p, scheds, p.schedule)
	p.scheduled = map[string][]string{}
	for _, s := range b.Schedules {
		p.scheduled[s.Template] = append(p.scheduled[s.Template], s.CronFormat)
	}
	b.Templates = check(p, tpls, p.template)
	b.Integrations = check(p, ints, p.integration)
	p.buildCycles(b.Templates)

	if len(p.problems) > 0 {
		return nil, &ParseError{Problems: p.problems, More: p.more}
	}
	return b, nil
}

type parser struct {
	problems []string
	more     int
	// where prefixes the problems of the element being checked.
	where string

	keys, repos, invs, envs, views, tpls, ints map[string]bool
	// scheduled lists the cron formats of each template's schedules.
	scheduled map[string][]string
}

func (p *parser) addf(format string, args ...any) {
	if len(p.problems) >= maxProblems {
		p.more++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if p.where != "" {
		msg = p.where + ": " + msg
	}
	p.problems = append(p.problems, msg)
}

// item is one element of a kind's array, as far as it could be read.
type item[T any] struct {
	v     T
	where string
	name  string
	ok    bool
}

// decodeList reads top[key], an array of objects, element by element, so
// that each element's problem is reported with its index and name.
func decodeList[T any](p *parser, top map[string]json.RawMessage, key, nameField string) []item[T] {
	raw, present := top[key]
	if !present || isNull(raw) {
		return nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		p.addf("%s: must be an array, not %s", key, jsonKind(raw))
		return nil
	}
	items := make([]item[T], len(elems))
	for i, elem := range elems {
		it := &items[i]
		it.name = looseName(elem, nameField)
		it.where = fmt.Sprintf("%s[%d]", key, i)
		if it.name != "" {
			it.where += fmt.Sprintf(" %q", it.name)
		}
		if err := decodeStrict(elem, &it.v); err != nil {
			p.where = it.where
			p.addf("%s", describe(err))
			p.where = ""
			continue
		}
		it.ok = true
	}
	return items
}

// decodeStrings reads top[key], an array of strings.
func decodeStrings(p *parser, top map[string]json.RawMessage, key string) []string {
	out := []string{}
	raw, present := top[key]
	if !present || isNull(raw) {
		return out
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		p.addf("%s: must be an array of strings", key)
	}
	return out
}

// nameSet collects the names of a kind and reports blank and repeated ones.
func nameSet[T any](p *parser, key, nameField string, items []item[T]) map[string]bool {
	set := map[string]bool{}
	first := map[string]int{}
	for i, it := range items {
		p.where = it.where
		switch {
		case strings.TrimSpace(it.name) == "":
			if it.ok {
				p.addf("%s is required", nameField)
			}
		case set[it.name]:
			p.addf("the name is already used by %s[%d]; names must be unique within %s", key, first[it.name], key)
		default:
			set[it.name] = true
			first[it.name] = i
		}
	}
	p.where = ""
	return set
}

// check runs a kind's checks on every decoded element and returns the
// elements.
func check[T any](p *parser, items []item[T], fn func(*T)) []T {
	out := make([]T, 0, len(items))
	for i := range items {
		if !items[i].ok {
			continue
		}
		p.where = items[i].where
		fn(&items[i].v)
		out = append(out, items[i].v)
	}
	p.where = ""
	return out
}

func (p *parser) meta(m *Meta) {
	p.where = "meta"
	defer func() { p.where = "" }()
	if strings.TrimSpace(m.Name) == "" {
		p.addf("name is required")
	}
	if m.MaxParallelTasks < 0 {
		p.addf("max_parallel_tasks must be 0 or greater")
	}
}

var keyTypes = []string{string(bastionv1.KeyTypeNone), string(bastionv1.KeyTypeSSH), string(bastionv1.KeyTypeLoginPassword)}

func (p *parser) key(k *Key) {
	p.enum("type", k.Type, keyTypes, true)
}

func (p *parser) repository(r *Repository) {
	switch {
	case r.GitURL == "":
		p.addf("git_url is required")
	case strings.Contains(r.GitURL, "://") && !schemeOK.MatchString(r.GitURL):
		p.addf("git_url %q: Incorrect URL: the scheme must be ssh, https, file or git (or a local path starting with /)", r.GitURL)
	}
	if !strings.HasPrefix(r.GitURL, "/") && r.GitBranch == "" {
		p.addf("git_branch is required unless the URL is a local path")
	}
	p.requiredRef("ssh_key", r.SSHKey, p.keys)
}

var schemeOK = regexp.MustCompile(`^(ssh|https|file|git)://`)

var inventoryTypes = []string{
	string(bastionv1.InventoryStatic), string(bastionv1.InventoryStaticYAML),
	string(bastionv1.InventoryFile), string(bastionv1.InventoryTerraformWorkspace),
}

func (p *parser) inventory(i *Inventory) {
	p.enum("type", i.Type, inventoryTypes, true)
	if i.Type == string(bastionv1.InventoryFile) {
		path := i.Inventory
		switch {
		case path == "":
			p.addf("inventory (the path of the inventory file) is required for type file")
		case strings.HasPrefix(path, "/") || path == ".." || strings.HasPrefix(path, "../") ||
			strings.Contains(path, "/../") || strings.HasSuffix(path, "/.."):
			p.addf("inventory %q: the inventory file must be a relative path inside the repository", path)
		}
	}
	p.requiredRef("ssh_key", i.SSHKey, p.keys)
	p.ref("become_key", i.BecomeKey, p.keys)
	p.ref("repository", i.Repository, p.repos)
}

// secretName is what a variable's name must be to become a Secret data
// key ("var.NAME").
var secretName = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

func (p *parser) environment(e *Environment) {
	if _, err := jsonObject(e.JSON); err != nil {
		p.addf("json: Environment and extra variables must be valid JSON: %v", err)
	}
	if env, err := jsonObject(e.Env); err != nil {
		p.addf("env: Environment and extra variables must be valid JSON: %v", err)
	} else {
		names := make([]string, 0, len(env))
		for name := range env {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if !isJSONString(env[name]) {
				p.addf("env: the value of %q must be a string, not %s", name, jsonKind(env[name]))
			}
		}
	}
	seen := map[EnvironmentSecret]bool{}
	for j, s := range e.Secrets {
		switch {
		case s.Type != secretVar && s.Type != secretEnv:
			p.addf("secrets[%d]: type %q is not one of var, env", j, s.Type)
		case !secretName.MatchString(s.Name):
			p.addf("secrets[%d]: name %q must consist of letters, digits, '-', '_' or '.'", j, s.Name)
		case seen[s]:
			p.addf("secrets[%d]: %s %q is listed twice", j, s.Type, s.Name)
		}
		seen[s] = true
	}
}

func (p *parser) view(v *View) {
	if v.Position < 0 {
		p.addf("position must be 0 or greater")
	}
}

var (
	templateTypes = []string{string(bastionv1.TemplateTask), string(bastionv1.TemplateBuild), string(bastionv1.TemplateDeploy)}
	templateApps  = []string{"", string(bastionv1.AppAnsible), string(bastionv1.AppTerraform), string(bastionv1.AppTofu), string(bastionv1.AppBash)}
	surveyTypes   = []string{"", "int", "enum", "secret"}
)

func (p *parser) template(t *Template) {
	p.enum("type", t.Type, templateTypes, false)
	p.enum("app", t.App, templateApps, false)
	if t.Playbook == "" {
		p.addf("playbook is required")
	}
	if t.Arguments != "" {
		var args []string
		if err := json.Unmarshal([]byte(t.Arguments), &args); err != nil {
			p.addf("arguments must be a JSON array of strings as text, such as \"[\\\"-v\\\"]\"")
		}
	}
	if t.KeepLast != nil && *t.KeepLast < 1 {
		p.addf("keep_last must be 1 or greater")
	}
	p.requiredRef("repository", t.Repository, p.repos)
	p.requiredRef("environment", t.Environment, p.envs)
	p.ref("inventory", t.Inventory, p.invs)
	p.ref("view", t.View, p.views)
	p.ref("build_template", t.BuildTemplate, p.tpls)
	switch t.Type {
	case string(bastionv1.TemplateBuild):
		if t.StartVersion == "" {
			p.addf("start_version is required for a build template")
		}
	case string(bastionv1.TemplateDeploy):
		if t.BuildTemplate == "" {
			p.addf("build_template is required for a deploy template")
		}
	}
	if t.BuildTemplate != "" && t.BuildTemplate == t.Name {
		p.addf("build_template names the template itself")
	}
	for j, v := range t.Vaults {
		if v.Type != "" && v.Type != "password" {
			p.addf("vaults[%d]: type %q is not supported; only password vaults are", j, v.Type)
		}
		if v.VaultKey == "" {
			p.addf("vaults[%d]: vault_key is required", j)
		} else if !p.keys[v.VaultKey] {
			p.addf("vaults[%d]: vault_key %q is not in the backup", j, v.VaultKey)
		}
	}
	seen := map[string]bool{}
	for j, v := range t.SurveyVars {
		name := strings.TrimSpace(v.Name)
		switch {
		case name == "":
			p.addf("survey_vars[%d]: name is required", j)
		case seen[name]:
			p.addf("survey_vars[%d]: the name %q is used twice", j, name)
		}
		seen[name] = true
		if v.Title == "" {
			p.addf("survey_vars[%d] %q: title is required", j, name)
		}
		if !slices.Contains(surveyTypes, v.Type) {
			p.addf("survey_vars[%d] %q: type %q is not one of \"\", int, enum, secret", j, name, v.Type)
		}
	}
	if t.Cron != "" {
		if err := cron.Validate(t.Cron); err != nil {
			p.addf("cron %q: %v", t.Cron, err)
		} else if crons := p.scheduled[t.Name]; len(crons) > 0 && !slices.Contains(crons, t.Cron) {
			p.addf("cron %q is not the cron_format of any of this template's schedules in \"schedules\"; change or remove one of them", t.Cron)
		}
	}
}

func (p *parser) schedule(s *Schedule) {
	p.requiredRef("template", s.Template, p.tpls)
	if s.CronFormat == "" {
		p.addf("cron_format is required")
	} else if err := cron.Validate(s.CronFormat); err != nil {
		p.addf("cron_format %q: %v", s.CronFormat, err)
	}
	p.ref("repository", s.Repository, p.repos)
}

var (
	authMethods = []string{string(bastionv1.AuthNone), string(bastionv1.AuthGitHub), string(bastionv1.AuthToken), string(bastionv1.AuthHMAC)}
	sources     = []string{"body", "header"}
	methods     = []string{"equals", "unequals", "contains"}
	dataTypes   = []string{"", "json", "string"}
)

func (p *parser) integration(i *Integration) {
	p.ref("template", i.Template, p.tpls)
	p.enum("auth_method", i.AuthMethod, authMethods, false)
	if (i.AuthMethod == string(bastionv1.AuthToken) || i.AuthMethod == string(bastionv1.AuthHMAC)) && i.AuthHeader == "" {
		p.addf("auth_header is required for %s authentication", i.AuthMethod)
	}
	if i.AuthMethod != "" && i.AuthSecret == "" {
		p.addf("auth_secret (a login_password key) is required when an auth method is set")
	}
	p.ref("auth_secret", i.AuthSecret, p.keys)
	if len(i.TaskParams) > 0 && !isNull(i.TaskParams) {
		if _, err := jsonObject(string(i.TaskParams)); err != nil {
			p.addf("task_params %v", err)
		}
	}
	if isNull(i.TaskParams) {
		i.TaskParams = nil
	}
	for j, m := range i.Matchers {
		at := fmt.Sprintf("matchers[%d]", j)
		p.required(at, "name", m.Name)
		p.enumAt(at, "match_type", m.MatchType, sources)
		p.enumAt(at, "method", m.Method, methods)
		p.dataType(at, m.MatchType, m.BodyDataType)
		p.required(at, "key", m.Key)
		p.required(at, "value", m.Value)
	}
	for j, v := range i.ExtractValues {
		at := fmt.Sprintf("extract_values[%d]", j)
		p.required(at, "name", v.Name)
		p.enumAt(at, "value_source", v.ValueSource, sources)
		p.dataType(at, v.ValueSource, v.BodyDataType)
		p.required(at, "key", v.Key)
		p.required(at, "variable", v.Variable)
	}
	if i.Aliases == nil {
		i.Aliases = []string{}
	}
}

func (p *parser) dataType(at, source, dataType string) {
	if !slices.Contains(dataTypes, dataType) {
		p.addf("%s: body_data_type %q is not one of json, string", at, dataType)
	} else if source == "body" && dataType == "" {
		p.addf("%s: body_data_type (json or string) is required when the source is body", at)
	}
}

func (p *parser) required(at, field, value string) {
	if value == "" {
		p.addf("%s: %s is required", at, field)
	}
}

func (p *parser) enumAt(at, field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		p.addf("%s: %s %q is not one of %s", at, field, value, strings.Join(showEnum(allowed), ", "))
	}
}

// enum checks a field against its allowed values; required says that ""
// is not one of them.
func (p *parser) enum(field, value string, allowed []string, required bool) {
	switch {
	case value == "" && required:
		p.addf("%s is required (one of %s)", field, strings.Join(allowed, ", "))
	case !slices.Contains(allowed, value):
		p.addf("%s %q is not one of %s", field, value, strings.Join(showEnum(allowed), ", "))
	}
}

// showEnum lists allowed values for a message, the empty one as "".
func showEnum(allowed []string) []string {
	out := slices.Clone(allowed)
	for i, s := range out {
		if s == "" {
			out[i] = `""`
		}
	}
	return out
}

func (p *parser) requiredRef(field, name string, set map[string]bool) {
	if name == "" {
		p.addf("%s is required", field)
		return
	}
	p.ref(field, name, set)
}

func (p *parser) ref(field, name string, set map[string]bool) {
	if name != "" && !set[name] {
		p.addf("%s %q is not in the backup", field, name)
	}
}

// buildCycles reports build_template chains that come back to where they
// started: a restore creates a build template before the templates that
// name it, which a cycle makes impossible. Each cycle is reported once.
func (p *parser) buildCycles(templates []Template) {
	next := map[string]string{}
	for _, t := range templates {
		next[t.Name] = t.BuildTemplate
	}
	reported := map[string]bool{}
	for i, t := range templates {
		if reported[t.Name] || t.BuildTemplate == t.Name { // naming itself is reported already
			continue
		}
		chain := []string{t.Name}
		for n := next[t.Name]; n != "" && len(chain) <= len(templates); n = next[n] {
			chain = append(chain, n)
			if n == t.Name {
				for _, m := range chain {
					reported[m] = true
				}
				p.addf("templates[%d] %q: its build_template chain comes back to it (%s)", i, t.Name, strings.Join(quoteAll(chain), " → "))
				break
			}
		}
	}
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// decodeStrict decodes one JSON value, refusing fields v does not have.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// describe turns a decoding error into words about the file, not Go.
func describe(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		got := strings.Fields(typeErr.Value)[0] // "number 1.5" → "number"
		if typeErr.Field == "" {
			return fmt.Sprintf("must be %s, not %s", jsonWord(typeErr.Type), article(got))
		}
		if got == "number" && isInteger(typeErr.Type) {
			return fmt.Sprintf("%s must be %s, not %s", typeErr.Field, jsonWord(typeErr.Type), typeErr.Value)
		}
		return fmt.Sprintf("%s must be %s, not %s", typeErr.Field, jsonWord(typeErr.Type), article(got))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + field
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// documentError describes why the file as a whole is not a JSON object.
func documentError(data []byte, err error) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "the file is empty"
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		line, col := position(data, syntax.Offset)
		return fmt.Sprintf("not valid JSON: %s (line %d, column %d)", syntax.Error(), line, col)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("a backup is a JSON object, not %s", article(typeErr.Value))
	}
	return "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// position is the line and column of the byte a SyntaxError's Offset
// (the count of bytes read, the bad one included) stopped at.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset-1, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func jsonWord(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return "JSON"
	case isInteger(t):
		return "an integer"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonWord(t.Elem())
	}
	return t.String()
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func article(word string) string {
	switch word {
	case "array", "object":
		return "an " + word
	case "string", "number":
		return "a " + word
	case "bool":
		return "a boolean"
	}
	return word
}

// jsonKind names the JSON type of a value, for messages.
func jsonKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func isJSONString(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && s[0] == '"'
}

var errNotObject = errors.New("must be a JSON object")

// jsonObject parses text that must hold a JSON object; "" stands for {}.
func jsonObject(text string) (map[string]json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]json.RawMessage{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("%w, not %s", errNotObject, article(typeErr.Value))
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if obj == nil {
		return nil, fmt.Errorf("%w, not null", errNotObject)
	}
	return obj, nil
}

// looseName is an element's name field if it is a string, for messages
// about elements that do not decode.
func looseName(elem json.RawMessage, field string) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(elem, &fields) != nil {
		return ""
	}
	var name string
	if json.Unmarshal(fields[field], &name) != nil {
		return ""
	}
	return name
}
