package apiserver

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// taskIndex keeps every project's tasks in memory, ordered by id, so that
// the task lists and the template list (last task, task count) cost a few
// map lookups instead of a scan of thousands of Tasks or a store query per
// request.
//
// A project's tasks are its live Task objects (fed by the manager's Task
// informer) plus the tasks retention pruned from etcd, which live on as
// summaries in the output store. Those are read once per project, on its
// first list, and then follow the informer: a Task object that disappears
// is looked up in the store at the next list (resolveGone): found, it was
// pruned and stays in the history; not found, it was deleted.
type taskIndex struct {
	store store.Store

	mu       sync.RWMutex
	projects map[string]*projectTasks // by namespace
	synced   func() bool

	// changed is told, after the fact, which project's tasks changed.
	changed func(ns string)
}

// taskEntry is one task of a list: a Task object (live, or as it was when
// it was pruned) or a stored summary. Entries are never changed once made,
// so a reader may keep one after the lock is released.
type taskEntry struct {
	id       int64
	template string // the Template's object name; "" when it is gone
	task     *bastionv1.Task
	summary  *store.TaskSummary
	live     bool
}

type projectTasks struct {
	entries    map[int64]*taskEntry
	byName     map[string]int64   // Task object names → ids (build task references)
	order      []int64            // every id, ascending
	byTemplate map[string][]int64 // template object name → ids, ascending
	// gone holds deleted Task objects to look up in the store.
	gone map[int64]*bastionv1.Task

	// loaded is set once the stored summaries were read (loading while
	// they are); load serialises that read and the resolution of gone
	// tasks.
	loaded, loading, refreshing bool
	loadedAt                    time.Time
	load                        sync.Mutex
}

func newTaskIndex(st store.Store, changed func(ns string)) *taskIndex {
	return &taskIndex{store: st, projects: map[string]*projectTasks{}, synced: func() bool { return false }, changed: changed}
}

// watch feeds the index from the Task informer of the manager's cache.
func (x *taskIndex) watch(ctx context.Context, informers cache.Informers) error {
	informer, err := informers.GetInformer(ctx, &bastionv1.Task{})
	if err != nil {
		return err
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { x.observe(obj) },
		UpdateFunc: func(_, obj any) { x.observe(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if task, ok := obj.(*bastionv1.Task); ok {
				x.forgetLive(task)
			}
		},
	})
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.synced = reg.HasSynced
	x.mu.Unlock()
	return nil
}

// observe records a Task the informer added or changed. A Task being
// deleted is already gone for the API, as everywhere else.
func (x *taskIndex) observe(obj any) {
	task, ok := obj.(*bastionv1.Task)
	if !ok {
		return
	}
	if !task.DeletionTimestamp.IsZero() {
		x.forgetLive(task)
		return
	}
	id, ok := ids.FromLabels(task)
	if !ok {
		return // numbered by its reconciler soon; the update brings it
	}
	x.mu.Lock()
	p := x.projectLocked(task.Namespace)
	delete(p.gone, id)
	p.put(&taskEntry{id: id, template: task.Spec.TemplateRef.Name, task: task, live: true})
	x.mu.Unlock()
	x.changed(task.Namespace)
}

// forgetLive takes a deleted Task out of the live tasks; the next list
// decides whether it stays as pruned history.
func (x *taskIndex) forgetLive(task *bastionv1.Task) {
	id, ok := ids.FromLabels(task)
	if !ok {
		return
	}
	x.mu.Lock()
	p := x.projectLocked(task.Namespace)
	if e := p.entries[id]; e != nil && e.live {
		p.remove(id)
	}
	// Before the project's first list the store is read whole anyway;
	// only a read under way could have missed the task's summary.
	if p.loaded || p.loading {
		p.gone[id] = task
	}
	x.mu.Unlock()
	x.changed(task.Namespace)
}

// forget drops a task the API deleted (object, lines and summary).
func (x *taskIndex) forget(ns string, id int64) {
	x.mu.Lock()
	p := x.projectLocked(ns)
	p.remove(id)
	delete(p.gone, id)
	x.mu.Unlock()
	x.changed(ns)
}

func (x *taskIndex) projectLocked(ns string) *projectTasks {
	p := x.projects[ns]
	if p == nil {
		p = &projectTasks{entries: map[int64]*taskEntry{}, byName: map[string]int64{},
			byTemplate: map[string][]int64{}, gone: map[int64]*bastionv1.Task{}}
		x.projects[ns] = p
	}
	return p
}

