package taskvars

import (
	"strings"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

func TestForbidden_namesThatChangeHowARunConnectsOrExecutes(t *testing.T) {
	ansible := []string{
		"ansible_python_interpreter", "ansible_host", "ansible_ssh_common_args", "ansible_connection",
		"ansible_become_password", "ansible_become_exe", "Ansible_Shell_Executable", "hostvars", "groups",
		"group_names", "inventory_hostname", "inventory_dir", "playbook_dir", "role_path", "omit",
		"environment", "vars", "play_hosts",
	}
	shell := []string{
		"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "ANSIBLE_CONFIG", "GIT_SSH_COMMAND",
		"TF_CLI_CONFIG_FILE", "TF_CLI_ARGS", "TF_TOKEN_app_terraform_io", "SSH_AUTH_SOCK", "IFS", "PS4",
		"SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "HOME", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT",
		"PERL5LIB", "NODE_OPTIONS", "http_proxy", "HTTPS_PROXY", "KUBECONFIG", "XDG_CONFIG_HOME",
		"SEMAPHORE_TASK_TYPE", "GCONV_PATH",
	}
	invalid := []string{"", "a b", "a=b", "-e", "1x", "x\x00", "PATH=/tmp", "täg"}
	ordinary := []string{"tag", "replicas", "release_version", "COMMIT", "_x", "path", "home", "env"}

	for _, app := range []bastionv1.TemplateApp{"", bastionv1.AppAnsible} {
		for _, name := range append(append([]string{}, ansible...), invalid...) {
			if !Forbidden(app, name) {
				t.Errorf("ansible (%q): %q allowed", app, name)
			}
		}
		for _, name := range append([]string{"PATH", "LD_PRELOAD"}, ordinary...) {
			if Forbidden(app, name) {
				t.Errorf("ansible (%q): %q forbidden; it reaches ansible only as an extra variable", app, name)
			}
		}
	}
	for _, app := range []bastionv1.TemplateApp{bastionv1.AppBash, bastionv1.AppTerraform, bastionv1.AppTofu} {
		for _, name := range append(append([]string{}, shell...), invalid...) {
			if !Forbidden(app, name) {
				t.Errorf("%s: %q allowed", app, name)
			}
		}
		for _, name := range append([]string{"ansible_host"}, ordinary...) {
			if Forbidden(app, name) {
				t.Errorf("%s: %q forbidden", app, name)
			}
		}
	}
}

func TestCheckVars_surveyAlwaysOtherNamesOnlyWithTheOptInForbiddenNever(t *testing.T) {
	spec := &bastionv1.TemplateSpec{SurveyVars: []bastionv1.SurveyVar{{Name: "tag", Title: "Tag"}}}
	if err := CheckVars(spec, []string{"tag"}); err != nil {
		t.Errorf("a survey variable refused: %v", err)
	}
	err := CheckVars(spec, []string{"tag", "colour"})
	if err == nil || !strings.Contains(err.Error(), `"colour"`) || !strings.Contains(err.Error(), "allow_override_extra_vars_in_task is off") {
		t.Errorf("another variable without the opt-in: %v", err)
	}
	spec.AllowOverrideExtraVarsInTask = true
	if err := CheckVars(spec, []string{"tag", "colour"}); err != nil {
		t.Errorf("another variable with the opt-in refused: %v", err)
	}
	want := `the variable "ansible_host" cannot be set by a task: it changes how the run connects or what it executes`
	if err := CheckVars(spec, []string{"zeta", "ansible_host"}); err == nil || err.Error() != want {
		t.Errorf("ansible_host with the opt-in: %v, want %q", err, want)
	}
	// A survey variable of a forbidden name (a template made with kubectl)
	// is still refused: forbidden is never.
	spec.SurveyVars = append(spec.SurveyVars, bastionv1.SurveyVar{Name: "ansible_host", Title: "Host"})
	if err := CheckVars(spec, []string{"ansible_host"}); err == nil || err.Error() != want {
		t.Errorf("a forbidden survey variable: %v", err)
	}
	if err := CheckSurvey(spec); err == nil || !strings.Contains(err.Error(), `survey variable "ansible_host"`) {
		t.Errorf("CheckSurvey: %v", err)
	}
}

func TestCheckOverrides_eachNeedsItsSwitch(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		flag string
		on   func(*bastionv1.TemplateSpec)
	}{
		{Overrides{GitBranch: "dev"}, "allow_override_branch_in_task", func(s *bastionv1.TemplateSpec) { s.AllowOverrideBranchInTask = true }},
		{Overrides{CommitHash: "abcd"}, "allow_override_branch_in_task", func(s *bastionv1.TemplateSpec) { s.AllowOverrideBranchInTask = true }},
		{Overrides{Inventory: true}, "allow_override_inventory_in_task", func(s *bastionv1.TemplateSpec) { s.AllowOverrideInventoryInTask = true }},
		{Overrides{Playbook: "x.yml"}, "allow_override_playbook_in_task", func(s *bastionv1.TemplateSpec) { s.AllowOverridePlaybookInTask = true }},
		{Overrides{Arguments: true}, "allow_override_args_in_task", func(s *bastionv1.TemplateSpec) { s.AllowOverrideArgsInTask = true }},
	} {
		spec := &bastionv1.TemplateSpec{}
		if err := CheckOverrides(spec, tc.o); err == nil || !strings.Contains(err.Error(), "("+tc.flag+" is off)") {
			t.Errorf("%+v without %s: %v", tc.o, tc.flag, err)
		}
		tc.on(spec)
		if err := CheckOverrides(spec, tc.o); err != nil {
			t.Errorf("%+v with %s: %v", tc.o, tc.flag, err)
		}
	}
	if err := CheckOverrides(&bastionv1.TemplateSpec{}, Overrides{}); err != nil {
		t.Errorf("no override refused: %v", err)
	}
}

