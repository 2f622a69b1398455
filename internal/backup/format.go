// Package backup turns a project into a JSON file and a file back into a
// new project (api-contract.md, "Backup and restore").
//
// The file follows Semaphore UI's layout: snake_case keys, one array per
// kind, and objects that refer to each other by name rather than by id, so
// that a file can be read, edited and restored anywhere. It carries no
// secrets: keys keep their name and type, environments the names of their
// secret variables, never a value.
package backup

import "encoding/json"

// Backup is the file. Every array is written, empty or not, as Semaphore
// writes it.
type Backup struct {
	Meta         Meta          `json:"meta"`
	Templates    []Template    `json:"templates"`
	Repositories []Repository  `json:"repositories"`
	Keys         []Key         `json:"keys"`
	Views        []View        `json:"views"`
	Inventories  []Inventory   `json:"inventories"`
	Environments []Environment `json:"environments"`
	Integrations []Integration `json:"integrations"`
	// IntegrationAliases are the project-level aliases (those of no
	// integration). Only their number matters: a restore makes fresh ones.
	IntegrationAliases []string `json:"integration_aliases"`
	// Schedules is Semaphore's newer layout for a template's cron: every
	// field of every Schedule, where a template's `cron` holds one
	// expression and nothing else.
	Schedules []Schedule `json:"schedules"`
}

// Meta is the project's own fields.
type Meta struct {
	Name             string  `json:"name"`
	Alert            bool    `json:"alert"`
	AlertChat        *string `json:"alert_chat"`
	MaxParallelTasks int32   `json:"max_parallel_tasks"`
	Type             string  `json:"type"`
}

// Key is a key's name and type; never its secret.
type Key struct {
	Name string `json:"name"`
	// Type: none, ssh or login_password.
	Type string `json:"type"`
}

// Repository is a git repository; SSHKey names its access key.
type Repository struct {
	Name      string `json:"name"`
	GitURL    string `json:"git_url"`
	GitBranch string `json:"git_branch"`
	SSHKey    string `json:"ssh_key"`
}

// Inventory is an inventory. Repository (a Bastion addition) names the
// repository of a file inventory when it is not the template's.
type Inventory struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Inventory  string `json:"inventory"`
	SSHKey     string `json:"ssh_key"`
	BecomeKey  string `json:"become_key,omitempty"`
	Repository string `json:"repository,omitempty"`
}

// Environment carries `json` and `env` as JSON text, as the /api does.
type Environment struct {
	Name string `json:"name"`
	JSON string `json:"json"`
	Env  string `json:"env"`
	// Secrets name the environment's secret variables, without values: a
	// restore creates them empty, so the console shows what to fill in.
	Secrets []EnvironmentSecret `json:"secrets,omitempty"`
}

// EnvironmentSecret is one secret variable's name.
type EnvironmentSecret struct {
	Name string `json:"name"`
	// Type: var (an extra variable) or env (an environment variable).
	Type string `json:"type"`
}

// View is a tab of the template list; templates name it by its title.
type View struct {
	Title    string `json:"title"`
	Position int32  `json:"position"`
}

// Template is a task template.
type Template struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type: "", build or deploy. App: "", ansible, terraform, tofu or bash.
	Type     string `json:"type"`
	App      string `json:"app"`
	Playbook string `json:"playbook"`
	// Arguments is a JSON array of strings, as text (the /api's form).
	Arguments               string `json:"arguments,omitempty"`
	AllowOverrideArgsInTask bool   `json:"allow_override_args_in_task"`
	// What else a task may choose (internal/taskvars); branch is
	// Semaphore's name, the others Bastion additions. Absent is off.
	AllowOverrideBranchInTask    bool        `json:"allow_override_branch_in_task,omitempty"`
	AllowOverrideInventoryInTask bool        `json:"allow_override_inventory_in_task,omitempty"`
	AllowOverridePlaybookInTask  bool        `json:"allow_override_playbook_in_task,omitempty"`
	AllowOverrideExtraVarsInTask bool        `json:"allow_override_extra_vars_in_task,omitempty"`
	SuppressSuccessAlerts        bool        `json:"suppress_success_alerts"`
	Autorun                      bool        `json:"autorun"`
	GitBranch                    string      `json:"git_branch,omitempty"`
	StartVersion                 string      `json:"start_version,omitempty"`
	SurveyVars                   []SurveyVar `json:"survey_vars,omitempty"`
	// KeepLast (a Bastion addition) is how many finished tasks are kept.
	KeepLast *int32 `json:"keep_last,omitempty"`

	Repository    string  `json:"repository"`
	Environment   string  `json:"environment"`
	Inventory     string  `json:"inventory,omitempty"`
	View          string  `json:"view,omitempty"`
	BuildTemplate string  `json:"build_template,omitempty"`
	Vaults        []Vault `json:"vaults,omitempty"`
	// Cron is Semaphore's older form of a schedule. It is written when the
	// template has exactly one Schedule and it is active; on restore it
	// makes an active schedule unless Schedules has one for this template.
	Cron string `json:"cron,omitempty"`
}

// Vault is a vault password passed to ansible.
type Vault struct {
	// Name is the vault id; empty for the default vault.
	Name     string `json:"name,omitempty"`
	VaultKey string `json:"vault_key"`
	// Type is Semaphore's; only password vaults (the default) exist here.
	Type string `json:"type,omitempty"`
}

// SurveyVar is a variable asked for when a task starts.
type SurveyVar struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description,omitempty"`
	Type        string           `json:"type"`
	Required    bool             `json:"required"`
	Values      []SurveyVarValue `json:"values,omitempty"`
}

// SurveyVarValue is one choice of an enum survey variable.
type SurveyVarValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Schedule runs a template on a cron expression.
type Schedule struct {
	Name       string `json:"name,omitempty"`
	Template   string `json:"template"`
	CronFormat string `json:"cron_format"`
	// Active defaults to true when absent, as a new Schedule does.
	Active             *bool  `json:"active,omitempty"`
	RunOnlyOnNewCommit bool   `json:"run_only_on_new_commit,omitempty"`
	Repository         string `json:"repository,omitempty"`
}

// Integration is an incoming webhook.
type Integration struct {
	Name       string `json:"name"`
	Template   string `json:"template,omitempty"`
	AuthMethod string `json:"auth_method"`
	AuthHeader string `json:"auth_header,omitempty"`
	// AuthSecret names the login_password key whose password is checked.
	AuthSecret string          `json:"auth_secret,omitempty"`
	Searchable bool            `json:"searchable"`
	TaskParams json.RawMessage `json:"task_params,omitempty"`
	// Aliases stand for the integration's aliases, one entry each. An
	// alias is a credential, so the file holds the alias object's
	// metadata.name, never the URL segment, and a restore makes fresh ones.
	Aliases       []string       `json:"aliases"`
	Matchers      []Matcher      `json:"matchers"`
	ExtractValues []ExtractValue `json:"extract_values"`
}

// Matcher is one condition on an incoming request.
type Matcher struct {
	Name         string `json:"name"`
	MatchType    string `json:"match_type"`
	Method       string `json:"method"`
	BodyDataType string `json:"body_data_type,omitempty"`
	Key          string `json:"key"`
	Value        string `json:"value"`
}

// ExtractValue takes a value of an incoming request into the task.
type ExtractValue struct {
	Name         string `json:"name"`
	ValueSource  string `json:"value_source"`
	BodyDataType string `json:"body_data_type,omitempty"`
	Key          string `json:"key"`
	Variable     string `json:"variable"`
}
