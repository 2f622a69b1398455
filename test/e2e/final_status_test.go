package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// finalLatencyLimit is how soon after a task's last output line its final
// status must reach the API and a websocket client (issue #20).
const finalLatencyLimit = 2 * time.Second

// statusFrame is a websocket frame with what this test reads of it.
type statusFrame struct {
	Type      string    `json:"type"`
	TaskID    int64     `json:"task_id"`
	ProjectID int64     `json:"project_id"`
	Status    string    `json:"status"`
	Time      time.Time `json:"time"` // a log line's, as its runner read it
}

func finished(status string) bool {
	return status == "success" || status == "error" || status == "stopped"
}

// taskClock records, per task, the time of its last output line and when
// its final status was first seen.
type taskClock struct {
	mu       sync.Mutex
	lastLine map[int64]time.Time
	final    map[int64]time.Time
	status   map[int64]string
	// seen is each task's frames as this client received them, for the
	// account of the slowest task (timeline).
	seen map[int64][]string
}

func newTaskClock() *taskClock {
	return &taskClock{lastLine: map[int64]time.Time{}, final: map[int64]time.Time{}, status: map[int64]string{}, seen: map[int64][]string{}}
}

// note records that a frame of task id arrived now.
func (c *taskClock) note(id int64, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[id] = append(c.seen[id], time.Now().Format("15:04:05.000")+" "+what)
}

// timeline is what this client received of task id, in order.
func (c *taskClock) timeline(id int64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[id]
}

func (c *taskClock) line(id int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.lastLine[id]) {
		c.lastLine[id] = at
	}
}

func (c *taskClock) ended(id int64, status string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.final[id]; !seen {
		c.final[id], c.status[id] = at, status
	}
}

func (c *taskClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.final)
}

func (c *taskClock) saw(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.final[id]
	return ok
}

// readFrames records the frames of project on conn until it closes, and
// names each task that finished on told, if not nil.
func readFrames(conn *websocket.Conn, project int64, lines, finals *taskClock, told chan<- int64) {
	if told != nil {
		defer close(told)
	}
	for {
		var f statusFrame
		if err := conn.ReadJSON(&f); err != nil {
			return
		}
		if f.ProjectID != project {
			continue
		}
		if lines != nil {
			lines.note(f.TaskID, fmt.Sprintf("%s %s (line read at %s)", f.Type, f.Status, f.Time.Format("15:04:05.000")))
		}
		switch {
		case f.Type == "log" && lines != nil:
			lines.line(f.TaskID, f.Time)
		case f.Type == "update" && finished(f.Status):
			first := !finals.saw(f.TaskID)
			finals.ended(f.TaskID, f.Status, time.Now())
			if first && told != nil {
				told <- f.TaskID
			}
		}
	}
}

