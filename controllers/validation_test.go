package controllers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// validationNamespace holds the objects of the validation tests. It is a
// plain Namespace, not a Project's, so no project is involved.
const validationNamespace = "cel-validation"

var validationNamespaceOnce sync.Once

func ensureValidationNamespace(t *testing.T) {
	t.Helper()
	var err error
	validationNamespaceOnce.Do(func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: validationNamespace}}
		err = client.IgnoreAlreadyExists(k8sClient.Create(context.Background(), ns))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// celObj is shorthand for the JSON-like maps the cases are written in: what a
// user would write in YAML for kubectl.
type celObj = map[string]any

// celValidSpec gives a minimal valid spec of every kind. Each case starts from
// a fresh copy and breaks (or varies) one thing.
func celValidSpec(kind string) celObj {
	ref := func(name string) celObj { return celObj{"name": name} }
	switch kind {
	case "Project":
		return celObj{"displayName": "Validation"}
	case "User":
		return celObj{"username": "someone", "name": "Some One", "email": "someone@example.com"}
	case "Repository":
		return celObj{"displayName": "Repo", "gitURL": "https://example.com/org/repo.git", "gitBranch": "main", "sshKeyRef": ref("key")}
	case "Inventory":
		return celObj{"displayName": "Hosts", "type": "static", "inventory": "[web]\nhost1\n", "sshKeyRef": ref("key")}
	case "Environment":
		return celObj{"displayName": "Env"}
	case "View":
		return celObj{"title": "Tab"}
	case "Template":
		return celObj{"displayName": "Tpl", "playbook": "site.yml", "repositoryRef": ref("repo"), "environmentRef": ref("env")}
	case "Schedule":
		// February 29th: the suite's clock never gets there, so these
		// schedules never fire.
		return celObj{"templateRef": ref("tpl"), "cronFormat": "0 0 29 2 *"}
	case "Task":
		return celObj{"templateRef": ref("tpl")}
	case "Integration":
		return celObj{"displayName": "Hook"}
	case "IntegrationAlias":
		return celObj{"alias": "abcdefghijklmnop"}
	}
	panic("no valid spec for " + kind)
}

var celClusterScoped = map[string]bool{"Project": true, "User": true}

// celCase is one object to create: rejected with a message containing
// want, or accepted when want is empty.
type celCase struct {
	name string
	kind string
	edit func(spec celObj)
	want string
}

func celMatcher(edit func(m celObj)) func(celObj) {
	return func(spec celObj) {
		m := celObj{"name": "branch", "matchType": "header", "method": "equals", "key": "X-Event", "value": "push"}
		edit(m)
		spec["matchers"] = []any{m}
	}
}

func celExtractValue(edit func(v celObj)) func(celObj) {
	return func(spec celObj) {
		v := celObj{"name": "commit", "valueSource": "header", "key": "X-Commit", "variable": "COMMIT"}
		edit(v)
		spec["extractValues"] = []any{v}
	}
}

func celSurveyVar(edit func(v celObj)) func(celObj) {
	return func(spec celObj) {
		v := celObj{"name": "count", "title": "How many"}
		edit(v)
		spec["surveyVars"] = []any{v}
	}
}

func celSet(key string, value any) func(celObj) { return func(spec celObj) { spec[key] = value } }
func celUnset(keys ...string) func(celObj) {
	return func(spec celObj) {
		for _, k := range keys {
			delete(spec, k)
		}
	}
}
func celAll(edits ...func(celObj)) func(celObj) {
	return func(spec celObj) {
		for _, e := range edits {
			e(spec)
		}
	}
}

