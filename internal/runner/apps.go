package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bastion-dev/bastion/internal/taskvars"
)

// command builds the program for the task's app.
func (t *taskRun) command(checkout string) (process, error) {
	switch t.in.Spec.App {
	case "", "ansible":
		return t.ansible(checkout)
	case "bash":
		return t.bash(checkout)
	default:
		return process{}, fmt.Errorf("unknown app %q", t.in.Spec.App)
	}
}

// binary finds an app's program, saying which one is missing.
func (t *taskRun) binary(name string) (string, error) {
	if p, ok := t.binaries[name]; ok {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed in the runner (not found in PATH)", name)
	}
	return p, nil
}

// ansible: ansible-playbook with the inventory, credentials through files,
// extra variables as one JSON argument and the task's as an unsafe file, the template's then the task's
// arguments, and the playbook, which must lie inside the checkout.
func (t *taskRun) ansible(checkout string) (process, error) {
	s := t.in.Spec
	// The API and the TaskReconciler refuse such a limit already; a runspec
	// that carries one anyway must not make ansible read and print a file.
	if err := taskvars.CheckLimit(s.Limit); err != nil {
		return process{}, err
	}
	playbook, err := inside(checkout, s.Playbook, "the playbook")
	if err != nil {
		return process{}, err
	}
	bin, err := t.binary("ansible-playbook")
	if err != nil {
		return process{}, err
	}
	inventory, err := writeInventory(s.Inventory, checkout, t.private)
	if err != nil {
		return process{}, err
	}

	var args []string
	if inventory != "" {
		args = append(args, "-i", inventory)
	}
	credentials, err := t.ansibleCredentials(&args)
	if err != nil {
		return process{}, err
	}
	// The Environment's variables may use Jinja on purpose; the task's are
	// untrusted and go through a file that tags every string !unsafe. The
	// two share no name, so their order does not matter.
	trusted, untrusted, err := t.splitVars()
	if err != nil {
		return process{}, err
	}
	if len(trusted) > 0 {
		// A file, not argv: the Environment's secret variables are among
		// them, and `ps` shows argv to every user of the machine.
		data, _ := json.Marshal(trusted)
		file, err := writePrivate(filepath.Join(t.private, "environment-vars.json"), string(data))
		if err != nil {
			return process{}, err
		}
		args = append(args, "--extra-vars", "@"+file)
	}
	if len(untrusted) > 0 {
		file, err := writePrivate(filepath.Join(t.private, "task-vars.yml"), unsafeYAML(untrusted))
		if err != nil {
			return process{}, err
		}
		args = append(args, "--extra-vars", "@"+file)
	}
	if credentials != "" {
		// Passwords in a file, never in argv where `ps` shows them.
		args = append(args, "--extra-vars", "@"+credentials)
	}
	for _, v := range s.Vaults {
		password, err := t.in.secret(v.Key.Secret, "password")
		if err != nil {
			return process{}, err
		}
		t.redact(password)
		file, err := writePrivate(filepath.Join(t.private, "vault-"+v.Key.Secret), password)
		if err != nil {
			return process{}, err
		}
		if v.Name != "" {
			args = append(args, "--vault-id", v.Name+"@"+file)
		} else {
			args = append(args, "--vault-password-file", file)
		}
	}
	if s.DryRun {
		args = append(args, "--check")
	}
	if s.Diff {
		args = append(args, "--diff")
	}
	if s.Debug {
		args = append(args, "-vvvv")
	}
	if s.Limit != "" {
		args = append(args, "--limit", s.Limit)
	}
	args = append(args, s.Arguments...)
	args = append(args, playbook)

	env, err := t.programEnv()
	if err != nil {
		return process{}, err
	}
	env = append(env, "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_HOST_KEY_CHECKING=False", "ANSIBLE_LOCAL_TEMP="+filepath.Join(t.work, "ansible-tmp"))
	// ssh's control sockets go to a short directory of their own: a socket's
	// path holds at most 107 bytes, which a local run's home (its
	// directory is named after its task) can nearly fill by itself.
	sockets, err := os.MkdirTemp("/tmp", "bastion-ssh-")
	if err != nil {
		return process{}, err
	}
	t.scratch = append(t.scratch, sockets)
	env = append(env, "ANSIBLE_SSH_CONTROL_PATH_DIR="+sockets)
	return process{path: bin, args: args, dir: checkout, env: env}, nil
}

