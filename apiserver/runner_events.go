package apiserver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cachewait"
	"github.com/bastion-dev/bastion/internal/metrics"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runspec"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
)

// runnerEvents receives runners' batches (internal/runproto): it stores
// the lines, records the facts of the run (phase, commit, exit) in the
// Task's status.run, and answers with the ack and the user's confirm or
// stop. It does not publish the lines: a runner may post each batch to
// another replica, so every replica's linePublisher reads them from the
// store when the store's line feed reports them (line_publisher.go).
//
// What it keeps per task (the token, the last ack, whether the store
// failed) lives in one taskState, dropped the moment the Task is seen
// finished or deleted: a finished task's token opens nothing, even though
// this cache read it, and 5,000 tasks leave nothing behind.
type runnerEvents struct {
	client client.Client  // cached reads of Tasks and Projects; status writes
	reader client.Reader  // reads around the cache: the input Secret's token
	tokens *runtoken.Book // the tokens of the runs this process started
	store  store.Store
	log    logr.Logger // the API's logger when zero

	mu    sync.Mutex
	tasks map[types.UID]*taskState
}

// taskState is what the endpoint keeps about one running task. Its lock
// takes the task's requests one at a time, so a retry that overlaps a
// slow request cannot publish a line twice.
type taskState struct {
	mu      sync.Mutex
	token   string // read once from the input Secret; "" until then
	acked   int64  // the last ack this replica gave, for the count of lines stored
	failing bool   // the last batch could not be stored
	// wroteRun: this replica has written the task's status.run (record).
	wroteRun bool
}

func newRunnerEvents(opts Options) *runnerEvents {
	e := &runnerEvents{client: opts.Client, reader: opts.Reader, store: opts.Store, tokens: opts.RunTokens,
		tasks: map[types.UID]*taskState{}}
	if opts.Informers != nil {
		if err := e.forgetEnded(context.Background(), opts.Informers); err != nil {
			// Then the state of a task goes only when a request of it
			// meets it finished; nothing is unsafe, but it may linger.
			logAPI().Error(err, "the runner endpoint cannot watch Tasks; state of finished tasks is freed late")
		}
	}
	return e
}

// forgetEnded drops a task's state as soon as the cache sees it finished
// or deleted. The cache is updated before its handlers run, so a request
// that makes state after this fired still meets the task finished (see
// state) and drops it itself.
func (e *runnerEvents) forgetEnded(ctx context.Context, informers cache.Informers) error {
	informer, err := informers.GetInformer(ctx, &bastionv1.Task{})
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if task, ok := obj.(*bastionv1.Task); ok && ended(task) {
				e.forget(task.UID)
			}
		},
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			if task, ok := obj.(*bastionv1.Task); ok {
				e.forget(task.UID)
			}
		},
	})
	return err
}

// ended reports whether a task's runner may no longer report: it
// finished (its input Secret, with the token, is deleted next) or is
// being deleted.
func ended(task *bastionv1.Task) bool {
	return task.Status.Status.Finished() || !task.DeletionTimestamp.IsZero()
}

func (e *runnerEvents) forget(uid types.UID) {
	e.tokens.Forget(uid)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.tasks[uid]; ok {
		delete(e.tasks, uid)
		metrics.RunnerTasks.Dec()
	}
}

// holds reports whether st is still the state of the task uid.
func (e *runnerEvents) holds(uid types.UID, st *taskState) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tasks[uid] == st
}

