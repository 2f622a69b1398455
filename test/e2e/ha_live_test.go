package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
)

// Issue #21, item 3 and the websocket of item 5: three managers behind
// the round-robin proxy; a task's runner posts through the proxy, which
// for this test sends to the first two replicas only, so its batches land
// on both of them and never on the third. A websocket client connected
// straight to the third replica gets every line once, in order, and the
// task's update frames up to its final status.
func TestHA_aClientOnAReplicaThatGetsNoBatchSeesEveryLineOnceInOrder(t *testing.T) {
	t.Parallel()
	h := startHA(t, 3)
	a, b, c := h.managers[0], h.managers[1], h.managers[2]
	h.proxy.only(a.url, b.url)
	waitFeedListeners(t, h, 3)

	api := h.signIn(a.url)
	const bursts = 30 // 150 lines in bursts of 5, 0.2 s apart: about 30 batches
	cp := newCounterProject(t, api, bursts)
	project := projectID(t, cp.path)
	watch := h.signIn(c.url).websocket()
	servedA, servedB, servedC := h.proxy.servedBy(a.url), h.proxy.servedBy(b.url), h.proxy.servedBy(c.url)

	id := cp.startTask(api, "live")
	var updates []string
	status, lines := followUpdates(t, watch, project, id, 2*time.Minute, &updates)

	if status != "success" {
		t.Fatalf("task %d ended %q, want success (updates %v)", id, status, updates)
	}
	// Every stored line (the runner's own, such as the clone, and the
	// script's), once, in order, all of them before the final update.
	var stored []struct {
		Output string `json:"output"`
	}
	api.must("GET", cp.path+"/tasks/"+itoa(id)+"/output", nil, http.StatusOK, &stored)
	var all, script []string
	for _, l := range stored {
		all = append(all, l.Output)
		if scriptLine.MatchString(l.Output) {
			script = append(script, l.Output)
		}
	}
	if diff := firstDifference(all, lines); diff != "" {
		t.Fatalf("replica %s's client, which received no batch, against the stored output: %s", c.name, diff)
	}
	want := make([]string, bursts*5)
	for i := range want {
		want[i] = fmt.Sprintf("task live line %d", i+1)
	}
	if diff := firstDifference(want, script); diff != "" {
		t.Fatalf("the script's lines: %s", diff)
	}
	if !containsStatus(updates, "running") {
		t.Errorf("updates on %s: %v, want running before the end", c.name, updates)
	}
	if n := h.proxy.servedBy(c.url) - servedC; n != 0 {
		t.Fatalf("the proxy sent %d requests to %s during the task; it must receive no batch", n, c.name)
	}
	if h.proxy.servedBy(a.url) == servedA || h.proxy.servedBy(b.url) == servedB {
		t.Fatalf("the runner's batches did not land on both %s and %s", a.name, b.name)
	}
}

// waitFeedListeners waits until n line feed listeners (one per manager)
// hold LISTEN on the managers' database: from then on each replica hears
// every batch stored.
func waitFeedListeners(t *testing.T, h *haCluster, n int) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), h.pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	eventually(t, 30*time.Second, fmt.Sprintf("%d line feed listeners", n), func() error {
		var got int
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'bastion line feed' AND query LIKE 'LISTEN bastion_lines;%'`).Scan(&got)
		if err == nil && got != n {
			err = fmt.Errorf("%d listen", got)
		}
		return err
	})
}

// followUpdates is follow, also recording in updates (unless nil) the
// status of every update frame of the task.
func followUpdates(t *testing.T, conn *websocket.Conn, projectID, taskID int64, limit time.Duration, updates *[]string) (string, []string) {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(limit)); err != nil {
		t.Fatal(err)
	}
	var lines []string
	status := ""
	for {
		var f wsFrame
		if err := conn.ReadJSON(&f); err != nil {
			t.Fatalf("following task %d: %v (last status %q, %d lines)", taskID, err, status, len(lines))
		}
		if f.ProjectID != projectID || f.TaskID != taskID {
			continue
		}
		switch f.Type {
		case "log":
			lines = append(lines, f.Output)
		case "update":
			if status = f.Status; updates != nil {
				*updates = append(*updates, status)
			}
			if finished(status) {
				return status, lines
			}
		}
	}
}

func containsStatus(updates []string, status string) bool {
	for _, u := range updates {
		if u == status {
			return true
		}
	}
	return false
}

// projectID reads the id out of a /api/project/<id> path.
func projectID(t *testing.T, path string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(path, "/api/project/"), "%d", &id); err != nil {
		t.Fatalf("project path %q: %v", path, err)
	}
	return id
}
