package apiserver_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// A Task created again under an earlier one's name meets that task's input
// Secret while it is still there (no garbage collector has deleted it yet).
// The earlier runner's token must not open the new task: its exit would
// finish the new task the moment it starts, without running anything.
func TestRunnerAttack_anEarlierTasksInputSecretOfTheSameNameOpensNothing(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	ctx := t.Context()
	stale := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "again-input"},
		Data: map[string][]byte{runspec.TokenFile: []byte("earlier-runners-token")}}
	if err := e.K8s.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	// Its template is not there yet: the task waits, and is never prepared.
	task := waitingTask(t, e, p.ns, "again")
	eventually(t, 20*time.Second, func() (bool, string) {
		got := &bastionv1.Task{}
		err := e.K8s.Get(ctx, client.ObjectKeyFromObject(task), got)
		return err == nil && got.Labels[bastionv1.LabelID] != "", "the task has no id yet"
	})
	lt := liveTask{ns: p.ns, name: task.Name, eventsRoute: runproto.EventsPath(p.ns, task.Name)}
	body, err := json.Marshal(runproto.Batch{Exit: &runproto.Exit{Code: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if code, answer := postBatch(t, e, lt, "earlier-runners-token", body); code != http.StatusUnauthorized {
		t.Errorf("the earlier task's token = %d %s, want 401", code, answer)
	}
	got := &bastionv1.Task{}
	if err := e.K8s.Get(ctx, client.ObjectKeyFromObject(task), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Run != nil {
		t.Errorf("status.run = %+v, want none: no runner of this task reported", got.Status.Run)
	}
}

// The replica that starts a run checks its runner's token against the one
// its reconciler minted, handed over in memory, and never reads the input
// Secret back for it (that was a read around the cache per task): a token
// written into the Secret afterwards opens nothing. A replica that did not
// start the run reads the Secret (TestHALive_*, where no replica is
// handed the tokens).
func TestRunnerEvents_theReplicaThatStartedARunChecksTheTokenItMinted(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Minted here", nil)
	lt := startLiveTask(t, p, tpl.ID)
	ctx := t.Context()

	task := &bastionv1.Task{}
	if err := e.K8s.Get(ctx, client.ObjectKey{Namespace: lt.ns, Name: lt.name}, task); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := e.K8s.Get(ctx, client.ObjectKey{Namespace: lt.ns, Name: bastionv1.TaskInputSecretName(task)}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data[runspec.TokenFile] = []byte("written-into-the-secret-later")
	if err := e.K8s.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}

	if code, body := postBatch(t, e, lt, "written-into-the-secret-later", batchOf(t, lineAt(1, "forged"))); code != http.StatusUnauthorized {
		t.Fatalf("the Secret's later token = %d %s, want 401: the endpoint read the Secret back", code, body)
	}
	if code, body := postBatch(t, e, lt, lt.token, batchOf(t, lineAt(1, "from the real runner"))); code != http.StatusOK {
		t.Fatalf("the minted token = %d %s, want 200", code, body)
	}
}
