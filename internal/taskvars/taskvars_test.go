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