// confirmFinals asks the API for each task the websocket said finished,
// until the API says so too, and records when it did.
func confirmFinals(a *apiClient, path string, told <-chan int64, finals *taskClock) error {
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for id := range told {
		wg.Go(func() {
			for {
				var task struct {
					Status string `json:"status"`
				}
				if err := callJSON(a, http.MethodGet, fmt.Sprintf("%s/tasks/%d", path, id), nil, http.StatusOK, &task); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				if finished(task.Status) {
					finals.ended(id, task.Status, time.Now())
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// worstLatency is the longest time from a task's last line to its final
// status seen by finals, over ids; missing names the tasks without either.
func worstLatency(lines, finals *taskClock, ids []int64) (worst time.Duration, of int64, missing []int64) {
	lines.mu.Lock()
	defer lines.mu.Unlock()
	finals.mu.Lock()
	defer finals.mu.Unlock()
	for _, id := range ids {
		line, okLine := lines.lastLine[id]
		final, okFinal := finals.final[id]
		if !okLine || !okFinal {
			missing = append(missing, id)
			continue
		}
		if d := final.Sub(line); d > worst {
			worst, of = d, id
		}
	}
	return worst, of, missing
}

// 200 short tasks run at once, each a real runner process of `bastion
// dev`. Each one's final status reaches a websocket client and the API's
// task within 2 s of its last output line (the runner's exit travels with
// that line, and the reconciler finishes the task from it, ahead of the
// tasks still waiting to start). A client that was away while tasks
// finished finds their final statuses when it reconnects and reads them
// again, as the console does, and hears the next task's end on its new
// socket.
func TestDev_finalStatusOf200ShortTasksArrivesWithin2sOfTheirLastLine(t *testing.T) {
	// Not t.Parallel: the 2 s bound holds for a machine that runs this
	// alone, and `make test-go` runs it before every other Go test. Beside
	// the apiserver package's envtest servers, the worst latency doubled,
	// and went past the bound once in CI (docs/benchmarks.md, "The
	// final-status bound needs the machine to itself").
	const tasks = 200
	repo := gittest.NewRepo(t)
	repo.WriteFile("short.sh", "#!/bin/bash\necho \"short task, its only line\"\n", true)
	repo.Commit("short")

	dev := startDev(t, t.TempDir())
	dev.waitReady()
	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	project := api.newLocalProject("Short", repo.Path, "localhost\n")
	var template struct {
		ID int64 `json:"id"`
	}
	api.must("POST", project.Path+"/templates", map[string]any{"name": "Short", "app": "bash", "playbook": "short.sh",
		"repository_id": project.Repository, "environment_id": project.Environment}, http.StatusCreated, &template)

	lines, wsFinals, apiFinals, awayFinals := newTaskClock(), newTaskClock(), newTaskClock(), newTaskClock()
	watcher, away := api.websocket(), api.websocket()
	told, confirmed := make(chan int64, tasks+1), make(chan error, 1)
	go readFrames(watcher, project.ID, lines, wsFinals, told)
	go func() { confirmed <- confirmFinals(api, project.Path, told, apiFinals) }()
	awayDone := make(chan struct{})
	go func() { readFrames(away, project.ID, nil, awayFinals, nil); close(awayDone) }()

	// All at once: a few clients post them in parallel.
	ids := make([]int64, tasks)
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < tasks; i += 8 {
				var task struct {
					ID int64 `json:"id"`
				}
				if err := callJSON(api, http.MethodPost, project.Path+"/tasks", map[string]any{"template_id": template.ID}, http.StatusCreated, &task); err != nil {
					errs <- err
					return
				}
				ids[i] = task.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The second client goes away as soon as the first task has finished,
	// and misses the rest.
	eventually(t, 2*time.Minute, "a first task to finish", func() error {
		if wsFinals.count() == 0 {
			return fmt.Errorf("no task finished yet")
		}
		return nil
	})
	away.Close()
	<-awayDone

	eventually(t, 5*time.Minute, "every task's final status on the websocket and in the API", func() error {
		if n, m := wsFinals.count(), apiFinals.count(); n < tasks || m < tasks {
			return fmt.Errorf("%d of %d tasks finished on the websocket, %d in the API", n, tasks, m)
		}
		return nil
	})
	watcher.Close()
	if err := <-confirmed; err != nil {
		t.Fatal(err)
	}

	for _, id := range ids {
		if s := wsFinals.status[id]; s != "success" {
			t.Errorf("task %d ended %q, want success", id, s)
		}
	}
	for name, finals := range map[string]*taskClock{"websocket": wsFinals, "API": apiFinals} {
		worst, of, missing := worstLatency(lines, finals, ids)
		t.Logf("worst latency from a task's last line to its final status in the %s: %s (task %d), over %d tasks", name, worst, of, tasks)
		fmt.Printf("final status of %d short tasks: worst latency in the %s %s (task %d)\n", tasks, name, worst, of)
		if len(missing) > 0 {
			t.Errorf("tasks without a last line or a final status in the %s: %v", name, missing)
		}
		if worst > finalLatencyLimit/2 {
			// What the watching client received of the slowest task, so
			// that a slow run says where its time went.
			t.Logf("task %d, as the websocket client received it:\n%s", of, strings.Join(lines.timeline(of), "\n"))
		}
		if worst > finalLatencyLimit {
			t.Errorf("task %d's final status reached the %s %s after its last line, over %s", of, name, worst, finalLatencyLimit)
		}
	}

	// Back: the statuses missed while away are there when read again,
	// and the new socket hears the next task finish.
	var missed []int64
	for _, id := range ids {
		if !awayFinals.saw(id) {
			missed = append(missed, id)
		}
	}
	if len(missed) == 0 {
		t.Fatal("the client that went away missed no task's end: the test proves nothing about reconnecting")
	}
	back := api.websocket()
	backFinals := newTaskClock()
	go readFrames(back, project.ID, nil, backFinals, nil)
	for _, id := range missed {
		var task struct {
			Status string `json:"status"`
		}
		api.must("GET", fmt.Sprintf("%s/tasks/%d", project.Path, id), nil, http.StatusOK, &task)
		if task.Status != "success" {
			t.Errorf("task %d, missed while away, is %q when read on return, want success", id, task.Status)
		}
	}
	var next struct {
		ID int64 `json:"id"`
	}
	api.must("POST", project.Path+"/tasks", map[string]any{"template_id": template.ID}, http.StatusCreated, &next)
	eventually(t, time.Minute, "the next task's end on the new socket", func() error {
		if !backFinals.saw(next.ID) {
			return fmt.Errorf("task %d's end not heard on the new socket", next.ID)
		}
		return nil
	})
	t.Logf("the returning client had missed %d tasks' ends; each was success when read again", len(missed))
}

// callJSON sends body (if not nil) and decodes the answer into out,
// which must come with status want; unlike apiClient.must, it is safe to
// call from any goroutine.
func callJSON(a *apiClient, method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s = %s", method, path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