// TestForbidden_bashEnvironmentNamesThatRunACommand: a bash task's secret
// answers become environment variables of the script under their own
// names (and Semaphore's scripts export their k=v arguments), and the
// script's children inherit them. Each name below makes a common program
// run a command line taken from its value, or load code or configuration
// from a path the value names, the way PATH, BASH_ENV, JAVA_TOOL_OPTIONS
// and GIT_SSH_COMMAND do. (A deny-list: the boundary is the opt-in.)
func TestForbidden_bashEnvironmentNamesThatRunACommand(t *testing.T) {
	for _, name := range []string{
		"JDK_JAVA_OPTIONS",      // the java launcher's JAVA_TOOL_OPTIONS (-javaagent, -XX:OnOutOfMemoryError=cmd)
		"LESSOPEN", "LESSCLOSE", // less runs "|cmd %s" on every file it opens
		"MANPAGER", "SYSTEMD_PAGER", // run as a command line, like PAGER
		"SYSTEMD_EDITOR", "KUBE_EDITOR", "FCEDIT", // run as a command line, like EDITOR
		"KUBECTL_EXTERNAL_DIFF",                                 // kubectl diff runs it
		"RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "SVN_SSH", // the remote shell command, like GIT_SSH_COMMAND
		"VIMINIT", "EXINIT", // ex commands, :!cmd included
		"ZDOTDIR",             // zsh's startup files, like BASH_ENV
		"HGRCPATH",            // mercurial's configuration: hooks run commands
		"CURL_HOME", "WGETRC", // where curl and wget read their configuration (proxies, output files)
		"MAKEFLAGS",          // --eval=$(shell cmd) when make runs
		"GOFLAGS", "GOPROXY", // -toolexec=cmd when go builds; where go fetches code
		"RUSTC_WRAPPER",                         // cargo runs it for every compile
		"LUA_CPATH", "LUA_PATH", "LUA_INIT_5_4", // native modules and startup code
		"PHPRC",                                            // php.ini: auto_prepend_file
		"npm_config_script_shell", "NPM_CONFIG_USERCONFIG", // npm runs scripts with it; npm reads either case
		"PIP_INDEX_URL", "GEM_HOME", "BUNDLE_GEMFILE", "CARGO_HOME", // package managers install code from them
		"TAR_OPTIONS", "DOTNET_STARTUP_HOOKS", "TERRAFORM_CONFIG", "TOFU_CLI_CONFIG_FILE",
	} {
		for _, app := range []bastionv1.TemplateApp{bastionv1.AppBash, bastionv1.AppTerraform, bastionv1.AppTofu} {
			if !Forbidden(app, name) {
				t.Errorf("%s: %q allowed", app, name)
			}
		}
	}
}

// TestCheckLimit_hostPatternsNeverAFile: ansible reads "@FILE" in a limit,
// alone or anywhere in a list, as a file of host patterns and prints its
// lines; a limit holds no "@" at all, and no option.
func TestCheckLimit_hostPatternsNeverAFile(t *testing.T) {
	for _, limit := range []string{"", "web1", "web1,db*", "!staging", "webservers:&prod", "~web[0-9]+"} {
		if err := CheckLimit(limit); err != nil {
			t.Errorf("limit %q refused: %v", limit, err)
		}
	}
	for _, limit := range []string{"@/etc/passwd", "web1,@/etc/passwd", "web1:@x", "x@y", " -e x=1"} {
		if err := CheckLimit(limit); err == nil {
			t.Errorf("limit %q allowed", limit)
		}
	}
	if err := CheckLimit("web1,@/bastion/secrets/key"); err == nil || err.Error() != "limit must be host patterns: it may not contain @ (ansible would read a file)" {
		t.Errorf("the refusal of @ = %v", err)
	}
}

