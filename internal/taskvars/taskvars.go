// Package taskvars is the one rule for what a task may set on its own:
// which variables (its extra vars and secret answers) and which overrides
// of its template (branch, commit, inventory, playbook, arguments).
//
// A task is started by someone with fewer rights than the managers who
// wrote its template and Environment: a task_runner, a webhook sender, a
// schedule. So:
//
//   - a task may set its template's survey variables, always, and other
//     names only when the template opts in (allowOverrideExtraVarsInTask,
//     AWX's "prompt on launch" for extra variables);
//   - no task may ever set a name that changes how the run connects or what
//     it executes (Forbidden), whatever the template says; and no template
//     may ask for one in its survey;
//   - a task overrides its template's code and hosts only where the
//     template allows it;
//   - what a task adds to the command line is a limit of host patterns
//     (never "@FILE") and, where the template allows arguments, only the
//     options of its app's allow-list (arguments.go).
//
// The Environment, which the project's managers wrote, is not limited
// here: it may set any name.
//
// The API (POST /tasks, webhooks) answers a broken rule with a 400 naming
// the variable; the TaskReconciler fails a Task that breaks it (one made
// with kubectl, or whose template changed since) before anything runs.
package taskvars

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Refusal is a broken rule, worded for the user; it names the variable or
// the field, never a value.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refusef(format string, a ...any) *Refusal { return &Refusal{fmt.Sprintf(format, a...)} }

// validName is what a task's variable may be called, for every app: bash
// receives it as a NAME=value argument and terraform as -var NAME=value
// or the environment variable TF_VAR_NAME, where "=", spaces, a leading
// "-" or a NUL would change the meaning.
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ansibleMagic are Ansible's magic and special variables that do not start
// with ansible_ (those are all refused): they describe the inventory, the
// play and the paths Ansible reads, and a playbook trusts them. environment
// and vars are play keywords that a playbook templates as variables.
// From Ansible's "Special Variables" reference, plus the keywords Ansible
// reserves for connections that older playbooks read as variables.
var ansibleMagic = set(
	"environment", "group_names", "groups", "hostvars", "inventory_dir", "inventory_file",
	"inventory_hostname", "inventory_hostname_short", "omit", "play_hosts", "playbook_dir",
	"role_name", "role_names", "role_path", "vars",
)

// envNames are environment variables that change what a program, a shell,
// the dynamic linker, git, ssh or an interpreter runs, reads or connects
// to. bash scripts commonly export their NAME=value arguments (Semaphore's
// do), and terraform reads TF_* itself, so bash, terraform and tofu tasks
// may not set them. This is a deny-list, and no deny-list of environment
// variables is ever complete: the boundary is the template's opt-in
// (allowOverrideExtraVarsInTask), without which a task sets only its
// survey's names. Names are matched exactly (the environment is case
// sensitive), except the proxy variables, which tools read in either case.
var envNames = set(
	// the shell and its startup
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "ENV", "IFS", "PS1", "PS2", "PS3", "PS4",
	"SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE", "PWD", "OLDPWD", "TMPDIR",
	"INPUTRC", "HISTFILE", "TERMINFO", "EDITOR", "VISUAL", "PAGER", "BROWSER", "ZDOTDIR", "FCEDIT",
	// programs that run a command line, or read commands, from a variable
	"MANPAGER", "SUDO_EDITOR", "KUBE_EDITOR", "KUBECTL_EXTERNAL_DIFF",
	"LESSOPEN", "LESSCLOSE", "VIMINIT", "EXINIT", "MYVIMRC", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH",
	"SVN_SSH", "SVN_EDITOR", "HGRCPATH", "HGEDITOR", "TAR_OPTIONS", "CURL_HOME", "WGETRC",
	// build tools, which run what their flags and configuration say
	"MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK",
	"GOSUMDB", "GOPRIVATE", "GOINSECURE", "GOTOOLCHAIN", "GOENV", "GOROOT", "GOPATH", "GOBIN",
	"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTUP_TOOLCHAIN",
	"MAVEN_OPTS", "MAVEN_ARGS", "GRADLE_OPTS", "JAVA_OPTS", "ANT_OPTS", "SBT_OPTS", "HELM_PLUGINS",
	"TERRAFORM_CONFIG",
	// the C library and loader
	"GCONV_PATH", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "NLSPATH", "LOCPATH", "GLIBC_TUNABLES",
	"MALLOC_CHECK_", "OPENSSL_CONF", "OPENSSL_ENGINES", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "KRB5_CONFIG", "KRB5CCNAME", "GNUPGHOME",
	// interpreters
	"PERLLIB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS", "CLASSPATH", "PHPRC", "PHP_INI_SCAN_DIR", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON",
	"R_ENVIRON_USER", "ERL_AFLAGS", "ERL_ZFLAGS", "ERL_FLAGS", "CORECLR_PROFILER", "COR_PROFILER",
	// where clients read their configuration and credentials
	"KUBECONFIG", "DOCKER_HOST", "DOCKER_CONFIG", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
	"GOOGLE_APPLICATION_CREDENTIALS", "SUDO_ASKPASS", "NETRC",
)