// put adds or replaces an entry, keeping the orders sorted.
func (p *projectTasks) put(e *taskEntry) {
	if e.task != nil {
		p.byName[e.task.Name] = e.id
	}
	if old := p.entries[e.id]; old != nil {
		if old.template != e.template {
			p.byTemplate[old.template] = removeSorted(p.byTemplate[old.template], e.id)
			p.byTemplate[e.template] = insertSorted(p.byTemplate[e.template], e.id)
		}
		p.entries[e.id] = e
		return
	}
	p.entries[e.id] = e
	p.order = insertSorted(p.order, e.id)
	p.byTemplate[e.template] = insertSorted(p.byTemplate[e.template], e.id)
}

func (p *projectTasks) remove(id int64) {
	e := p.entries[id]
	if e == nil {
		return
	}
	delete(p.entries, id)
	if e.task != nil && p.byName[e.task.Name] == id {
		delete(p.byName, e.task.Name)
	}
	p.order = removeSorted(p.order, id)
	if rest := removeSorted(p.byTemplate[e.template], id); len(rest) > 0 {
		p.byTemplate[e.template] = rest
	} else {
		delete(p.byTemplate, e.template)
	}
}

func insertSorted(s []int64, id int64) []int64 {
	i, found := slices.BinarySearch(s, id)
	if found {
		return s
	}
	return slices.Insert(s, i, id)
}

func removeSorted(s []int64, id int64) []int64 {
	if i, found := slices.BinarySearch(s, id); found {
		return slices.Delete(s, i, i+1)
	}
	return s
}

// indexSync bounds how long a list waits for the informer's first sync.
const indexSync = 30 * time.Second

// prepare makes the project's history complete before a read: the
// informer has delivered its first list, the stored summaries are loaded
// and deleted Tasks are resolved. templateName maps a summary's template
// id to the Template's object name.
func (x *taskIndex) prepare(ctx context.Context, ns string, projectID int64, templateName func(int64) string) (*projectTasks, error) {
	if err := x.waitSynced(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	p := x.projectLocked(ns)
	ready := p.loaded && len(p.gone) == 0
	stale := p.loaded && !p.refreshing && time.Since(p.loadedAt) > historyRefresh
	p.refreshing = p.refreshing || stale
	x.mu.Unlock()
	if stale {
		go x.refresh(ns, p, projectID, templateName)
	}
	if ready {
		return p, nil // the common case: no lock shared by every reader
	}

	p.load.Lock()
	defer p.load.Unlock()
	if !p.loaded {
		if err := x.loadSummaries(ctx, ns, p, projectID, templateName); err != nil {
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
// sees every change; a re-read bounds what it cannot see (a pruned task
// another replica deleted, a summary written by hand).
const historyRefresh = 5 * time.Minute

// refresh re-reads a project's summaries in the background; readers go
// on with what the index holds meanwhile.
func (x *taskIndex) refresh(ns string, p *projectTasks, projectID int64, templateName func(int64) string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.load.Lock()
	defer p.load.Unlock()
	if err := x.loadSummaries(ctx, ns, p, projectID, templateName); err != nil {
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
func (x *taskIndex) loadSummaries(ctx context.Context, ns string, p *projectTasks, projectID int64, templateName func(int64) string) error {
	x.mu.Lock()
	p.loading = true
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		p.loading = false
		x.mu.Unlock()
	}()
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
		p.put(&taskEntry{id: id, template: templateName(s.TemplateID), summary: s})
	}
	p.loaded, p.loadedAt = true, time.Now()
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

// newest returns up to limit entries, newest first, that keep says yes
// to; template "" means the whole project.
func (x *taskIndex) newest(p *projectTasks, template string, all bool, limit int, keep func(*taskEntry) bool) []*taskEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	order := p.order
	if !all {
		order = p.byTemplate[template]
	}
	out := make([]*taskEntry, 0, min(limit, len(order)))
	for i := len(order) - 1; i >= 0 && len(out) < limit; i-- {
		if e := p.entries[order[i]]; keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// templateStats is each template's task count and newest task.
type templateStats struct {
	count int
	last  *taskEntry
}

// statsByTemplate computes every template's stats in one pass.
func (x *taskIndex) statsByTemplate(p *projectTasks) map[string]templateStats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make(map[string]templateStats, len(p.byTemplate))
	for name, order := range p.byTemplate {
		out[name] = templateStats{count: len(order), last: p.entries[order[len(order)-1]]}
	}
	return out
}

// byID is a task of the project, or nil.
func (x *taskIndex) byID(p *projectTasks, id int64) *taskEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return p.entries[id]
}

// entryNamed is the task whose object is called name, or nil.
func (x *taskIndex) entryNamed(p *projectTasks, name string) *taskEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return p.entries[p.byName[name]]
}

// ofTemplate lists the ids of a template's tasks.
func (x *taskIndex) ofTemplate(p *projectTasks, template string) []int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(p.byTemplate[template])
}

// lookup is the project's task with id as the index has it now, or nil.
func (x *taskIndex) lookup(ns string, id int64) *taskEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if p := x.projects[ns]; p != nil {
		return p.entries[id]
	}
	return nil
}