// state is the state of the live task at key, made on first use, or nil
// (and the task, for a message) when the task is unknown or ended.
func (e *runnerEvents) state(ctx context.Context, key client.ObjectKey) (*bastionv1.Task, *taskState, error) {
	task := &bastionv1.Task{}
	if err := e.client.Get(ctx, key, task); err != nil {
		return nil, nil, err
	}
	if ended(task) {
		e.forget(task.UID)
		return task, nil, nil
	}
	e.mu.Lock()
	st, ok := e.tasks[task.UID]
	if !ok {
		st = &taskState{}
		e.tasks[task.UID] = st
		metrics.RunnerTasks.Inc()
	}
	e.mu.Unlock()
	if ok {
		return task, st, nil
	}
	// Made just now: if the task finished meanwhile, the handler that
	// forgets it may have run already, so look again and drop it here.
	again := &bastionv1.Task{}
	if err := e.client.Get(ctx, key, again); err != nil || ended(again) || again.UID != task.UID {
		e.forget(task.UID)
		return task, nil, client.IgnoreNotFound(err)
	}
	return again, st, nil
}

// finishedMessage answers a runner of a finished task.
const finishedMessage = "the task has finished; its runner's token no longer works"

func (e *runnerEvents) routes() chi.Router {
	r := chi.NewRouter()
	r.Post("/tasks/{namespace}/{name}/events", e.receive)
	return r
}

func (e *runnerEvents) receive(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	key := client.ObjectKey{Namespace: chi.URLParam(r, "namespace"), Name: chi.URLParam(r, "name")}
	task, st, err := e.state(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		fail(w, http.StatusNotFound, "task not found")
		return
	case err != nil:
		fail(w, http.StatusServiceUnavailable, "reading the task: "+err.Error())
		return
	case st == nil:
		// Checked before the token: a finished task has none to check.
		fail(w, http.StatusUnauthorized, finishedMessage)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !e.holds(task.UID, st) {
		// The task ended while this request waited for the one before.
		fail(w, http.StatusUnauthorized, finishedMessage)
		return
	}
	if ok, err := e.authorized(r, task, st); err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	} else if !ok {
		fail(w, http.StatusUnauthorized, "not this task's runner")
		return
	}

	batch, ok := readBatch(w, r)
	if !ok {
		return
	}
	taskKey, err := storeKey(r.Context(), e.client, task)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}

	ack, err := e.storeLines(r, st, taskKey, batch.Lines)
	e.noteStoreHealth(task, st, taskKey, ack, err)
	if err != nil {
		// The runner keeps the lines and sends them again.
		fail(w, http.StatusServiceUnavailable, "storing output: "+err.Error())
		return
	}
	if err := e.record(r, st, task, batch, ack); err != nil {
		fail(w, http.StatusServiceUnavailable, "recording the run: "+err.Error())
		return
	}
	respond(w, http.StatusOK, runproto.Reply{Ack: ack, Confirm: task.Spec.Confirmed, Stop: string(task.Spec.Stop)})
}

// readBatch decodes a batch within the caps of runproto: 413 for a body
// over MaxBatchBytes or a line over MaxLineBytes (the runner splits both,
// so only a runner that ignores the protocol meets them); ok false has
// answered.
func readBatch(w http.ResponseWriter, r *http.Request) (runproto.Batch, bool) {
	var batch runproto.Batch
	body, err := readBody(http.MaxBytesReader(w, r.Body, runproto.MaxBatchBytes), r.ContentLength)
	if err == nil {
		batch, err = runproto.DecodeBatch(body)
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the batch is larger than %d bytes; send fewer lines at a time", tooBig.Limit))
		return batch, false
	case err != nil:
		fail(w, http.StatusBadRequest, "bad batch: "+err.Error())
		return batch, false
	}
	switch batch.Phase {
	case "", runproto.PhaseRunning, runproto.PhaseWaitingConfirmation:
	default:
		// The Task's schema would refuse it too, but later, at the cost
		// of a write and a read of the apiserver each time it is sent.
		fail(w, http.StatusBadRequest, fmt.Sprintf("unknown phase; a batch's phase is %q, %q or absent",
			runproto.PhaseRunning, runproto.PhaseWaitingConfirmation))
		return batch, false
	}
	for _, l := range batch.Lines {
		if l.Seq < 1 || l.Seq > store.MaxSeq {
			// The store would refuse the batch too, but as a failure to
			// store, which the runner would send again for ever.
			fail(w, http.StatusBadRequest, fmt.Sprintf("line seq %d is out of range; seqs run from 1 to %d", l.Seq, int64(store.MaxSeq)))
			return batch, false
		}
		if l.Stream != "" && l.Stream != runproto.StreamStderr {
			fail(w, http.StatusBadRequest, fmt.Sprintf("line %d has an unknown stream; a line's stream is %q or absent (stdout)", l.Seq, runproto.StreamStderr))
			return batch, false
		}
		if len(l.Output) > runproto.MaxLineBytes {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("line %d is %d bytes, over the %d a line may hold; split it", l.Seq, len(l.Output), runproto.MaxLineBytes))
			return batch, false
		}
	}
	if what, n := oversizedMessage(batch); what != "" {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the %s is %d bytes, over the %d it may hold; cut it", what, n, runproto.MaxLineBytes))
		return batch, false
	}
	return batch, true
}