// envPrefixes are families of such variables: the loader's (LD_, DYLD_),
// Lua's (LUA_PATH, LUA_CPATH, LUA_INIT and their _5_x forms), package
// managers' (pip, gem, bundler, cargo, conda, .NET's startup hooks),
// bash's own (BASH_ENV, BASH_FUNC_…, BASH_XTRACEFD), Ansible's, git's,
// ssh's, Terraform's (TF_CLI_*, TF_TOKEN_*, TF_DATA_DIR, TF_LOG…; a
// task's variables reach terraform as TF_VAR_<name>, which stays a plain
// variable), Python's and Perl's, the XDG directories git reads its
// configuration from, the cluster's service discovery, and the names
// Bastion itself sets for a run.
var envPrefixes = []string{
	"LD_", "DYLD_", "BASH_", "ANSIBLE_", "GIT_", "SSH_", "TF_", "PYTHON", "PERL5", "XDG_",
	"KUBERNETES_", "SEMAPHORE_", "BASTION_", "TOFU_", "LUA_", "PIP_", "GEM_", "BUNDLE_", "CARGO_",
	"CONDA", "DOTNET_", "SYSTEMD_",
}

// caselessPrefixes are families their programs read in any case (npm's
// configuration: npm_config_script_shell, NPM_CONFIG_USERCONFIG…; yarn's).
var caselessPrefixes = []string{"npm_config_", "yarn_"}

