package apiserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
)

// A unit test of the change filter and the frame: the watcher's wiring to
// the cache is exercised by the manager.
func TestTaskUpdates_publishesAContractFrameOnlyWhenWhatClientsShowChanges(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = bastionv1.AddToScheme(scheme)
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{bastionv1.LabelID: "3"}}},
		&bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Name: "deploy", Namespace: "bastion-web", Labels: map[string]string{bastionv1.LabelID: "9"}}},
	).Build()
	h := hub.New()
	defer h.Close()
	sub := h.Subscribe(func(id int64) bool { return id == 3 }, 16)
	u := &taskUpdates{reader: reader, hub: h}

	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "bastion-web", Labels: map[string]string{bastionv1.LabelID: "42"}},
		Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "deploy"}}}
	running := task.DeepCopy()
	start := metav1.NewTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	running.Status = bastionv1.TaskStatus{Status: bastionv1.TaskRunning, Start: &start, Version: "1.0.3"}

	u.changed(context.Background(), nil, task)                   // not initialized: nothing
	u.changed(context.Background(), task, running)               // running: one update
	u.changed(context.Background(), running, running.DeepCopy()) // nothing changed

	select {
	case <-sub.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("no update published")
	}
	msgs, err := sub.Take(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	var frame map[string]any
	if err := json.Unmarshal(msgs[0].Frame, &frame); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "update", "task_id": 42.0, "project_id": 3.0, "template_id": 9.0,
		"status": "running", "start": "2026-11-22T12:00:00Z", "end": nil, "version": "1.0.3"}
	for k, v := range want {
		if frame[k] != v {
			t.Errorf("%s = %v, want %v (frame %s)", k, frame[k], v, msgs[0].Frame)
		}
	}
}
