package apiserver

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// The pruned half of the task index: tasks retention deleted from etcd,
// kept as summaries in the output store. They are read once per project,
// before its first list, then follow the informer (resolveGone), and are
// read again every historyRefresh.

// indexSync bounds how long a list waits for the informer's first sync.
const indexSync = 30 * time.Second

// prepare makes the project's history complete before a read: the
// informer has delivered its first list, the stored summaries are loaded
// and deleted Tasks are resolved.
func (x *taskIndex) prepare(ctx context.Context, ns string, projectID int64) (*projectTasks, error) {
	if err := x.waitSynced(ctx); err != nil {
		return nil, err
	}
	x.checkHistory(ctx, ns, projectID)
	x.mu.Lock()
	p := x.projectLocked(ns)
	ready := p.loaded && len(p.gone) == 0
	stale := p.loaded && !p.refreshing && time.Since(p.loadedAt) > historyRefresh
	p.refreshing = p.refreshing || stale
	x.mu.Unlock()
	if stale {
		go x.refresh(ns, p, projectID)
	}
	if ready {
		return p, nil // the common case: no lock shared by every reader
	}

	p.load.Lock()
	defer p.load.Unlock()
	if !p.loaded {
		if err := x.loadSummaries(ctx, ns, p, projectID); err != nil {
			return nil, err
		}
	}
	return p, x.resolveGone(ctx, ns, p, projectID)
}

func (x *taskIndex) waitSynced(ctx context.Context) error {
	x.mu.RLock()
	synced := x.synced
	x.mu.RUnlock()
	if synced() {
		return nil
	}
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, indexSync, true, func(context.Context) (bool, error) {
		x.mu.RLock()
		defer x.mu.RUnlock()
		return x.synced(), nil
	})
}

// historyRefresh is how often a project's pruned history is read again
// from the store. The informer keeps it right as long as this replica
// sees every change; a re-read bounds what it cannot see (a summary
// written by hand). A pruned task deleted through the API, on any
// replica, raises the store's history version instead (checkHistory).
const historyRefresh = 5 * time.Minute

// historyCheck is how often a replica compares a project's history version
// with the store's, when the project is read: a pruned task that another
// replica deleted leaves this replica's lists within about this delay.
// One key lookup per project and second.
const historyCheck = time.Second

// checkHistory reads the project's history again if another replica
// changed it (the store's version moved since it was read here). The
// common case costs a read lock and a clock read. A store that cannot
// answer leaves the history as it is (the lists keep answering from it;
// the next check tries again).
func (x *taskIndex) checkHistory(ctx context.Context, ns string, projectID int64) {
	x.mu.RLock()
	p := x.projects[ns]
	due := p != nil && p.loaded && time.Since(p.checkedAt) >= historyCheck
	x.mu.RUnlock()
	if !due {
		return
	}
	x.mu.Lock()
	due = time.Since(p.checkedAt) >= historyCheck // not taken meanwhile
	if due {
		p.checkedAt = time.Now()
	}
	read := p.version
	x.mu.Unlock()
	if !due {
		return
	}
	v, err := x.store.TaskHistoryVersion(ctx, projectID)
	if err == nil && v != read {
		p.load.Lock()
		defer p.load.Unlock()
		err = x.loadSummaries(ctx, ns, p, projectID)
	}
	if err != nil {
		logAPI().Error(err, "checking whether another replica changed the task history", "project", projectID)
	}
}

// refresh re-reads a project's summaries in the background; readers go
// on with what the index holds meanwhile.
func (x *taskIndex) refresh(ns string, p *projectTasks, projectID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.load.Lock()
	defer p.load.Unlock()
	if err := x.loadSummaries(ctx, ns, p, projectID); err != nil {
		logAPI().Error(err, "re-reading the task history", "project", projectID)
	}
	x.mu.Lock()
	p.refreshing = false
	x.mu.Unlock()
}

// summaryPage is how many summaries one store read brings.
const summaryPage = 1000

// loadSummaries reads the project's stored summaries: a task that is live
// wins over its summary, everything else is pruned history, and a pruned
// task the store no longer has is dropped. It runs under p.load.
func (x *taskIndex) loadSummaries(ctx context.Context, ns string, p *projectTasks, projectID int64) error {
	x.mu.Lock()
	p.loading = true
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		p.loading = false
		x.mu.Unlock()
	}()
	// The version first: a change after it is read raises it past it.
	version, err := x.store.TaskHistoryVersion(ctx, projectID)
	if err != nil {
		return err
	}
	var all []store.TaskSummary
	for offset := 0; ; offset += summaryPage {
		page, err := x.store.ListTaskSummaries(ctx, projectID, store.SummaryFilter{}, offset, summaryPage)
		if err != nil {
			return err
		}
		all = append(all, page...)
		if len(page) < summaryPage {
			break
		}
	}
	templateNames := x.templateNames(ctx, ns)
	stored := make(map[int64]*store.TaskSummary, len(all))
	for i := range all {
		stored[all[i].TaskID] = &all[i]
	}
	x.mu.Lock()
	defer x.changed(ns)
	defer x.mu.Unlock()
	for id, e := range p.entries {
		if !e.live && stored[id] == nil {
			p.remove(id)
		}
	}
	for id, s := range stored {
		if p.entries[id] != nil {
			continue // live, or pruned and known with its whole object
		}
		if _, pending := p.gone[id]; pending {
			continue // resolveGone keeps the richer object
		}
		p.put(&taskEntry{id: id, template: templateNames[s.TemplateID], summary: s})
	}
	p.loaded, p.loadedAt, p.version = true, time.Now(), version
	return nil
}

// resolveGone looks each deleted Task up in the store: retention keeps a
// summary of every task it prunes, and the API deletes the summary before
// the object, so a summary means pruned history.
func (x *taskIndex) resolveGone(ctx context.Context, ns string, p *projectTasks, projectID int64) error {
	x.mu.RLock()
	gone := make(map[int64]*bastionv1.Task, len(p.gone))
	for id, task := range p.gone {
		gone[id] = task
	}
	x.mu.RUnlock()
	for id, task := range gone {
		_, err := x.store.TaskSummary(ctx, store.TaskKey{ProjectID: projectID, TaskID: id})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		x.mu.Lock()
		if p.gone[id] == task { // not re-added or deleted again meanwhile
			delete(p.gone, id)
			if err == nil {
				p.put(&taskEntry{id: id, template: task.Spec.TemplateRef.Name, task: task})
			} else {
				p.remove(id)
			}
		}
		x.mu.Unlock()
	}
	if len(gone) > 0 {
		x.changed(ns)
	}
	return nil
}

// fresh reports whether the project's history is loaded and recent, so
// that an answer rendered from it may be reused.
func (x *taskIndex) fresh(ns string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	p := x.projects[ns]
	return p != nil && p.loaded && len(p.gone) == 0 && time.Since(p.loadedAt) <= historyRefresh
}