// proxyNames redirect a program's traffic; tools read them lower case too.
var proxyNames = set("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Forbidden reports whether no task of an app may set the variable name,
// whatever its template allows, because it changes how the run connects
// or what it executes. Names that are not plain identifiers are forbidden
// for every app. app "" is ansible.
func Forbidden(app bastionv1.TemplateApp, name string) bool {
	if !validName.MatchString(name) {
		return true
	}
	switch app {
	case bastionv1.AppBash, bastionv1.AppTerraform, bastionv1.AppTofu:
		return envLike(name)
	default:
		return strings.HasPrefix(strings.ToLower(name), "ansible_") || ansibleMagic[strings.ToLower(name)]
	}
}

// envLike reports whether name is an environment variable that changes
// what a program runs or where it connects (envNames, envPrefixes).
func envLike(name string) bool {
	if envNames[name] || proxyNames[strings.ToLower(name)] {
		return true
	}
	for _, p := range envPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, p := range caselessPrefixes {
		if strings.HasPrefix(strings.ToLower(name), p) {
			return true
		}
	}
	return false
}

// forbiddenMessage is the refusal of a forbidden name (the API's 400).
func forbiddenMessage(name string) *Refusal {
	if !validName.MatchString(name) {
		return refusef("the variable %q cannot be set by a task: a variable name has letters, digits and underscores only, and does not start with a digit", name)
	}
	return refusef("the variable %q cannot be set by a task: it changes how the run connects or what it executes", name)
}

// CheckSurveyVar refuses a survey variable that a task could not answer:
// one whose name is forbidden for the template's app.
func CheckSurveyVar(app bastionv1.TemplateApp, name string) error {
	if !Forbidden(app, name) {
		return nil
	}
	if !validName.MatchString(name) {
		return refusef("survey variable %q: a variable name has letters, digits and underscores only, and does not start with a digit", name)
	}
	return refusef("survey variable %q: a task may not set this variable, since it changes how the run connects or what it executes", name)
}

// CheckSurvey applies CheckSurveyVar to each of a template's survey
// variables, in order.
func CheckSurvey(spec *bastionv1.TemplateSpec) error {
	for _, sv := range spec.SurveyVars {
		if err := CheckSurveyVar(spec.App, sv.Name); err != nil {
			return err
		}
	}
	return nil
}

// CheckVars refuses the first of the names (in sorted order, so the answer
// does not depend on a map's order) that a task of the template may not
// set: a forbidden one, or, unless the template allows other variables,
// one that is not among its survey variables.
func CheckVars(spec *bastionv1.TemplateSpec, names []string) error {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	survey := map[string]bool{}
	for _, sv := range spec.SurveyVars {
		survey[sv.Name] = true
	}
	for _, name := range sorted {
		switch {
		case Forbidden(spec.App, name):
			return forbiddenMessage(name)
		case !survey[name] && !spec.AllowOverrideExtraVarsInTask:
			return refusef("the variable %q cannot be set by a task: it is not a survey variable of this template, and the template does not let a task set other variables (allow_override_extra_vars_in_task is off)", name)
		}
	}
	return nil
}

// Overrides are the parts of its template that a task replaces; empty
// fields replace nothing.
type Overrides struct {
	GitBranch, CommitHash, Playbook string
	Inventory                       bool
	Arguments                       bool
}

// Of is what a Task overrides.
func Of(spec *bastionv1.TaskSpec) Overrides {
	return Overrides{
		GitBranch: spec.GitBranch, CommitHash: spec.CommitHash, Playbook: spec.Playbook,
		Inventory: spec.InventoryRef != nil && spec.InventoryRef.Name != "",
		Arguments: len(spec.Arguments) > 0,
	}
}

// CheckOverrides refuses the first override the template does not allow,
// naming the field as POST /tasks does and the template field that would
// allow it.
func CheckOverrides(spec *bastionv1.TemplateSpec, o Overrides) error {
	switch {
	case o.GitBranch != "" && !spec.AllowOverrideBranchInTask:
		return notAllowed("branch (git_branch)", "allow_override_branch_in_task")
	case o.CommitHash != "" && !spec.AllowOverrideBranchInTask:
		return notAllowed("commit (commit_hash)", "allow_override_branch_in_task")
	case o.Inventory && !spec.AllowOverrideInventoryInTask:
		return notAllowed("inventory (inventory_id)", "allow_override_inventory_in_task")
	case o.Playbook != "" && !spec.AllowOverridePlaybookInTask:
		return notAllowed("playbook", "allow_override_playbook_in_task")
	case o.Arguments && !spec.AllowOverrideArgsInTask:
		return notAllowed("arguments", "allow_override_args_in_task")
	}
	return nil
}

// notAllowed words a refused override as the API always has for arguments.
func notAllowed(what, flag string) *Refusal {
	return refusef("This template does not allow a task to override its %s (%s is off)", what, flag)
}

// CheckTask applies every rule to a Task of the template: its overrides,
// its limit and arguments, then the names of its extra variables and of
// its secret answers.
func CheckTask(template *bastionv1.TemplateSpec, task *bastionv1.TaskSpec, names []string) error {
	if err := CheckOverrides(template, Of(task)); err != nil {
		return err
	}
	if err := CheckCommandLine(template.App, task.Limit, task.Arguments); err != nil {
		return err
	}
	return CheckVars(template, names)
}
