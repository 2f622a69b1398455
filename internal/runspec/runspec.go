// Package runspec is the contract between the task engine and the runner:
// what one task needs to run, resolved from the Task, its Template,
// Repository, Inventory and Environment, and where the runner finds it.
//
// Both launchers lay the inputs out the same way, so the runner cannot tell
// a Job from a local process:
//
//	<input>/task.json              Spec, as JSON
//	<input>/token                  the task's token for the output stream
//	<secrets>/<secret-name>/<key>  each Secret the task needs, one file per key
//
// In a Job, <input> is the task's input Secret mounted read-only at
// InputDir and each Secret is mounted read-only under SecretsDir. The local
// launcher writes the same files into a private temporary directory.
package runspec

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Where a Job mounts the inputs.
const (
	InputDir   = "/bastion/input"
	SecretsDir = "/bastion/secrets"
	// WorkDir is the runner's scratch space (an emptyDir in a Job).
	WorkDir = "/bastion/work"
)

// File names inside the input directory and keys of the input Secret.
const (
	TaskFile  = "task.json"
	TokenFile = "token"
)

// Spec is everything the runner needs to run one task, with secrets only by
// reference (a Secret name and key under the secrets directory).
type Spec struct {
	// Namespace and Name of the Task; ID is its /api id.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	ID        int64  `json:"id,omitempty"`

	// App is ansible, terraform, tofu or bash.
	App string `json:"app"`
	// Playbook is the file to run, relative to the checkout.
	Playbook string `json:"playbook"`
	// Arguments: the template's, then the task's if allowed.
	Arguments []string `json:"arguments,omitempty"`
	Debug     bool     `json:"debug,omitempty"`
	DryRun    bool     `json:"dryRun,omitempty"`
	Diff      bool     `json:"diff,omitempty"`
	Limit     string   `json:"limit,omitempty"`

	Repository Repository `json:"repository"`
	Inventory  *Inventory `json:"inventory,omitempty"`

	// ExtraVars are the task's variables merged under the Environment's
	// (the Environment wins). Env becomes process environment variables.
	ExtraVars json.RawMessage `json:"extraVars,omitempty"`
	// TaskVarNames are the top-level keys of ExtraVars whose value came
	// from the task (survey answers, its extra variables, values extracted
	// from a webhook) rather than the Environment: untrusted, so the runner
	// hands them to ansible as unsafe (never templated). Absent from specs
	// written before it existed, which then count every variable as trusted.
	TaskVarNames []string          `json:"taskVarNames,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	// EnvironmentSecret names the Environment's Secret (keys "var.X" and
	// "env.X"), if any.
	EnvironmentSecret string `json:"environmentSecret,omitempty"`
	// TaskSecret names the task's own Secret of secret survey answers
	// (same keys); its values win over the Environment's.
	TaskSecret string `json:"taskSecret,omitempty"`

	Vaults []Vault `json:"vaults,omitempty"`

	// TaskType is "", build or deploy; versions as the runner exports them
	// (SEMAPHORE_TASK_INCOMING_VERSION, SEMAPHORE_TASK_TARGET_VERSION).
	TaskType        string `json:"taskType,omitempty"`
	IncomingVersion string `json:"incomingVersion,omitempty"`
	TargetVersion   string `json:"targetVersion,omitempty"`

	// ManagerURL is where the runner streams its output.
	ManagerURL string `json:"managerURL,omitempty"`
}

// Repository is what to check out.
type Repository struct {
	URL string `json:"url"`
	// Branch after precedence: task, then template, then repository.
	Branch     string `json:"branch,omitempty"`
	CommitHash string `json:"commitHash,omitempty"`
	// Key is the access key, if it holds a secret.
	Key *KeyRef `json:"key,omitempty"`
}

// Inventory is where and as whom to run.
type Inventory struct {
	// Type is static, static-yaml, file or terraform-workspace.
	Type string `json:"type"`
	// Content is the inventory text, or the path for type file.
	Content   string  `json:"content,omitempty"`
	Name      string  `json:"name,omitempty"`
	Key       *KeyRef `json:"key,omitempty"`
	BecomeKey *KeyRef `json:"becomeKey,omitempty"`
}

// Vault is an ansible vault password.
type Vault struct {
	Name string `json:"name,omitempty"`
	Key  KeyRef `json:"key"`
}

// KeyRef points at a key Secret under the secrets directory.
type KeyRef struct {
	// Secret is the Secret's name: <secrets>/<Secret>/<data key>.
	Secret string `json:"secret"`
	// Type is ssh, login_password or none.
	Type string `json:"type"`
}

// ReachableByOthers reports whether a user that is neither the owner nor
// in the group of dir or of any directory above it can traverse to it
// (ACLs apart). The local launcher and an isolated runner both go by it:
// the launcher to place the runs where their users can reach them, the
// runner to mount what its user could not reach.
func ReachableByOthers(dir string) bool {
	for {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
