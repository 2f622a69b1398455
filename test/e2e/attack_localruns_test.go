package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// Issue #19 item 3, through a real `bastion dev`: a project's bash script
// and its playbook try to read the data dir's database and kubeconfig, the
// token and work directory of another task that is running, and to list
// the runs; they print who they run as. As root, every attempt is denied,
// each run is an unprivileged user of its own, and the tasks still succeed.
// Where runs cannot be isolated (not root), bastion dev must say plainly
// that runs share its user.
func TestAttack_localRunsReachNeitherTheDataDirNorOtherRuns(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	dev := startDev(t, dataDir)
	dev.waitReady()
	if users, why := launch.Isolation(); users == nil {
		t.Logf("runs cannot be isolated here (%s): checking bastion dev's warning", why)
		if !strings.Contains(dev.stderr.String(), "WARNING: local runs share the manager's user") {
			t.Fatalf("bastion dev did not warn that runs share its user:\n%s", dev.stderr.String())
		}
		return
	}
	t.Log("running as root: checking that each run is a user of its own")
	if !strings.Contains(dev.stderr.String(), "each run starts as its own unprivileged user") {
		t.Fatalf("bastion dev did not say how runs are isolated:\n%s", dev.stderr.String())
	}

	repo := gittest.NewRepo(t)
	repo.WriteFile("hold.sh", "#!/bin/bash\necho holding\nsleep 25\necho released\n", true)
	repo.WriteFile("attack.sh", bashAttack, true)
	repo.WriteFile("attack.yml", ansibleAttack, false)

	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	project := api.newLocalProject("Attack", repo.Path, "localhost ansible_connection=local\n")
	p := project.Path
	template := func(name, app, playbook, environment string) int64 {
		var created struct {
			ID int64 `json:"id"`
		}
		api.must("POST", p+"/templates", map[string]any{"name": name, "app": app, "playbook": playbook,
			"repository_id": project.Repository, "inventory_id": project.Inventory,
			"environment_id": api.idNamed(p+"/environment", environment)}, http.StatusCreated, &created)
		return created.ID
	}
	start := func(template int64) int64 {
		var task struct {
			ID int64 `json:"id"`
		}
		api.must("POST", p+"/tasks", map[string]any{"template_id": template}, http.StatusCreated, &task)
		return task.ID
	}

	// The victim runs while the attacks run.
	victim := start(template("Hold", "bash", "hold.sh", "empty"))
	waitOutput(t, api, p, victim, "holding")
	kubeconfig := dev.bannerValue("kubeconfig")
	victimRun := kubectlOut(t, kubeconfig, "get", "tasks", "-A", "-l", "automation.bastion.dev/id="+itoa(victim),
		"-o", `jsonpath={.items[0].metadata.namespace}_{.items[0].metadata.name}_{.items[0].metadata.uid}`)
	victimDir := filepath.Join(dev.bannerValue("runs"), victimRun)
	// A failed test may leave the victim running: its files go all the same.
	t.Cleanup(func() { _ = os.RemoveAll(victimDir) })

	// The project's managers tell the attacks where everything is (an
	// Environment: trusted, so the names are not the task's to set).
	targets, _ := json.Marshal(map[string]string{
		"db": filepath.Join(dataDir, "bastion.db"), "kubeconfig": kubeconfig,
		"victim_token": filepath.Join(victimDir, "input", "token"), "victim_work": filepath.Join(victimDir, "work"),
		"runs": dev.bannerValue("runs"),
	})
	api.must("POST", p+"/environment", map[string]any{"name": "targets", "json": string(targets), "env": "{}"}, http.StatusNoContent, nil)

	for name, attack := range map[string]int64{
		"bash":    start(template("Attack with bash", "bash", "attack.sh", "targets")),
		"ansible": start(template("Attack with ansible", "ansible", "attack.yml", "targets")),
	} {
		status := waitFinished(t, api, p, attack)
		_, raw := api.call("GET", p+"/tasks/"+itoa(attack)+"/raw", nil)
		output := string(raw)
		t.Logf("the %s attack's output:\n%s", name, output)
		if status != "success" {
			t.Fatalf("the %s attack ended %s:\n%s", name, status, output)
		}
		uid := attackerUID(output)
		if uid < int(launch.DefaultRunUsers.First) {
			t.Errorf("the %s attack ran as uid %d, not a run user of its own:\n%s", name, uid, output)
		}
		for _, what := range []string{"db", "kubeconfig", "victim_token", "victim_work", "runs"} {
			if !strings.Contains(output, "DENIED "+what) {
				t.Errorf("the %s attack was not denied %s:\n%s", name, what, output)
			}
		}
		if strings.Contains(output, "READ ") {
			t.Errorf("the %s attack read something it must not:\n%s", name, output)
		}
	}
	if status := waitFinished(t, api, p, victim); status != "success" {
		t.Fatalf("the victim ended %s", status)
	}
}

// bashAttack gets the targets as name=value arguments (the Environment's
// variables) and prints READ or DENIED for each.
const bashAttack = `#!/bin/bash
for a in "$@"; do declare "${a%%=*}=${a#*=}"; done
echo "attacker uid=$(id -u)"
for what in db kubeconfig victim_token; do
  if cat "${!what}" >/dev/null 2>&1; then echo "READ $what"; else echo "DENIED $what"; fi
done
for what in victim_work runs; do
  if ls "${!what}" >/dev/null 2>&1; then echo "READ $what"; else echo "DENIED $what"; fi
done
`

// ansibleAttack does the same as a playbook.
const ansibleAttack = `- hosts: localhost
  gather_facts: false
  tasks:
    - command: id -u
      register: who
    - debug:
        msg: "attacker uid={{ who.stdout }}"
    - shell: 'if cat "{{ item.value }}" >/dev/null 2>&1 || ls "{{ item.value }}" >/dev/null 2>&1; then echo "READ {{ item.key }}"; else echo "DENIED {{ item.key }}"; fi'
      loop: "{{ {'db': db, 'kubeconfig': kubeconfig, 'victim_token': victim_token, 'victim_work': victim_work, 'runs': runs} | dict2items }}"
      register: tries
    - debug:
        msg: "{{ tries.results | map(attribute='stdout') | list }}"
`

// attackerUID is the uid an attack printed (-1 when it printed none).
func attackerUID(output string) int {
	_, rest, ok := strings.Cut(output, "attacker uid=")
	if !ok {
		return -1
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	uid, err := strconv.Atoi(rest[:end])
	if err != nil {
		return -1
	}
	return uid
}

// waitFinished waits for a task to end and returns its status.
func waitFinished(t *testing.T, api *apiClient, project string, task int64) string {
	t.Helper()
	var status string
	eventually(t, 3*time.Minute, fmt.Sprintf("task %d finished", task), func() error {
		var got struct {
			Status string `json:"status"`
		}
		api.must("GET", project+"/tasks/"+itoa(task), nil, http.StatusOK, &got)
		switch got.Status {
		case "success", "error", "stopped":
			status = got.Status
			return nil
		}
		return fmt.Errorf("task %d is %s", task, got.Status)
	})
	return status
}

// waitOutput waits for a task's stored output to contain want.
func waitOutput(t *testing.T, api *apiClient, project string, task int64, want string) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("task %d printed %q", task, want), func() error {
		if _, raw := api.call("GET", project+"/tasks/"+itoa(task)+"/raw", nil); !strings.Contains(string(raw), want) {
			return fmt.Errorf("output so far: %s", raw)
		}
		return nil
	})
}
