package apiserver

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/metrics"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runspec"
	"github.com/bastion-dev/bastion/internal/store"
)

// maxBatchBytes bounds one runner request: 1,000 lines of up to 1 MiB.
const maxBatchBytes = 1<<30 + 1<<20

// runnerEvents receives runners' batches (internal/runproto): it stores
// the lines, publishes them live, records phases and commits on the Task,
// and answers with the ack and the user's confirm or stop.
type runnerEvents struct {
	client client.Client // cached reads of Tasks and Projects; status writes
	reader client.Reader // reads around the cache: the input Secret's token
	store  store.Store
	hub    *hub.Hub
	log    logr.Logger // the API's logger when zero

	mu        sync.Mutex
	tokens    map[types.UID]string      // task UID → token, read once
	published map[types.UID]int64       // task UID → last line sent to the hub
	locks     map[types.UID]*sync.Mutex // one request per task at a time
	failing   map[types.UID]bool        // tasks whose last batch could not be stored
}

func newRunnerEvents(opts Options) *runnerEvents {
	return &runnerEvents{client: opts.Client, reader: opts.Reader, store: opts.Store, hub: opts.Hub,
		tokens: map[types.UID]string{}, published: map[types.UID]int64{}, locks: map[types.UID]*sync.Mutex{},
		failing: map[types.UID]bool{}}
}

func (e *runnerEvents) routes() chi.Router {
	r := chi.NewRouter()
	r.Post("/tasks/{namespace}/{name}/events", e.receive)
	return r
}

func (e *runnerEvents) receive(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	task := &bastionv1.Task{}
	key := client.ObjectKey{Namespace: chi.URLParam(r, "namespace"), Name: chi.URLParam(r, "name")}
	if err := e.client.Get(ctx, key, task); err != nil {
		if apierrors.IsNotFound(err) {
			fail(w, http.StatusNotFound, "task not found")
			return
		}
		fail(w, http.StatusServiceUnavailable, "reading the task: "+err.Error())
		return
	}
	if ok, err := e.authorized(r, task); err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	} else if !ok {
		fail(w, http.StatusUnauthorized, "not this task's runner")
		return
	}

	var batch runproto.Batch
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBatchBytes)).Decode(&batch); err != nil {
		fail(w, http.StatusBadRequest, "bad batch: "+err.Error())
		return
	}
	taskKey, err := e.taskKey(r, task)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}

	ack, err := e.storeLines(r, task, taskKey, batch.Lines)
	e.noteStoreHealth(task, taskKey, ack, err)
	if err != nil {
		// The runner keeps the lines and sends them again.
		fail(w, http.StatusServiceUnavailable, "storing output: "+err.Error())
		return
	}
	if err := e.record(r, task, batch); err != nil {
		fail(w, http.StatusServiceUnavailable, "recording the run: "+err.Error())
		return
	}
	respond(w, http.StatusOK, runproto.Reply{Ack: ack, Confirm: task.Spec.Confirmed, Stop: string(task.Spec.Stop)})
}

// noteStoreHealth logs when a task's output stops being stored and when
// it is stored again. The runner keeps unacknowledged lines and retries
// quietly, so without this an outage of the store (PostgreSQL restarting,
// a full disk) would be visible nowhere on the manager's side. One line
// per change rather than per retry: a runner retries every two seconds.
func (e *runnerEvents) noteStoreHealth(task *bastionv1.Task, key store.TaskKey, ack int64, err error) {
	e.mu.Lock()
	was := e.failing[task.UID]
	if err != nil {
		e.failing[task.UID] = true
	} else {
		delete(e.failing, task.UID)
	}
	e.mu.Unlock()
	log := e.log
	if log.GetSink() == nil {
		log = logAPI()
	}
	switch {
	case err != nil && !was:
		log.Error(err, "cannot store a runner's output; the runner keeps its lines and retries",
			"namespace", task.Namespace, "task", task.Name, "project", key.ProjectID, "id", key.TaskID)
	case err == nil && was:
		log.Info("storing a runner's output again", "namespace", task.Namespace, "task", task.Name,
			"project", key.ProjectID, "id", key.TaskID, "stored", ack)
	}
}