// celCases: for every rule of the CRDs (CEL, required, enum, minimum,
// length, pattern), an object that breaks it and the message the user sees,
// next to objects that come close and must be accepted.
var celCases = []celCase{
	// Project
	{"project: name longer than 55 characters", "Project", nil, "at most 55 characters (its namespace is bastion-<name>)"},
	{"project: name of 55 characters", "Project", nil, ""},
	{"project: name with a dot", "Project", nil, "a project name must be a DNS label"},
	{"project: no display name", "Project", celUnset("displayName"), "spec.displayName: Required value"},
	{"project: empty display name", "Project", celSet("displayName", ""), "spec.displayName in body should be at least 1 chars long"},
	{"project: negative max parallel tasks", "Project", celSet("maxParallelTasks", int64(-1)), "spec.maxParallelTasks in body should be greater than or equal to 0"},
	{"project: max parallel tasks 0 (unlimited)", "Project", celSet("maxParallelTasks", int64(0)), ""},
	{"project: max parallel tasks not an integer", "Project", celSet("maxParallelTasks", "two"), `spec.maxParallelTasks: Invalid value: "string": spec.maxParallelTasks in body must be of type integer`},
	{"project: unknown member role", "Project", celSet("members", []any{celObj{"user": "alice", "role": "superuser"}}), `spec.members[0].role: Unsupported value: "superuser"`},
	{"project: member without a user", "Project", celSet("members", []any{celObj{"role": "owner"}}), "spec.members[0].user: Required value"},
	{"project: member without a role", "Project", celSet("members", []any{celObj{"user": "alice"}}), "spec.members[0].role: Required value"},
	{"project: members with every role", "Project", celSet("members", []any{
		celObj{"user": "a", "role": "owner"}, celObj{"user": "b", "role": "manager"},
		celObj{"user": "c", "role": "task_runner"}, celObj{"user": "d", "role": "guest"},
	}), ""},

	// User
	{"user: no username", "User", celUnset("username"), "spec.username: Required value"},
	{"user: no name", "User", celUnset("name"), "spec.name: Required value"},
	{"user: no email", "User", celUnset("email"), "spec.email: Required value"},
	{"user: empty email", "User", celSet("email", ""), "spec.email in body should be at least 1 chars long"},
	{"user: complete", "User", nil, ""},

	// Repository: URL types and the branch.
	{"repository: ftp URL", "Repository", celSet("gitURL", "ftp://x"), "Incorrect URL"},
	{"repository: http URL", "Repository", celSet("gitURL", "http://example.com/r.git"), "Incorrect URL: the scheme must be ssh, https, file or git"},
	{"repository: https URL", "Repository", nil, ""},
	{"repository: ssh URL", "Repository", celSet("gitURL", "ssh://git@example.com/org/repo.git"), ""},
	{"repository: git URL", "Repository", celSet("gitURL", "git://example.com/org/repo.git"), ""},
	{"repository: file URL", "Repository", celSet("gitURL", "file:///srv/repo.git"), ""},
	{"repository: no scheme is ssh", "Repository", celSet("gitURL", "git@github.com:org/repo.git"), ""},
	{"repository: local path without a branch", "Repository", celAll(celSet("gitURL", "/srv/repo"), celUnset("gitBranch")), ""},
	{"repository: https URL without a branch", "Repository", celUnset("gitBranch"), "Branch is required unless the URL is a local path"},
	{"repository: https URL with an empty branch", "Repository", celSet("gitBranch", ""), "Branch is required"},
	{"repository: file URL without a branch", "Repository", celAll(celSet("gitURL", "file:///srv/repo.git"), celUnset("gitBranch")), "Branch is required"},
	{"repository: ssh without scheme, without a branch", "Repository", celAll(celSet("gitURL", "git@github.com:org/repo.git"), celUnset("gitBranch")), "Branch is required"},
	{"repository: no URL", "Repository", celUnset("gitURL"), "spec.gitURL: Required value"},
	{"repository: no access key", "Repository", celUnset("sshKeyRef"), "spec.sshKeyRef: Required value"},
	{"repository: access key without a name", "Repository", celSet("sshKeyRef", celObj{}), "spec.sshKeyRef.name: Required value"},
	{"repository: no name", "Repository", celUnset("displayName"), "spec.displayName: Required value"},

	// Inventory
	{"inventory: file without a path", "Inventory", celAll(celSet("type", "file"), celUnset("inventory")), "Path to Inventory file is required"},
	{"inventory: file with an empty path", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "")), "Path to Inventory file is required"},
	{"inventory: file escaping the repository", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "../x")), "the inventory file must be a relative path inside the repository"},
	{"inventory: file at an absolute path", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "/etc/passwd")), "the inventory file must be a relative path inside the repository"},
	{"inventory: file escaping through a middle ..", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "hosts/../../x")), "relative path inside the repository"},
	{"inventory: file ending in ..", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "hosts/..")), "relative path inside the repository"},
	{"inventory: file that is ..", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "..")), "relative path inside the repository"},
	{"inventory: file inside the repository", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "inventories/staging.ini")), ""},
	{"inventory: file whose name starts with dots", "Inventory", celAll(celSet("type", "file"), celSet("inventory", "..hosts")), ""},
	{"inventory: static content", "Inventory", nil, ""},
	{"inventory: static yaml content", "Inventory", celAll(celSet("type", "static-yaml"), celSet("inventory", "all:\n  hosts:\n    web1:\n")), ""},
	{"inventory: terraform workspace", "Inventory", celAll(celSet("type", "terraform-workspace"), celUnset("inventory")), ""},
	{"inventory: unknown type", "Inventory", celSet("type", "dynamic"), `spec.type: Unsupported value: "dynamic"`},
	{"inventory: no type", "Inventory", celUnset("type"), "spec.type: Required value"},
	{"inventory: no user credentials", "Inventory", celUnset("sshKeyRef"), "spec.sshKeyRef: Required value"},
	{"inventory: become key without a name", "Inventory", celSet("becomeKeyRef", celObj{}), "spec.becomeKeyRef.name: Required value"},

	// Environment
	{"environment: no name", "Environment", celUnset("displayName"), "spec.displayName: Required value"},
	{"environment: extra variables that are not an object", "Environment", celSet("extraVars", "a=b"), "spec.extraVars in body must be of type object"},
	{"environment: environment variables that are not strings", "Environment", celSet("env", celObj{"PORT": int64(8080)}), `spec.env.PORT in body must be of type string`},
	{"environment: variables", "Environment", celAll(celSet("extraVars", celObj{"port": int64(8080), "tags": []any{"a"}}), celSet("env", celObj{"PORT": "8080"})), ""},

	// View
	{"view: empty title", "View", celSet("title", ""), "spec.title in body should be at least 1 chars long"},
	{"view: blank title", "View", celSet("title", "   "), "Title is required"},
	{"view: no title", "View", celUnset("title"), "spec.title: Required value"},
	{"view: negative position", "View", celSet("position", int64(-1)), "spec.position in body should be greater than or equal to 0"},
	{"view: title and position", "View", celSet("position", int64(3)), ""},

	// Template
	{"template: plain task template without a type", "Template", nil, ""},
	{"template: plain task template with an empty type", "Template", celSet("type", ""), ""},
	{"template: build without a start version", "Template", celSet("type", "build"), "Start version is required for a build template"},
	{"template: build with an empty start version", "Template", celAll(celSet("type", "build"), celSet("startVersion", "")), "Start version is required"},
	{"template: build with a start version", "Template", celAll(celSet("type", "build"), celSet("startVersion", "0.0.0")), ""},
	{"template: deploy without a build template", "Template", celSet("type", "deploy"), "Build template is required for a deploy template"},
	{"template: deploy with a build template and autorun", "Template", celAll(celSet("type", "deploy"), celSet("buildTemplateRef", celObj{"name": "build"}), celSet("autorun", true)), ""},
	{"template: deploy with a nameless build template", "Template", celAll(celSet("type", "deploy"), celSet("buildTemplateRef", celObj{})), "spec.buildTemplateRef.name: Required value"},
	{"template: unknown type", "Template", celSet("type", "nightly"), `spec.type: Unsupported value: "nightly"`},
	{"template: unknown app", "Template", celSet("app", "python"), `spec.app: Unsupported value: "python"`},
	{"template: every app", "Template", celSet("app", "tofu"), ""},
	{"template: no playbook", "Template", celUnset("playbook"), "spec.playbook: Required value"},
	{"template: empty playbook", "Template", celSet("playbook", ""), "spec.playbook in body should be at least 1 chars long"},
	{"template: no repository", "Template", celUnset("repositoryRef"), "spec.repositoryRef: Required value"},
	{"template: no environment", "Template", celUnset("environmentRef"), "spec.environmentRef: Required value"},
	{"template: no name", "Template", celUnset("displayName"), "spec.displayName: Required value"},
	{"template: keep no finished tasks", "Template", celSet("keepLast", int64(0)), "spec.keepLast in body should be greater than or equal to 1"},
	{"template: keep the last 5 tasks", "Template", celSet("keepLast", int64(5)), ""},
	{"template: survey variable without a name", "Template", celSurveyVar(func(v celObj) { delete(v, "name") }), "spec.surveyVars[0].name: Required value"},
	{"template: survey variable without a title", "Template", celSurveyVar(func(v celObj) { delete(v, "title") }), "spec.surveyVars[0].title: Required value"},
	{"template: survey variable of an unknown type", "Template", celSurveyVar(func(v celObj) { v["type"] = "float" }), `spec.surveyVars[0].type: Unsupported value: "float"`},
	{"template: int survey variable", "Template", celSurveyVar(func(v celObj) { v["type"] = "int"; v["required"] = true }), ""},
	{"template: vault without a key", "Template", celSet("vaults", []any{celObj{"name": "prod"}}), "spec.vaults[0].keyRef: Required value"},

	// Schedule
	{"schedule: no cron", "Schedule", celUnset("cronFormat"), "spec.cronFormat: Required value"},
	{"schedule: empty cron", "Schedule", celSet("cronFormat", ""), "spec.cronFormat in body should be at least 1 chars long"},
	{"schedule: no template", "Schedule", celUnset("templateRef"), "spec.templateRef: Required value"},
	{"schedule: cron and template", "Schedule", nil, ""},

	// Task (the template cannot change: see TestValidation_taskTemplateIsImmutable)
	{"task: no template", "Task", celUnset("templateRef"), "spec.templateRef: Required value"},
	{"task: unknown stop request", "Task", celSet("stop", "now"), `spec.stop: Unsupported value: "now"`},
	{"task: force stop", "Task", celSet("stop", "force"), ""},
	{"task: an approval naming both", "Task", celSet("approval", celObj{"approvedBy": "a", "rejectedBy": "b"}), "an approval names either approvedBy or rejectedBy"},
	{"task: an approval naming nobody", "Task", celSet("approval", celObj{"reason": "why"}), "an approval names either approvedBy or rejectedBy"},
	{"task: an approval", "Task", celSet("approval", celObj{"approvedBy": "a"}), ""},
	{"task: a rejection with its reason", "Task", celSet("approval", celObj{"rejectedBy": "b", "reason": "change freeze"}), ""},
	{"task: a rejection's reason over 1000 characters", "Task", celSet("approval", celObj{"rejectedBy": "b", "reason": strings.Repeat("x", 1001)}), "spec.approval.reason: Too long"},
	{"task: a run with its options", "Task", celAll(celSet("message", "hi"), celSet("debug", true), celSet("extraVars", celObj{"a": int64(1)}), celSet("arguments", []any{"-v"})), ""},
	{"task: extra variables that are not an object", "Task", celSet("extraVars", []any{"a"}), "spec.extraVars in body must be of type object"},

	// Integration
	{"integration: no name", "Integration", celUnset("displayName"), "spec.displayName: Required value"},
	{"integration: no auth", "Integration", nil, ""},
	{"integration: no auth, explicitly", "Integration", celSet("authMethod", ""), ""},
	{"integration: unknown auth method", "Integration", celAll(celSet("authMethod", "basic"), celSet("authSecretRef", celObj{"name": "k"})), `spec.authMethod: Unsupported value: "basic"`},
	{"integration: token without a header", "Integration", celAll(celSet("authMethod", "token"), celSet("authSecretRef", celObj{"name": "k"})), "an auth header is required for token and hmac authentication"},
	{"integration: hmac with an empty header", "Integration", celAll(celSet("authMethod", "hmac"), celSet("authHeader", ""), celSet("authSecretRef", celObj{"name": "k"})), "an auth header is required"},
	{"integration: token with a header and a secret", "Integration", celAll(celSet("authMethod", "token"), celSet("authHeader", "X-Token"), celSet("authSecretRef", celObj{"name": "k"})), ""},
	{"integration: github without a secret", "Integration", celSet("authMethod", "github"), "an auth secret (a login_password key) is required when an auth method is set"},
	{"integration: github with a secret", "Integration", celAll(celSet("authMethod", "github"), celSet("authSecretRef", celObj{"name": "k"})), ""},
	{"integration: body matcher without a data format", "Integration", celMatcher(func(m celObj) { m["matchType"] = "body" }), "Body data format is required when matching on body"},
	{"integration: body matcher with an empty data format", "Integration", celMatcher(func(m celObj) { m["matchType"] = "body"; m["bodyDataType"] = "" }), "Body data format is required"},
	{"integration: json body matcher", "Integration", celMatcher(func(m celObj) { m["matchType"] = "body"; m["bodyDataType"] = "json"; m["key"] = "commits.0.id" }), ""},
	{"integration: header matcher", "Integration", celMatcher(func(celObj) {}), ""},
	{"integration: matcher of an unknown source", "Integration", celMatcher(func(m celObj) { m["matchType"] = "query" }), `spec.matchers[0].matchType: Unsupported value: "query"`},
	{"integration: matcher with an unknown method", "Integration", celMatcher(func(m celObj) { m["method"] = "regex" }), `spec.matchers[0].method: Unsupported value: "regex"`},
	{"integration: matcher with an unknown data format", "Integration", celMatcher(func(m celObj) { m["matchType"] = "body"; m["bodyDataType"] = "xml" }), `spec.matchers[0].bodyDataType: Unsupported value: "xml"`},
	{"integration: matcher without a value", "Integration", celMatcher(func(m celObj) { delete(m, "value") }), "spec.matchers[0].value: Required value"},
	{"integration: matcher with an empty value", "Integration", celMatcher(func(m celObj) { m["value"] = "" }), "spec.matchers[0].value in body should be at least 1 chars long"},
	{"integration: matcher without a key", "Integration", celMatcher(func(m celObj) { delete(m, "key") }), "spec.matchers[0].key: Required value"},
	{"integration: matcher without a name", "Integration", celMatcher(func(m celObj) { delete(m, "name") }), "spec.matchers[0].name: Required value"},
	{"integration: body value without a data type", "Integration", celExtractValue(func(v celObj) { v["valueSource"] = "body" }), "Body data type is required when the source is body"},
	{"integration: string body value", "Integration", celExtractValue(func(v celObj) { v["valueSource"] = "body"; v["bodyDataType"] = "string" }), ""},
	{"integration: header value", "Integration", celExtractValue(func(celObj) {}), ""},
	{"integration: value of an unknown source", "Integration", celExtractValue(func(v celObj) { v["valueSource"] = "query" }), `spec.extractValues[0].valueSource: Unsupported value: "query"`},
	{"integration: value without a variable", "Integration", celExtractValue(func(v celObj) { delete(v, "variable") }), "spec.extractValues[0].variable: Required value"},
	{"integration: value without a key", "Integration", celExtractValue(func(v celObj) { delete(v, "key") }), "spec.extractValues[0].key: Required value"},

	// IntegrationAlias
	{"alias: shorter than 16 characters", "IntegrationAlias", celSet("alias", "abcdefghijklmno"), "spec.alias in body should be at least 16 chars long"},
	{"alias: 16 characters", "IntegrationAlias", celSet("alias", "abc-DEF_ghi-0123"), ""},
	{"alias: not URL-safe", "IntegrationAlias", celSet("alias", "abcdefgh/ijklmnop"), "spec.alias in body should match '^[A-Za-z0-9_-]+$'"},
	{"alias: project-level (no integration)", "IntegrationAlias", nil, ""},
	{"alias: of an integration", "IntegrationAlias", celSet("integrationRef", celObj{"name": "hook"}), ""},
}

