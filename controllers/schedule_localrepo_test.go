package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// A "run only on new commit" schedule whose repository is a file:// URL
// (or a path) of the manager's host: without --allow-local-repositories
// the manager never runs git on it, and the schedule's condition and event
// say "cannot reach the repository", no more; with the flag it reads the
// head and runs. Real git; the objects come from a fake client, since
// only checkCommit is under test.
func TestCheckCommit_localRepositoriesOnlyWithTheFlag(t *testing.T) {
	repo := gittest.NewRepo(t)
	head := repo.Git("-C", repo.Path, "rev-parse", "HEAD")
	calls := gittest.RecordGitCalls(t)
	for _, url := range []string{repo.FileURL(), repo.Path} {
		r, schedule, template, recorder := checkCommitFixture(t, url, false)
		commit, proceed := r.checkCommit(context.Background(), schedule, template, time.Now())
		if proceed || commit != "" {
			t.Fatalf("%s without the flag: proceed %v, commit %q", url, proceed, commit)
		}
		ready := meta.FindStatusCondition(schedule.Status.Conditions, bastionv1.ConditionReady)
		if ready == nil || ready.Reason != bastionv1.ReasonGitError || !strings.HasSuffix(ready.Message, ": cannot reach the repository") ||
			strings.Contains(ready.Message, repo.Path) {
			t.Fatalf("%s without the flag: Ready = %+v", url, ready)
		}
		event := <-recorder.Events
		if !strings.HasSuffix(event, ": cannot reach the repository") || strings.Contains(event, repo.Path) {
			t.Fatalf("%s without the flag: event %q", url, event)
		}
	}
	if got := gittest.GitCalls(t, calls); got != "" {
		t.Fatalf("git ran without the flag: %s", got)
	}

	r, schedule, template, _ := checkCommitFixture(t, repo.FileURL(), true)
	if commit, proceed := r.checkCommit(context.Background(), schedule, template, time.Now()); !proceed || commit != head {
		t.Fatalf("with the flag: proceed %v, commit %q; want %s", proceed, commit, head)
	}
	if got := gittest.GitCalls(t, calls); !strings.Contains(got, "ls-remote") {
		t.Fatalf("with the flag, git was not asked: %q", got)
	}
}

func checkCommitFixture(t *testing.T, url string, allowLocal bool) (*ScheduleReconciler, *bastionv1.Schedule, *bastionv1.Template, *events.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := bastionv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	repository := &bastionv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "code"},
		Spec:       bastionv1.RepositorySpec{GitURL: url, GitBranch: gittest.Branch},
	}
	template := &bastionv1.Template{
		ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "nightly"},
		Spec:       bastionv1.TemplateSpec{RepositoryRef: bastionv1.ObjectRef{Name: "code"}},
	}
	schedule := &bastionv1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "on-change"},
		Spec:       bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: "nightly"}, RunOnlyOnNewCommit: true},
	}
	recorder := events.NewFakeRecorder(4)
	r := &ScheduleReconciler{
		Client:   fake.NewClientBuilder().WithScheme(scheme).WithObjects(repository, template).Build(),
		Recorder: recorder, AllowLocalRepositories: allowLocal,
	}
	return r, schedule, template, recorder
}