// TestCheckArguments_anAllowListPerApp: a task's own arguments may narrow,
// check or describe its run; anything that changes how it connects or what
// it executes (extra variables, inventories, connection and privilege
// options, more playbooks, terraform's variables and state) is refused,
// naming the option.
func TestCheckArguments_anAllowListPerApp(t *testing.T) {
	allowed := map[bastionv1.TemplateApp][][]string{
		bastionv1.AppAnsible: {
			{"-v"}, {"-vvvv"}, {"--verbose"}, {"-C"}, {"--check"}, {"-D", "--diff"}, {"-Cv"}, {"-CDvvv"},
			{"-t", "web"}, {"-tweb"}, {"--tags", "web,db"}, {"--tags=web"}, {"--skip-tags", "slow"},
			{"-l", "web1"}, {"--limit=web1,db*"}, {"-Cl", "web1"}, {"-lweb1"}, {"-f", "10"}, {"--forks=5"},
			{"--start-at-task", "Install nginx"}, {"--flush-cache"}, {"--force-handlers"}, {"--list-hosts"},
			{"--list-tasks"}, {"--list-tags"}, {"--syntax-check"}, {"-T", "30"}, {"--timeout=30"},
		},
		bastionv1.AppTerraform: {
			{"-target=aws_instance.web"}, {"-target", "module.a.b"}, {"--target=x.y"}, {"-replace=x.y"},
			{"-refresh=false"}, {"-refresh-only"}, {"-parallelism=4"}, {"-lock=false"}, {"-lock-timeout=30s"},
			{"-compact-warnings"}, {"-no-color"}, {"-input=false"},
		},
		bastionv1.AppBash: {{"--force", "x"}, {"colour=red"}, {"-e", "anything", "a b=c"}},
	}
	allowed[bastionv1.AppTofu] = allowed[bastionv1.AppTerraform]
	refused := map[bastionv1.TemplateApp][][2]any{
		bastionv1.AppAnsible: {
			{[]string{"-e", "ansible_python_interpreter=/bin/sh"}, "-e"},
			{[]string{"--extra-vars", "{}"}, "--extra-vars"},
			{[]string{"--extra-vars=@/bastion/secrets/vault/password"}, "--extra-vars"},
			{[]string{"-eansible_connection=local"}, "-e"},
			{[]string{"-Ce", "x=1"}, "-e"},
			{[]string{"-vvve", "x=1"}, "-e"},
			{[]string{"--extra", "x=1"}, "--extra"}, // argparse's abbreviation of --extra-vars
			{[]string{"-i", "/etc/hosts"}, "-i"},
			{[]string{"-c", "local"}, "-c"},
			{[]string{"-u", "root"}, "-u"},
			{[]string{"-b"}, "-b"},
			{[]string{"--become-method=su"}, "--become-method"},
			{[]string{"-k"}, "-k"},
			{[]string{"-K"}, "-K"},
			{[]string{"--private-key", "/tmp/k"}, "--private-key"},
			{[]string{"--ssh-common-args=-oProxyCommand=x"}, "--ssh-common-args"},
			{[]string{"-M", "/tmp"}, "-M"},
			{[]string{"--vault-password-file", "/x"}, "--vault-password-file"},
			{[]string{"other.yml"}, "other.yml"},
			{[]string{"--", "other.yml"}, "--"},
			{[]string{"--check=yes"}, "--check"},
		},
		bastionv1.AppTerraform: {
			{[]string{"-var", "x=1"}, "-var"},
			{[]string{"-var-file=/bastion/secrets/x"}, "-var-file"},
			{[]string{"-chdir=/"}, "-chdir"},
			{[]string{"-state=/tmp/s"}, "-state"},
			{[]string{"-state-out=/tmp/s"}, "-state-out"},
			{[]string{"-backend-config=x"}, "-backend-config"},
			{[]string{"-plugin-dir=/tmp"}, "-plugin-dir"},
			{[]string{"-destroy"}, "-destroy"},
			{[]string{"-parallelism=many"}, "-parallelism"},
			{[]string{"-target", "-var=x"}, "-target"},
			{[]string{"main.tf"}, "main.tf"},
		},
		bastionv1.AppBash: {
			{[]string{"PATH=/tmp"}, "PATH="},
			{[]string{"x", "BASH_ENV=/tmp/x"}, "BASH_ENV="},
			{[]string{"LD_PRELOAD=/tmp/x.so"}, "LD_PRELOAD="},
		},
	}
	for app, lists := range allowed {
		for _, args := range lists {
			if err := CheckArguments(app, args); err != nil {
				t.Errorf("%s %q refused: %v", app, args, err)
			}
		}
	}
	for app, cases := range refused {
		for _, c := range cases {
			args, name := c[0].([]string), c[1].(string)
			err := CheckArguments(app, args)
			if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("%s %q: %v, want a refusal naming %q", app, args, err, name)
			}
		}
	}
	for _, args := range [][]string{{"-l", "@/etc/passwd"}, {"--limit=web1,@/etc/passwd"}, {"-l@/x"}, {"-Cl", "@/x"}, {"-l=@/x"}} {
		if err := CheckArguments(bastionv1.AppAnsible, args); err == nil || !strings.Contains(err.Error(), "may not contain @") {
			t.Errorf("ansible %q: %v, want the limit's refusal", args, err)
		}
	}
	if err := CheckArguments(bastionv1.AppAnsible, []string{"-e"}); err == nil ||
		err.Error() != `the argument "-e" cannot be set by a task: it changes how the run connects or what it executes` {
		t.Errorf("the refusal's wording: %v", err)
	}
}
