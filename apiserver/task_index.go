package apiserver

import (
	"context"
	"slices"
	"sync"
	"time"

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
	// templateNames maps a project's template ids to object names:
	// summaries name their template by id, Tasks by name.
	templateNames func(ctx context.Context, ns string) map[int64]string
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
	// version is the store's history version the summaries were read at,
	// and checkedAt when this replica last compared it (checkHistory).
	version   int64
	checkedAt time.Time
}

func newTaskIndex(st store.Store, changed func(ns string), templateNames func(context.Context, string) map[int64]string) *taskIndex {
	return &taskIndex{store: st, projects: map[string]*projectTasks{}, synced: func() bool { return false },
		changed: changed, templateNames: templateNames}
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
	// A template is gone for good only after its reconciler deleted its
	// tasks and their stored summaries (controllers/cascade.go): its
	// history goes with it, whichever door deleted it.
	templates, err := informers.GetInformer(ctx, &bastionv1.Template{})
	if err != nil {
		return err
	}
	_, err = templates.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if t, ok := obj.(*bastionv1.Template); ok {
				x.forgetTemplate(t.Namespace, t.Name)
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

// forgetTemplate drops every task of a deleted template.
func (x *taskIndex) forgetTemplate(ns, template string) {
	x.mu.Lock()
	p := x.projectLocked(ns)
	for _, id := range slices.Clone(p.byTemplate[template]) {
		p.remove(id)
	}
	for id, task := range p.gone {
		if task.Spec.TemplateRef.Name == template {
			delete(p.gone, id)
		}
	}
	x.mu.Unlock()
	x.changed(ns)
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

// lookup is the project's task with id as the index has it now, or nil.
func (x *taskIndex) lookup(ns string, id int64) *taskEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if p := x.projects[ns]; p != nil {
		return p.entries[id]
	}
	return nil
}