// object gives every case its own object. Most cases use a generated
// name; the Project name cases are about the name itself.
func (c celCase) object(index int) *unstructured.Unstructured {
	spec := celValidSpec(c.kind)
	if c.edit != nil {
		c.edit(spec)
	}
	u := &unstructured.Unstructured{Object: celObj{"spec": spec}}
	u.SetGroupVersionKind(bastionv1.GroupVersion.WithKind(c.kind))
	name := fmt.Sprintf("cel-%03d", index)
	switch c.name {
	case "project: name longer than 55 characters":
		name = "cel-" + strings.Repeat("a", 52)
	case "project: name of 55 characters":
		name = "cel-" + strings.Repeat("b", 51)
	case "project: name with a dot":
		name = "cel.dotted"
	}
	u.SetName(name)
	if !celClusterScoped[c.kind] {
		u.SetNamespace(validationNamespace)
	}
	return u
}

func TestValidation_everyRuleRejectsABadObjectWithAMessage(t *testing.T) {
	ensureValidationNamespace(t)
	ctx := context.Background()
	for i, c := range celCases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			u := c.object(i)
			err := k8sClient.Create(ctx, u)
			if c.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(c.want))
			// A rule that fails to evaluate (a field it reads is unset)
			// shows CEL internals instead of its message.
			g.Expect(err.Error()).NotTo(ContainSubstring("no such key"))
			g.Expect(err.Error()).NotTo(ContainSubstring("evaluating rule"))
		})
	}
}