// readBody reads a body whole, into a buffer of the size it announced
// (within the cap its reader enforces), so a batch is not copied as the
// buffer grows.
func readBody(r io.Reader, announced int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(announced, 0), runproto.MaxBatchBytes)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// oversizedMessage names the first of the batch's commit hash, commit
// message and exit message that is over MaxLineBytes, with its size; ""
// if none is. They end up in the Task's status, so in etcd and in every
// replica's cache: a playbook holding its runner's token must not fill
// them. The runner clips them to this size already (internal/runner).
func oversizedMessage(b runproto.Batch) (string, int) {
	var fields [][2]string
	if b.Commit != nil {
		fields = append(fields, [2]string{"commit hash", b.Commit.Hash}, [2]string{"commit message", b.Commit.Message})
	}
	if b.Exit != nil {
		fields = append(fields, [2]string{"exit message", b.Exit.Message})
	}
	for _, f := range fields {
		if len(f[1]) > runproto.MaxLineBytes {
			return f[0], len(f[1])
		}
	}
	return "", 0
}

// noteStoreHealth logs when a task's output stops being stored and when
// it is stored again. The runner keeps unacknowledged lines and retries
// quietly, so without this an outage of the store (PostgreSQL restarting,
// a full disk) would be visible nowhere on the manager's side. One line
// per change rather than per retry: a runner retries every two seconds.
func (e *runnerEvents) noteStoreHealth(task *bastionv1.Task, st *taskState, key store.TaskKey, ack int64, err error) {
	was := st.failing
	st.failing = err != nil
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
// this task, in constant time. The token is taken once per task, from the
// book when this process started the run, else from the input Secret, and
// kept in its state, which goes when the task ends, before its Secret
// does.
func (e *runnerEvents) authorized(r *http.Request, task *bastionv1.Task, st *taskState) (bool, error) {
	given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || given == "" {
		return false, nil
	}
	if st.token == "" {
		if token, ok := e.tokens.Take(task.UID); ok {
			st.token = token
		}
	}
	if st.token == "" {
		secret := &corev1.Secret{}
		name := bastionv1.TaskInputSecretName(task)
		if err := e.reader.Get(r.Context(), client.ObjectKey{Namespace: task.Namespace, Name: name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil // finished: its token is gone
			}
			return false, fmt.Errorf("reading the task's token: %w", err)
		}
		if !metav1.IsControlledBy(secret, task) {
			// An earlier task's of the same name, not yet replaced by
			// the reconciler: its token is that task's runner's.
			return false, nil
		}
		st.token = string(secret.Data[runspec.TokenFile])
	}
	return st.token != "" && subtle.ConstantTimeCompare([]byte(given), []byte(st.token)) == 1, nil
}

// storeLines appends the batch and returns the ack: every line up to it
// is stored. The caller holds st.mu.
func (e *runnerEvents) storeLines(r *http.Request, st *taskState, key store.TaskKey, lines []runproto.Line) (int64, error) {
	ctx := r.Context()
	if len(lines) > 0 {
		batch := make([]store.Line, len(lines))
		for i, l := range lines {
			batch[i] = store.Line{Seq: l.Seq, Time: l.Time, Output: l.Output, Stderr: l.Stream == runproto.StreamStderr}
		}
		if err := e.store.AppendLines(ctx, key, batch); err != nil {
			return 0, err
		}
	}
	ack, err := e.store.LastSeq(ctx, key)
	if err != nil {
		return 0, err
	}
	countStored(st, lines, ack)
	return ack, nil
}

// countStored adds the lines this batch brought to the count of lines
// stored. The runner sends the lines after its last ack, so the batch's
// first Seq tells what was stored before without reading it; a resend
// after an ack that was lost on another replica may count twice, nothing
// else does.
func countStored(st *taskState, lines []runproto.Line, ack int64) {
	before := st.acked
	if len(lines) > 0 {
		before = max(before, slices.MinFunc(lines, func(a, b runproto.Line) int { return cmp.Compare(a.Seq, b.Seq) }).Seq-1)
	}
	if ack > before {
		metrics.OutputLines.Add(float64(ack - before))
	}
	st.acked = max(st.acked, ack)
}

// record writes the facts of the run that the batch brings (its phase,
// its commit, its exit) into the Task's status.run, and nothing else: the
// task's state is the reconciler's to derive. Each fact goes as a merge
// patch of that field alone under the endpoint's own field manager, with
// no lock: status.run is written by nobody else, so there is nothing to
// overwrite, and a repeated batch writes the same facts again. (A
// server-side apply would have to send every fact each time, known only
// from a cache that may lag behind the last batch, and would remove the
// ones it missed.) The exit is recorded only once every line up to it is
// stored (ack), so a finished task's output is complete.
func (e *runnerEvents) record(r *http.Request, st *taskState, task *bastionv1.Task, batch runproto.Batch, ack int64) error {
	facts := newFacts(task.Status.Run, batch, ack)
	if facts == nil {
		return nil
	}
	ctx := r.Context()
	if task.Status.Run == nil && !st.wroteRun {
		if launched := e.awaitLaunch(ctx, task); launched != nil {
			if ended(launched) {
				return nil // it ended meanwhile: its run's facts are moot
			}
			task = launched
			if facts = newFacts(task.Status.Run, batch, ack); facts == nil {
				return nil
			}
		}
	}
	if task.Status.Run != nil || st.wroteRun {
		// status.run exists (nothing removes it once a fact is in; the
		// cache may not show this replica's last write yet): a JSON patch
		// adds each fact to it, after testing in the same request that
		// the task still has the uid the cache read, which spares
		// sameTask's read.
		body, err := factsPatch(task.UID, facts)
		if err != nil {
			return err
		}
		err = e.patchStatus(ctx, task, types.JSONPatchType, body)
		if !apierrors.IsInvalid(err) {
			return client.IgnoreNotFound(err)
		}
		// Refused: the uid is another task's, or status.run is not there
		// after all. The apiserver does not say which (422, no details),
		// so the way of a first fact tells.
	}
	if err := e.sameTask(ctx, task); err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"run": facts}})
	if err != nil {
		return err
	}
	err = e.patchStatus(ctx, task, types.MergePatchType, body)
	st.wroteRun = st.wroteRun || err == nil
	return client.IgnoreNotFound(err)
}

