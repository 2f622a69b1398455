package apiserver

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// taskUpdates turns Task status changes into the websocket's "update"
// messages. It watches the manager's cache, so every change reaches the
// clients whoever made it: the reconciler, the runner's stream, kubectl.
type taskUpdates struct {
	reader client.Reader // the cache: projects and templates by name
	hub    *hub.Hub
	// lines delivers a task's last lines before the update that says it
	// ended, so a client sees none after it; nil in unit tests.
	lines *linePublisher
}

// PublishLive wires all of a replica's live events onto its hub: the log
// lines from the store's line feed (PublishLines) and the update frames
// from the Task cache (the manager's), a task's last lines first.
func PublishLive(ctx context.Context, c cache.Cache, st store.Store, h *hub.Hub) error {
	lines, err := startLinePublisher(ctx, c, c, st, h)
	if err != nil {
		return err
	}
	return publishTaskUpdates(ctx, c, h, lines)
}

func publishTaskUpdates(ctx context.Context, c cache.Cache, h *hub.Hub, lines *linePublisher) error {
	informer, err := c.GetInformer(ctx, &bastionv1.Task{})
	if err != nil {
		return err
	}
	u := &taskUpdates{reader: c, hub: h, lines: lines}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if t, ok := obj.(*bastionv1.Task); ok {
				u.changed(ctx, nil, t)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*bastionv1.Task)
			task, ok2 := newObj.(*bastionv1.Task)
			if ok1 && ok2 {
				u.changed(ctx, old, task)
			}
		},
	})
	return err
}

// changed publishes an update when what a client shows of the task moved:
// its status, start, end or version.
func (u *taskUpdates) changed(ctx context.Context, old, task *bastionv1.Task) {
	if old != nil && old.Status.Status == task.Status.Status && old.Status.Version == task.Status.Version &&
		old.Status.Start.Equal(task.Status.Start) && old.Status.End.Equal(task.Status.End) {
		return
	}
	if task.Status.Status == "" {
		return // not initialized yet: nothing a client could show
	}
	key, err := storeKey(ctx, u.reader, task)
	if err != nil {
		return // the ids come with the next change
	}
	update := hub.TaskUpdate{TaskID: key.TaskID, ProjectID: key.ProjectID, Status: string(task.Status.Status)}
	template := &bastionv1.Template{}
	if u.reader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template) == nil {
		update.TemplateID, _ = ids.FromLabels(template)
	}
	update.Start, update.End = timeOf(task.Status.Start), timeOf(task.Status.End)
	if task.Status.Version != "" {
		v := task.Status.Version
		update.Version = &v
	}
	if u.lines != nil && ended(task) {
		u.lines.finish(ctx, key)
	}
	u.hub.Publish(hub.Update(update))
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	utc := t.UTC()
	return &utc
}
