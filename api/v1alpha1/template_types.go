package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TemplateType is a template's kind of run: plain tasks, builds that
// produce versions, or deploys of a build's version.
// +kubebuilder:validation:Enum="";build;deploy
type TemplateType string

// The template types of docs/features.md §3.
const (
	TemplateTask   TemplateType = ""
	TemplateBuild  TemplateType = "build"
	TemplateDeploy TemplateType = "deploy"
)

// TemplateApp is the program a template runs; empty means ansible.
// +kubebuilder:validation:Enum="";ansible;terraform;tofu;bash
type TemplateApp string

// The apps of docs/features.md §3 and api-contract.md.
const (
	AppAnsible   TemplateApp = "ansible"
	AppTerraform TemplateApp = "terraform"
	AppTofu      TemplateApp = "tofu"
	AppBash      TemplateApp = "bash"
)

// SurveyVar is a variable the user is asked for when starting a task.
type SurveyVar struct {
	// Name of the variable ("Name is required"); trimmed.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Title shown in the task form ("Title is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	Title string `json:"title"`
	// +optional
	Description string `json:"description,omitempty"`
	// Type is "" (string) or int; enum and secret arrive with the console.
	// +optional
	// +kubebuilder:validation:Enum="";int;enum;secret
	Type string `json:"type,omitempty"`
	// Required variables must be filled in the task form.
	// +optional
	Required bool `json:"required,omitempty"`
	// Values are the choices of an enum variable.
	// +optional
	Values []SurveyVarValue `json:"values,omitempty"`
}

// SurveyVarValue is one choice of an enum survey variable.
type SurveyVarValue struct {
	// +required
	Name string `json:"name"`
	// +required
	Value string `json:"value"`
}

// TemplateVault is a vault password key passed to ansible.
type TemplateVault struct {
	// Name is the vault id; empty for the default vault.
	// +optional
	Name string `json:"name,omitempty"`
	// KeyRef names the key Secret that holds the vault password.
	// +required
	KeyRef ObjectRef `json:"keyRef"`
}

// TemplateSpec is what a task runs: code from a repository, an inventory,
// an environment, and how runs are versioned.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'build' || (has(self.startVersion) && self.startVersion.size() > 0)",message="Start version is required for a build template"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'deploy' || has(self.buildTemplateRef)",message="Build template is required for a deploy template"
type TemplateSpec struct {
	// DisplayName is the template's name in the console ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// +optional
	Description string `json:"description,omitempty"`

	// Type: "" (task), build or deploy.
	// +optional
	Type TemplateType `json:"type,omitempty"`

	// App: "" or ansible (the default), terraform, tofu or bash.
	// +optional
	App TemplateApp `json:"app,omitempty"`

	// Playbook is the file to run, relative to the repository, for example
	// site.yml ("Playbook filename is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	Playbook string `json:"playbook"`

	// RepositoryRef names the repository ("Repository is required").
	// +required
	RepositoryRef ObjectRef `json:"repositoryRef"`

	// EnvironmentRef names the environment ("Environment is required").
	// +required
	EnvironmentRef ObjectRef `json:"environmentRef"`

	// InventoryRef names the inventory; optional.
	// +optional
	InventoryRef *ObjectRef `json:"inventoryRef,omitempty"`

	// Vaults are the vault passwords passed to ansible.
	// +optional
	Vaults []TemplateVault `json:"vaults,omitempty"`

	// ViewRef names the view (tab) the template shows under.
	// +optional
	ViewRef *ObjectRef `json:"viewRef,omitempty"`

	// BuildTemplateRef names the build template whose versions a deploy
	// template deploys ("Build template is required").
	// +optional
	BuildTemplateRef *ObjectRef `json:"buildTemplateRef,omitempty"`

	// StartVersion is the first version of a build template, for example
	// 0.0.0 ("Start version is required"). Each run increments the last
	// group of digits.
	// +optional
	StartVersion string `json:"startVersion,omitempty"`

	// Autorun queues a deploy template after each successful task of its
	// build template.
	// +optional
	Autorun bool `json:"autorun,omitempty"`

	// GitBranch overrides the repository's branch.
	// +optional
	GitBranch string `json:"gitBranch,omitempty"`

	// Arguments are passed to the program before the task's own.
	// +optional
	Arguments []string `json:"arguments,omitempty"`

	// AllowOverrideArgsInTask lets a task add its own arguments.
	// +optional
	AllowOverrideArgsInTask bool `json:"allowOverrideArgsInTask,omitempty"`

	// AllowOverrideBranchInTask lets a task choose the code it runs: its own
	// branch (git_branch) or commit (commit_hash). Semaphore's name.
	// +optional
	AllowOverrideBranchInTask bool `json:"allowOverrideBranchInTask,omitempty"`

	// AllowOverrideInventoryInTask lets a task run on another inventory of
	// the project (inventory_id).
	// +optional
	AllowOverrideInventoryInTask bool `json:"allowOverrideInventoryInTask,omitempty"`

	// AllowOverridePlaybookInTask lets a task run another file of the
	// repository (playbook).
	// +optional
	AllowOverridePlaybookInTask bool `json:"allowOverridePlaybookInTask,omitempty"`

	// AllowOverrideExtraVarsInTask lets a task set variables other than the
	// survey's (AWX's "prompt on launch"). Names that change how the run
	// connects or what it executes (ansible_*, PATH, ...) stay refused.
	// +optional
	AllowOverrideExtraVarsInTask bool `json:"allowOverrideExtraVarsInTask,omitempty"`

	// SurveyVars are asked for when a task starts.
	// +optional
	// +listType=map
	// +listMapKey=name
	SurveyVars []SurveyVar `json:"surveyVars,omitempty"`

	// SuppressSuccessAlerts sends alerts only for failed tasks.
	// +optional
	SuppressSuccessAlerts bool `json:"suppressSuccessAlerts,omitempty"`

	// RequireApproval holds each task of this template in
	// waiting_confirmation ("Waiting for approval") before anything runs,
	// until a project owner other than the one who started it approves it
	// (spec.approval of the Task). Read when the task is created: changing
	// it does not release or hold tasks already waiting.
	// +optional
	RequireApproval bool `json:"requireApproval,omitempty"`

	// KeepLast is how many finished Tasks of this template are kept as
	// objects; older ones are deleted (their summary and output stay in the
	// output store). Unset means the manager's default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	KeepLast *int32 `json:"keepLast,omitempty"`

	// TaskPods override the project's taskPods for this template's tasks:
	// each field set here replaces the project's (resources: each request
	// or limit set here replaces the project's for that resource).
	// +optional
	TaskPods *TaskPodSettings `json:"taskPods,omitempty"`
}

// TemplateStatus is what the controllers observed.
type TemplateStatus struct {
	// ObservedGeneration is the generation of the spec the status
	// describes: when it equals metadata.generation, the controller has
	// seen the latest change.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastVersion is the version of the newest task of a build template;
	// the next task gets it incremented.
	// +optional
	LastVersion string `json:"lastVersion,omitempty"`

	// LastVersionTask names the task that took LastVersion.
	// +optional
	LastVersionTask string `json:"lastVersionTask,omitempty"`

	// Conditions: Ready is True when every referenced object exists.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Template is a task template of a project.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=btpl
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="App",type=string,JSONPath=`.spec.app`
// +kubebuilder:printcolumn:name="Playbook",type=string,JSONPath=`.spec.playbook`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Template struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TemplateSpec `json:"spec"`
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TemplateList is a list of Templates.
type TemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Template `json:"items"`
}

func init() { SchemeBuilder.Register(&Template{}, &TemplateList{}) }