// launchWait bounds how long a run's first facts wait for the cache to
// show the write that recorded its launch.
const launchWait = 250 * time.Millisecond

// awaitLaunch waits, within launchWait, until the cache shows the task's
// launch, and returns the task as the cache then has it; nil when it did
// not show, or the name is another task's. The reconciler's write that
// records the launch makes status.run, empty, and a runner can report
// before the cache has it: its first facts would then make status.run
// themselves, after a read around the cache (sameTask), and the launch
// write, which expects the task as the reconciler read it, would meet a
// conflict and cost another reconcile and write. Waiting for that write
// instead is a few milliseconds, and the facts then take the JSON patch.
// The lines of the batch are stored already.
func (e *runnerEvents) awaitLaunch(ctx context.Context, task *bastionv1.Task) *bastionv1.Task {
	var launched *bastionv1.Task
	_ = cachewait.Poll(ctx, launchWait, func(ctx context.Context) (bool, error) {
		current := &bastionv1.Task{}
		if err := e.client.Get(ctx, clientKey(task), current); err != nil || current.UID != task.UID {
			return true, nil // gone, or another task's name now: the write below finds out
		}
		if current.Status.Run != nil {
			launched = current
		}
		return launched != nil, nil
	})
	return launched
}

func (e *runnerEvents) patchStatus(ctx context.Context, task *bastionv1.Task, kind types.PatchType, body []byte) error {
	return e.client.Status().Patch(ctx, task, client.RawPatch(kind, body), client.FieldOwner(bastionv1.RunFieldManager))
}