// authorized compares the bearer token with the one the engine minted for
// this task, in constant time.
func (e *runnerEvents) authorized(r *http.Request, task *bastionv1.Task) (bool, error) {
	given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || given == "" {
		return false, nil
	}
	e.mu.Lock()
	want, cached := e.tokens[task.UID]
	e.mu.Unlock()
	if !cached {
		secret := &corev1.Secret{}
		name := task.Status.RunName + "-input"
		if err := e.reader.Get(r.Context(), client.ObjectKey{Namespace: task.Namespace, Name: name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil // finished: its token is gone
			}
			return false, fmt.Errorf("reading the task's token: %w", err)
		}
		want = string(secret.Data[runspec.TokenFile])
		e.mu.Lock()
		e.tokens[task.UID] = want
		e.mu.Unlock()
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1, nil
}

// taskKey is the task's /api identity in the store.
func (e *runnerEvents) taskKey(r *http.Request, task *bastionv1.Task) (store.TaskKey, error) {
	taskID, ok := ids.FromLabels(task)
	if !ok {
		return store.TaskKey{}, errors.New("the task has no id yet")
	}
	project := &bastionv1.Project{}
	name := bastionv1.ProjectOfNamespace(task.Namespace)
	if err := e.client.Get(r.Context(), client.ObjectKey{Name: name}, project); err != nil {
		return store.TaskKey{}, fmt.Errorf("reading the task's project: %w", err)
	}
	projectID, ok := ids.FromLabels(project)
	if !ok {
		return store.TaskKey{}, errors.New("the task's project has no id yet")
	}
	return store.TaskKey{ProjectID: projectID, TaskID: taskID}, nil
}

// storeLines appends the batch and publishes, once each and in order,
// the lines that are now stored without a gap. Requests of one task are
// taken one at a time, so a retry that overlaps a slow request cannot
// publish a line twice.
func (e *runnerEvents) storeLines(r *http.Request, task *bastionv1.Task, key store.TaskKey, lines []runproto.Line) (int64, error) {
	ctx := r.Context()
	lock := e.taskLock(task.UID)
	lock.Lock()
	defer lock.Unlock()

	e.mu.Lock()
	from, known := e.published[task.UID]
	e.mu.Unlock()
	if !known {
		// First batch this manager sees (or it restarted): what is stored
		// was published before, by this process or an earlier one.
		var err error
		if from, err = e.store.LastSeq(ctx, key); err != nil {
			return 0, err
		}
	}
	if len(lines) > 0 {
		batch := make([]store.Line, len(lines))
		for i, l := range lines {
			batch[i] = store.Line{Seq: l.Seq, Time: l.Time, Output: l.Output}
		}
		if err := e.store.AppendLines(ctx, key, batch); err != nil {
			return 0, err
		}
	}
	ack, err := e.store.LastSeq(ctx, key)
	if err != nil {
		return 0, err
	}
	if ack > from {
		metrics.OutputLines.Add(float64(ack - from))
	}
	if ack > from && e.hub != nil {
		if err := e.publish(ctx, key, from, ack, lines); err != nil {
			return 0, err
		}
	}
	e.mu.Lock()
	e.published[task.UID] = max(ack, from)
	e.mu.Unlock()
	return ack, nil
}

// publish sends lines from+1..to to the hub: from the batch when it holds
// them all (the usual case), else read back from the store (a resend that
// filled a gap).
func (e *runnerEvents) publish(ctx context.Context, key store.TaskKey, from, to int64, lines []runproto.Line) error {
	bySeq := make(map[int64]runproto.Line, len(lines))
	for _, l := range lines {
		bySeq[l.Seq] = l
	}
	complete := true
	for seq := from + 1; seq <= to && complete; seq++ {
		_, complete = bySeq[seq]
	}
	if complete {
		for seq := from + 1; seq <= to; seq++ {
			l := bySeq[seq]
			e.hub.Publish(hub.Log(key.ProjectID, key.TaskID, l.Time, l.Output))
		}
		return nil
	}
	stored, err := e.store.Lines(ctx, key, int(from), int(to-from))
	if err != nil {
		return err
	}
	for _, l := range stored {
		e.hub.Publish(hub.Log(key.ProjectID, key.TaskID, l.Time, l.Output))
	}
	return nil
}

func (e *runnerEvents) taskLock(uid types.UID) *sync.Mutex {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.locks[uid] == nil {
		e.locks[uid] = &sync.Mutex{}
	}
	return e.locks[uid]
}

// record puts the runner's phase, commit and exit message on the Task.
func (e *runnerEvents) record(r *http.Request, task *bastionv1.Task, batch runproto.Batch) error {
	ctx := r.Context()
	if batch.Exit != nil && batch.Exit.Message != "" && task.Annotations[bastionv1.AnnotationRunMessage] != batch.Exit.Message {
		patch := client.MergeFrom(task.DeepCopy())
		if task.Annotations == nil {
			task.Annotations = map[string]string{}
		}
		task.Annotations[bastionv1.AnnotationRunMessage] = batch.Exit.Message
		if err := e.client.Patch(ctx, task, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	before := task.DeepCopy()
	if batch.Commit != nil {
		task.Status.CommitHash, task.Status.CommitMessage = batch.Commit.Hash, batch.Commit.Message
	}
	switch {
	case batch.Phase == runproto.PhaseWaitingConfirmation && task.Status.Status == bastionv1.TaskRunning:
		task.Status.Status = bastionv1.TaskWaitingConfirmation
	case batch.Phase == runproto.PhaseRunning && task.Status.Status == bastionv1.TaskConfirmed:
		task.Status.Status = bastionv1.TaskRunning
	}
	if task.Status.CommitHash == before.Status.CommitHash && task.Status.Status == before.Status.Status {
		return nil
	}
	// The optimistic lock: if the reconciler moved the task on meanwhile,
	// the request fails and the runner sends the batch again (its lines are
	// stored once whatever happens).
	err := e.client.Status().Patch(ctx, task, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	return client.IgnoreNotFound(err)
}