// ansibleCredentials writes the inventory's user and become credentials
// as a vars file (ssh keys as --private-key) and returns its path.
func (t *taskRun) ansibleCredentials(args *[]string) (string, error) {
	inv := t.in.Spec.Inventory
	if inv == nil {
		return "", nil
	}
	vars := map[string]string{}
	if k := inv.Key; k != nil {
		login, err := t.in.secret(k.Secret, "username")
		if err != nil {
			return "", err
		}
		if login != "" {
			vars["ansible_user"] = login
		}
		switch k.Type {
		case "ssh":
			file, err := t.sshKeyFile(k.Secret, "inventory")
			if err != nil {
				return "", err
			}
			*args = append(*args, "--private-key", file)
		case "login_password":
			password, err := t.in.secret(k.Secret, "password")
			if err != nil {
				return "", err
			}
			t.redact(password)
			vars["ansible_password"] = password
		}
	}
	if k := inv.BecomeKey; k != nil {
		login, err := t.in.secret(k.Secret, "username")
		if err != nil {
			return "", err
		}
		password, err := t.in.secret(k.Secret, "password")
		if err != nil {
			return "", err
		}
		t.redact(password)
		vars["ansible_become"] = "true"
		if login != "" {
			vars["ansible_become_user"] = login
		}
		vars["ansible_become_password"] = password
	}
	if len(vars) == 0 {
		return "", nil
	}
	data, _ := json.Marshal(vars)
	return writePrivate(filepath.Join(t.private, "credentials.json"), string(data))
}

// bash: the script inside the checkout, then k=v for each variable that
// is not secret (as Semaphore's scripts expect), then the arguments. Each
// is one argv element: nothing is ever interpreted. Secret variables (the
// Environment's and the task's secret answers) are environment variables
// of the script instead, under their own names (secretEnv).
func (t *taskRun) bash(checkout string) (process, error) {
	s := t.in.Spec
	script, err := inside(checkout, s.Playbook, "the script")
	if err != nil {
		return process{}, err
	}
	bin, err := t.binary("bash")
	if err != nil {
		return process{}, err
	}
	vars, secret, err := t.plainAndSecretVars()
	if err != nil {
		return process{}, err
	}
	args := []string{script}
	for _, k := range sortedKeys(vars) {
		args = append(args, k+"="+scalar(vars[k]))
	}
	args = append(args, s.Arguments...)
	env, err := t.programEnv()
	if err != nil {
		return process{}, err
	}
	extra, err := secretEnv(secret)
	if err != nil {
		return process{}, err
	}
	return process{path: bin, args: args, dir: checkout, env: append(env, extra...)}, nil
}

// shellName is a name bash reads from its environment as a variable.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secretEnv turns secret variables into NAME=value environment entries.
// Not argv: /proc/<pid>/cmdline is readable by every user of the machine,
// while /proc/<pid>/environ is mode 0400, readable only by the process's
// own user (and root), who can read the same values in the private
// directory and the mounted Secrets anyway. A name bash could not read
// is refused rather than passed where the script cannot see it.
func secretEnv(secret map[string]string) ([]string, error) {
	env := make([]string, 0, len(secret))
	for _, k := range sortedKeys(secret) {
		if !shellName.MatchString(k) {
			return nil, fmt.Errorf("the secret variable %q cannot reach the script: a secret variable is an environment variable of bash, and its name must be letters, digits and _", k)
		}
		env = append(env, k+"="+secret[k])
	}
	return env, nil
}

// scalar renders a variable for a k=v argument: strings as they are,
// anything else as JSON.
func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return strings.TrimSpace(string(data))
}