// factsPatch is a JSON patch (RFC 6902) that tests the task's uid, then
// adds each of facts to its status.run.
func factsPatch(uid types.UID, facts *bastionv1.TaskRun) ([]byte, error) {
	data, err := json.Marshal(facts)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	ops := []op{{Op: "test", Path: "/metadata/uid", Value: uid}}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		ops = append(ops, op{Op: "add", Path: "/status/run/" + name, Value: fields[name]})
	}
	return json.Marshal(ops)
}

// madeAgain is the error for facts of a task deleted and made again
// under its name since its runner started.
func madeAgain(task *bastionv1.Task) error {
	return apierrors.NewConflict(bastionv1.GroupVersion.WithResource("tasks").GroupResource(), task.Name,
		fmt.Errorf("the task was made again since this runner started"))
}

// sameTask makes sure that task, as read from the cache, is still the
// task of that name: facts of a run must never land on a task deleted and
// made again under the same name meanwhile (a GitOps re-apply). A status
// merge patch cannot carry the uid as a precondition (the status strategy
// keeps the stored metadata), so the apiserver is asked. Needed only for
// a task's first facts: once status.run exists, record tests the uid in
// its JSON patch.
func (e *runnerEvents) sameTask(ctx context.Context, task *bastionv1.Task) error {
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(bastionv1.GroupVersion.WithKind("Task"))
	if err := e.reader.Get(ctx, client.ObjectKeyFromObject(task), current); err != nil {
		return err
	}
	if current.UID != task.UID {
		return madeAgain(task)
	}
	return nil
}

// newFacts is what the batch says that status.run (as last read) does
// not hold yet; nil when nothing.
func newFacts(known *bastionv1.TaskRun, batch runproto.Batch, ack int64) *bastionv1.TaskRun {
	if known == nil {
		known = &bastionv1.TaskRun{}
	}
	facts := &bastionv1.TaskRun{}
	if batch.Phase != "" && batch.Phase != known.Phase {
		facts.Phase = batch.Phase
	}
	if c := batch.Commit; c != nil && (known.Commit == nil || known.Commit.Hash != c.Hash || known.Commit.Message != c.Message) {
		facts.Commit = &bastionv1.TaskRunCommit{Hash: c.Hash, Message: c.Message}
	}
	if x := batch.Exit; x != nil && known.Exit == nil && storedAll(batch.Lines, ack) {
		facts.Exit = &bastionv1.TaskRunExit{Code: int32(x.Code), Message: x.Message, Lines: ack, Time: metav1.Now()}
	}
	if *facts == (bastionv1.TaskRun{}) {
		return nil
	}
	return facts
}

// storedAll reports whether every line of the batch is stored.
func storedAll(lines []runproto.Line, ack int64) bool {
	for _, l := range lines {
		if l.Seq > ack {
			return false
		}
	}
	return true
}