// A schedule is active unless it says otherwise.
func TestValidation_scheduleIsActiveByDefault(t *testing.T) {
	ensureValidationNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: celObj{"spec": celValidSpec("Schedule")}}
	u.SetGroupVersionKind(bastionv1.GroupVersion.WithKind("Schedule"))
	u.SetNamespace(validationNamespace)
	u.SetName("cel-active-by-default")
	g.Expect(k8sClient.Create(ctx, u)).To(Succeed())
	s := &bastionv1.Schedule{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), s)).To(Succeed())
	g.Expect(s.Spec.Active).To(BeTrue())
}

// A task's template is fixed at creation; its other fields may change.
func TestValidation_taskTemplateIsImmutable(t *testing.T) {
	ensureValidationNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: "cel-immutable-template"},
		Spec:       bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "first"}},
	}
	g.Expect(k8sClient.Create(ctx, task)).To(Succeed())

	// update re-reads the task each time: the Task controller may be
	// writing to it too, and a conflict is not what this test is about.
	update := func(edit func(*bastionv1.Task)) func() error {
		return func() error {
			current := &bastionv1.Task{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(task), current); err != nil {
				return err
			}
			edit(current)
			return k8sClient.Update(ctx, current)
		}
	}
	notConflict := func(err error) bool { return !apierrors.IsConflict(err) }

	var err error
	g.Eventually(func() bool {
		err = update(func(t *bastionv1.Task) { t.Spec.TemplateRef.Name = "second" })()
		return notConflict(err)
	}, timeout, interval).Should(BeTrue())
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("a task's template cannot change"))

	g.Eventually(func() bool {
		err = update(func(t *bastionv1.Task) { t.Spec.Message = "changed"; t.Spec.Stop = bastionv1.StopGraceful })()
		return notConflict(err)
	}, timeout, interval).Should(BeTrue())
	g.Expect(err).NotTo(HaveOccurred())
}

