package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/store"
)

// fakeKubelet plays the kubelet for the Jobs of some namespaces: each Job
// it sees created "runs" for a moment and then succeeds. It counts the
// Jobs of each task (a task run twice would have two) and the most Jobs
// of a namespace running at once.
type fakeKubelet struct {
	k8s client.Client
	run time.Duration

	mu      sync.Mutex
	jobs    map[string]int // namespace/task → Jobs created
	running map[string]int // namespace → Jobs running now
	most    map[string]int // namespace → most Jobs running at once
	errs    []error
	wg      sync.WaitGroup
}

func startFakeKubelet(t *testing.T, e *apiEnv, run time.Duration, namespaces ...string) *fakeKubelet {
	t.Helper()
	wc, err := client.NewWithWatch(e.Config, client.Options{Scheme: e.K8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{k8s: e.K8s, run: run, jobs: map[string]int{}, running: map[string]int{}, most: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	for _, ns := range namespaces {
		w, err := wc.Watch(ctx, &batchv1.JobList{}, client.InNamespace(ns), client.HasLabels{launch.LabelTask})
		if err != nil {
			t.Fatal(err)
		}
		k.wg.Go(func() { k.watch(ctx, ns, w) })
	}
	t.Cleanup(func() { cancel(); k.wg.Wait() })
	return k
}

func (k *fakeKubelet) fail(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.errs = append(k.errs, err)
}

func (k *fakeKubelet) watch(ctx context.Context, ns string, w watch.Interface) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				k.fail(fmt.Errorf("the watch of Jobs in %s ended", ns))
				return
			}
			job, isJob := ev.Object.(*batchv1.Job)
			if ev.Type != watch.Added || !isJob {
				continue
			}
			k.mu.Lock()
			k.jobs[ns+"/"+job.Labels[launch.LabelTask]]++
			k.running[ns]++
			k.most[ns] = max(k.most[ns], k.running[ns])
			k.mu.Unlock()
			k.wg.Go(func() { k.complete(ctx, job) })
		}
	}
}

