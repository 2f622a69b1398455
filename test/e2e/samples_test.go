package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// orderingFailure is how a task that started before its inputs existed
// used to fail (`template "ping" not found`).
var orderingFailure = regexp.MustCompile(`^(template|repository|inventory|environment|key|secret|build task) "[^"]+" not found`)

// The samples applied in one step to a fresh `bastion dev`, as a GitOps
// tool would: no task fails for ordering. Then `kubectl delete template`
// takes the template's task along, though `bastion dev` runs no garbage
// collector: the cascade is the Template controller's.
func TestDev_samplesApplyInOneStepAndKubectlDeleteCascades(t *testing.T) {
	t.Parallel()
	dev := startDev(t, t.TempDir())
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	if out, err := kubectl(t, kubeconfig, "", "apply", "-k", "../../config/samples"); err != nil {
		t.Fatalf("kubectl apply -k config/samples: %v\n%s", err, out)
	}
	state := func() string {
		out, _ := kubectl(t, kubeconfig, "", "-n", "bastion-demo", "get", "task", "ping-1", "-o", "jsonpath={.status.status}|{.status.message}")
		return out
	}
	eventually(t, 60*time.Second, "ping-1 left the queue", func() error {
		status, message, _ := strings.Cut(state(), "|")
		if orderingFailure.MatchString(message) {
			t.Fatalf("ping-1 failed for ordering: %s", message)
		}
		if status == "" || status == "waiting" {
			return fmt.Errorf("ping-1 is %q: %s", status, message)
		}
		return nil
	})

	if out, err := kubectl(t, kubeconfig, "", "-n", "bastion-demo", "delete", "template", "ping", "--timeout=60s"); err != nil {
		t.Fatalf("kubectl delete template ping: %v\n%s", err, out)
	}
	out, err := kubectl(t, kubeconfig, "", "-n", "bastion-demo", "get", "task", "ping-1")
	if err == nil || !strings.Contains(out, "NotFound") {
		t.Fatalf("the task of the deleted template is still there: %v\n%s", err, out)
	}
}