// The status is validated too: an unknown task state is refused.
func TestValidation_taskStatusMustBeAKnownState(t *testing.T) {
	ensureValidationNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: "cel-task-status"},
		Spec:       bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "tpl"}},
	}
	g.Expect(k8sClient.Create(ctx, task)).To(Succeed())
	var err error
	g.Eventually(func() bool {
		current := &bastionv1.Task{}
		if err = k8sClient.Get(ctx, client.ObjectKeyFromObject(task), current); err != nil {
			return false
		}
		current.Status.Status = "paused"
		err = k8sClient.Status().Update(ctx, current)
		return !apierrors.IsConflict(err)
	}, timeout, interval).Should(BeTrue())
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`status.status: Unsupported value: "paused"`))
}

// Every x-kubernetes-validations rule of every CRD has a case above that
// breaks it, so a new rule cannot land untested.
func TestValidation_everyCELRuleHasACase(t *testing.T) {
	g := NewWithT(t)
	files, err := filepath.Glob(filepath.Join("..", "config", "crd", "bases", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty())

	type rule struct{ kind, message string }
	var rules []rule
	for _, file := range files {
		data, err := os.ReadFile(file)
		g.Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(yaml.Unmarshal(data, crd)).To(Succeed(), file)
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			walkCRDSchema(*v.Schema.OpenAPIV3Schema, func(r apiextensionsv1.ValidationRule) {
				rules = append(rules, rule{crd.Spec.Names.Kind, r.Message})
				// gofmt turns '' in a doc comment into a typographic
				// quote, which is not CEL: rules test emptiness with size().
				g.Expect(r.Rule).NotTo(ContainSubstring("''"), "%s: %s", crd.Spec.Names.Kind, r.Rule)
				g.Expect(r.Rule).NotTo(MatchRegexp("[\u201c\u201d]"), "%s: %s", crd.Spec.Names.Kind, r.Rule)
			})
		}
	}
	g.Expect(len(rules)).To(BeNumerically(">=", 12))

	covered := func(r rule) bool {
		if r.kind == "Task" && r.message == "a task's template cannot change" {
			return true // TestValidation_taskTemplateIsImmutable
		}
		for _, c := range celCases {
			if c.kind == r.kind && c.want != "" && strings.Contains(r.message, c.want) {
				return true
			}
		}
		return false
	}
	var missing []string
	for _, r := range rules {
		g.Expect(r.message).NotTo(BeEmpty(), "a %s rule has no message: users would see the CEL expression", r.kind)
		if !covered(r) {
			missing = append(missing, r.kind+": "+r.message)
		}
	}
	sort.Strings(missing)
	g.Expect(missing).To(BeEmpty(), "CEL rules with no case in celCases")
}

func walkCRDSchema(s apiextensionsv1.JSONSchemaProps, visit func(apiextensionsv1.ValidationRule)) {
	for _, r := range s.XValidations {
		visit(r)
	}
	for _, p := range s.Properties {
		walkCRDSchema(p, visit)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkCRDSchema(*s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkCRDSchema(*s.AdditionalProperties.Schema, visit)
	}
}