// complete lets the Job's pod "run", then reports it succeeded.
func (k *fakeKubelet) complete(ctx context.Context, job *batchv1.Job) {
	select {
	case <-time.After(k.run):
	case <-ctx.Done():
		return
	}
	k.mu.Lock()
	k.running[job.Namespace]-- // before the manager can hear of it
	k.mu.Unlock()
	for try := 0; ; try++ {
		current := &batchv1.Job{}
		err := k.k8s.Get(ctx, client.ObjectKeyFromObject(job), current)
		if err == nil {
			current.Status.Succeeded = 1
			err = k.k8s.Status().Update(ctx, current)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		if try == 20 {
			k.fail(fmt.Errorf("completing Job %s/%s: %w", job.Namespace, job.Name, err))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Item 5: tasks are created through the API at 100 a second (5 s in `make
// test`, a minute under `make soak`) in three projects whose
// max_parallel_tasks are 2, 5 and 10, while a fake kubelet runs their
// Jobs for 200 ms each. Every task runs exactly once (one Job), ends in
// success, and no project ever has more Jobs running than its limit.
func TestLoad_100TaskCreationsASecondRunEachTaskOnceWithinTheLimits(t *testing.T) {
	e := startEnv(t)
	seconds := 5
	if os.Getenv("BASTION_SOAK") != "" {
		seconds = 60
	}
	const rate = 100
	limits := []int{2, 5, 10}
	var projects []*tplProject
	var templates []int64
	var namespaces []string
	for _, limit := range limits {
		p := newTplProject(t, e)
		p.b.must("PUT", p.path(""), map[string]any{"id": p.pid, "name": "Load", "max_parallel_tasks": limit}, http.StatusNoContent, nil)
		tpl := p.createTemplate(t, fmt.Sprintf("Load %d", limit), nil)
		projects, templates, namespaces = append(projects, p), append(templates, tpl.ID), append(namespaces, p.ns)
	}
	kubelet := startFakeKubelet(t, e, 200*time.Millisecond, namespaces...)

	// One creation every 10 ms, handed to 16 clients so that a slow answer
	// does not slow the rate; project by turn, weighted by its limit. The
	// rate reached is logged: on a shared two-core machine the API answers
	// fewer than 100 a second (each creation allocates an id, creates the
	// Task and waits for the cache), so the clients fall behind the ticker.
	total := seconds * rate
	weights := []int{0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2} // 2:5:10
	type created struct {
		project int
		id      int64
	}
	jobs := make(chan int)
	results := make(chan created, total)
	var failed atomic.Int64
	var clients sync.WaitGroup
	for range 16 {
		clients.Go(func() {
			for n := range jobs {
				pi := weights[n%len(weights)]
				p := projects[pi]
				var task apiTask
				code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": templates[pi]})
				if code != http.StatusCreated || jsonInto(data, &task) != nil {
					failed.Add(1)
					t.Errorf("POST /tasks = %d %s", code, data)
					continue
				}
				results <- created{pi, task.ID}
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(time.Second / rate)
	for n := range total {
		<-tick.C
		jobs <- n
	}
	tick.Stop()
	close(jobs)
	clients.Wait()
	creating := time.Since(start)
	close(results)
	if failed.Load() > 0 {
		t.Fatalf("%d creations failed", failed.Load())
	}
	// Now, not only at the end: the soak takes minutes more to drain.
	t.Logf("%d tasks created in %v (%.0f/s offered at %d/s)", total, creating.Round(time.Millisecond), float64(total)/creating.Seconds(), rate)
	want := map[int][]int64{}
	for c := range results {
		want[c.project] = append(want[c.project], c.id)
	}

	// Every task ends in success; the store keeps its summary even after
	// retention prunes the Task object.
	deadline := time.Now().Add(time.Duration(seconds)*20*time.Second + 2*time.Minute)
	for pi, p := range projects {
		for {
			sums, err := e.Store.ListTaskSummaries(t.Context(), p.pid, store.SummaryFilter{Status: "success"}, 0, total+1)
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) == len(want[pi]) {
				break
			}
			if len(sums) > len(want[pi]) {
				t.Fatalf("project %d: %d successful tasks, but only %d were created", p.pid, len(sums), len(want[pi]))
			}
			if time.Now().After(deadline) {
				t.Fatalf("project %d (limit %d): %d of %d tasks succeeded in time", p.pid, limits[pi], len(sums), len(want[pi]))
			}
			time.Sleep(200 * time.Millisecond)
		}
		for _, id := range want[pi] {
			s, err := e.Store.TaskSummary(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id})
			if err != nil || s.Status != "success" {
				t.Fatalf("task %d of project %d: %+v, %v", id, p.pid, s.Status, err)
			}
		}
	}
	done := time.Since(start)
	time.Sleep(500 * time.Millisecond) // a second run, if any, would have a Job by now

	kubelet.mu.Lock()
	defer kubelet.mu.Unlock()
	for _, err := range kubelet.errs {
		t.Error(err)
	}
	jobsSeen := 0
	for key, n := range kubelet.jobs {
		jobsSeen += n
		if n != 1 {
			t.Errorf("task %s ran %d times", key, n)
		}
	}
	if jobsSeen != total {
		t.Errorf("%d Jobs for %d tasks", jobsSeen, total)
	}
	for pi, ns := range namespaces {
		if kubelet.most[ns] > limits[pi] {
			t.Errorf("project with max_parallel_tasks %d had %d Jobs running at once", limits[pi], kubelet.most[ns])
		}
	}
	t.Logf("%d tasks created in %v (%.0f/s); all ran once and succeeded after %v; most running at once per project: %v (limits %v)",
		total, creating.Round(time.Millisecond), float64(total)/creating.Seconds(), done.Round(time.Millisecond),
		[]int{kubelet.most[namespaces[0]], kubelet.most[namespaces[1]], kubelet.most[namespaces[2]]}, limits)
}

func jsonInto(data []byte, v any) error { return json.Unmarshal(data, v) }
