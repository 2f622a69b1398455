package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/cron"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// How the schedule tests drive time. The reconciler reads suiteClock, a
// fake clock, but its RequeueAfter waits in real time, so stepping the clock
// alone wakes nothing. reconcileAt sets the clock and then changes an
// annotation on the Schedule: the change is a watch event, and the
// reconcile it causes reads the new time. No test waits for a real minute.
//
// A schedule that never ran counts from its creationTimestamp, which the
// apiserver stamps with real time, so each test first sets the clock to the
// real time and then works out the minutes from the creationTimestamp.

// scheduleClockAnnotation is the annotation reconcileAt changes.
const scheduleClockAnnotation = "test.bastion.dev/clock"

// quietPeriod is how long a test watches for a Task that must not appear.
const quietPeriod = time.Second

type scheduleFixture struct {
	t         *testing.T
	g         *WithT
	namespace string
	pokes     int
}

// newScheduleFixture makes a Project (and so its namespace) with a
// repository and a template, for the schedules of one test.
func newScheduleFixture(t *testing.T, project, gitURL string) *scheduleFixture {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(k8sClient.Create(ctx, newProject(project))).To(Succeed())
	f := &scheduleFixture{t: t, g: g, namespace: bastionv1.ProjectNamespace(project)}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Name: f.namespace}, &corev1.Namespace{})
	}, timeout, interval).Should(Succeed())

	f.create(&bastionv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "code"},
		Spec: bastionv1.RepositorySpec{
			DisplayName: "Code", GitURL: gitURL, GitBranch: gittest.Branch,
			SSHKeyRef: bastionv1.ObjectRef{Name: "none"},
		},
	})
	f.create(&bastionv1.Template{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: bastionv1.TemplateSpec{
			DisplayName: "Nightly", Playbook: "site.yml",
			RepositoryRef:  bastionv1.ObjectRef{Name: "code"},
			EnvironmentRef: bastionv1.ObjectRef{Name: "empty"},
		},
	})
	return f
}

func (f *scheduleFixture) create(obj client.Object) {
	obj.SetNamespace(f.namespace)
	f.g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
}

// schedule creates a schedule of the "nightly" template, with the clock set
// to the real time first (see above), and deletes it when the test ends so
// that it cannot fire when later tests move the clock.
func (f *scheduleFixture) schedule(name, cronFormat string, mutate func(*bastionv1.ScheduleSpec)) *bastionv1.Schedule {
	s := &bastionv1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: bastionv1.ScheduleSpec{
			TemplateRef: bastionv1.ObjectRef{Name: "nightly"},
			CronFormat:  cronFormat,
			Active:      true,
		},
	}
	if mutate != nil {
		mutate(&s.Spec)
	}
	suiteClock.SetTime(time.Now())
	f.create(s)
	f.t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), s) })
	return s
}

// firstRun is the first minute a new schedule fires: the first match of
// its cron after its creation.
func (f *scheduleFixture) firstRun(s *bastionv1.Schedule) time.Time {
	parsed, err := cron.Parse(s.Spec.CronFormat)
	f.g.Expect(err).NotTo(HaveOccurred())
	return parsed.Next(s.CreationTimestamp.UTC())
}

// reconcileAt sets the clock to at and makes the reconciler look again.
func (f *scheduleFixture) reconcileAt(name string, at time.Time) {
	suiteClock.SetTime(at)
	f.pokes++
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%s #%d"}}}`, scheduleClockAnnotation, at.UTC().Format(time.RFC3339), f.pokes)
	s := &bastionv1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name}}
	f.g.Expect(k8sClient.Patch(context.Background(), s, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func (f *scheduleFixture) get(g Gomega, name string) *bastionv1.Schedule {
	s := &bastionv1.Schedule{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: f.namespace, Name: name}, s)).To(Succeed())
	return s
}

// tasks lists the Tasks that the schedule started.
func (f *scheduleFixture) tasks(g Gomega, schedule string) []bastionv1.Task {
	list := &bastionv1.TaskList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(f.namespace))).To(Succeed())
	var started []bastionv1.Task
	for _, task := range list.Items {
		if task.Spec.ScheduleRef != nil && task.Spec.ScheduleRef.Name == schedule {
			started = append(started, task)
		}
	}
	return started
}

// waitReady waits for the schedule's Ready condition to have reason, and
// returns the schedule as it then is.
func (f *scheduleFixture) waitReady(name string, status metav1.ConditionStatus, reason string) *bastionv1.Schedule {
	var s *bastionv1.Schedule
	f.g.Eventually(func(g Gomega) {
		s = f.get(g, name)
		ready := meta.FindStatusCondition(s.Status.Conditions, bastionv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(reason), ready.Message)
		g.Expect(ready.Status).To(Equal(status))
	}, timeout, interval).Should(Succeed())
	return s
}

// eventReasons lists the reasons of the Events recorded about a schedule.
func (f *scheduleFixture) eventReasons(g Gomega, schedule string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(f.namespace))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Schedule" && e.Regarding.Name == schedule {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

func (f *scheduleFixture) expectTaskCount(schedule string, n int) {
	f.g.Eventually(func(g Gomega) { g.Expect(f.tasks(g, schedule)).To(HaveLen(n)) }, timeout, interval).Should(Succeed())
}

func (f *scheduleFixture) expectNoNewTasks(schedule string, n int) {
	f.g.Consistently(func(g Gomega) { g.Expect(f.tasks(g, schedule)).To(HaveLen(n)) }, quietPeriod, interval).Should(Succeed())
}

func TestScheduleReconciler_firesOnceAtTheMinuteOfTheInjectedClock(t *testing.T) {
	f := newScheduleFixture(t, "sched-fire", "/srv/git/code")
	s := f.schedule("every-five", "*/5 * * * *", nil)
	first := f.firstRun(s)

	// Before the minute: the next run is known, nothing fires.
	f.g.Eventually(func(g Gomega) {
		got := f.get(g, s.Name)
		g.Expect(got.Status.NextRunTime).NotTo(BeNil())
		g.Expect(got.Status.NextRunTime.Time).To(BeTemporally("==", first))
	}, timeout, interval).Should(Succeed())
	f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonScheduled)
	f.reconcileAt(s.Name, first.Add(-time.Second))
	f.expectNoNewTasks(s.Name, 0)

	// Past the minute: exactly one task of the template, started by the
	// schedule.
	f.reconcileAt(s.Name, first.Add(10*time.Second))
	f.expectTaskCount(s.Name, 1)
	task := f.tasks(f.g, s.Name)[0]
	f.g.Expect(task.Spec.TemplateRef.Name).To(Equal("nightly"))
	f.g.Expect(task.Spec.ScheduleRef).To(Equal(&bastionv1.ObjectRef{Name: s.Name}))
	f.g.Expect(task.Name).To(HavePrefix("nightly-"))
	f.g.Expect(task.Labels).To(HaveKeyWithValue(bastionv1.LabelTemplate, "nightly"))

	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.LastTask).To(Equal(task.Name))
	f.g.Expect(got.Status.LastRunTime.Time).To(BeTemporally("==", first))
	f.g.Expect(got.Status.NextRunTime.Time).To(BeTemporally("==", first.Add(5*time.Minute)))

	// The same minute again, twice: still one task.
	f.reconcileAt(s.Name, first.Add(40*time.Second))
	f.reconcileAt(s.Name, first.Add(50*time.Second))
	f.expectNoNewTasks(s.Name, 1)

	// The next run fires in its turn.
	f.reconcileAt(s.Name, first.Add(5*time.Minute+time.Second))
	f.expectTaskCount(s.Name, 2)
}

func TestScheduleReconciler_missedRunsFireOnceAndTheScheduleGoesOnFromNow(t *testing.T) {
	f := newScheduleFixture(t, "sched-missed", "/srv/git/code")
	s := f.schedule("every-minute", "* * * * *", nil)
	first := f.firstRun(s)

	// An hour passes unseen (the manager was down): one run, not sixty.
	late := first.Add(time.Hour + 30*time.Second)
	f.reconcileAt(s.Name, late)
	f.expectTaskCount(s.Name, 1)
	f.expectNoNewTasks(s.Name, 1)

	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.LastRunTime.Time).To(BeTemporally("==", late.Truncate(time.Minute)))
	f.g.Expect(got.Status.NextRunTime.Time).To(BeTemporally("==", late.Truncate(time.Minute).Add(time.Minute)))
}

func TestScheduleReconciler_inactiveNeverFiresAndActivationCountsFromNow(t *testing.T) {
	f := newScheduleFixture(t, "sched-inactive", "/srv/git/code")
	s := f.schedule("paused", "* * * * *", func(spec *bastionv1.ScheduleSpec) { spec.Active = false })
	first := f.firstRun(s)

	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonInactive)
	f.g.Expect(meta.FindStatusCondition(got.Status.Conditions, bastionv1.ConditionReady).Message).To(ContainSubstring("inactive"))
	f.g.Expect(got.Status.NextRunTime).To(BeNil())

	f.reconcileAt(s.Name, first.Add(3*time.Hour))
	f.expectNoNewTasks(s.Name, 0)

	// Made active, it waits for the next minute: the hours it was inactive
	// are not missed runs.
	activated := first.Add(3*time.Hour + 20*time.Second)
	suiteClock.SetTime(activated)
	f.g.Expect(k8sClient.Patch(context.Background(), got,
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"active":true}}`)))).To(Succeed())
	got = f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonScheduled)
	f.g.Expect(got.Status.NextRunTime.Time).To(BeTemporally("==", activated.Truncate(time.Minute).Add(time.Minute)))
	f.expectNoNewTasks(s.Name, 0)
}

func TestScheduleReconciler_badCronIsNotReady(t *testing.T) {
	f := newScheduleFixture(t, "sched-badcron", "/srv/git/code")
	s := f.schedule("broken", "61 * * * *", nil)

	got := f.waitReady(s.Name, metav1.ConditionFalse, bastionv1.ReasonInvalidCron)
	ready := meta.FindStatusCondition(got.Status.Conditions, bastionv1.ConditionReady)
	f.g.Expect(ready.Message).To(Equal(cron.Validate("61 * * * *").Error()))
	f.g.Expect(ready.Message).To(HavePrefix(cron.ErrorPrefix))
	f.g.Expect(got.Status.NextRunTime).To(BeNil())

	f.reconcileAt(s.Name, time.Now().Add(24*time.Hour))
	f.expectNoNewTasks(s.Name, 0)
}

func TestScheduleReconciler_runOnlyOnNewCommitSkipsWhenTheHeadHasNotMoved(t *testing.T) {
	repo := gittest.NewRepo(t)
	f := newScheduleFixture(t, "sched-commit", repo.Path)
	s := f.schedule("on-change", "* * * * *", func(spec *bastionv1.ScheduleSpec) { spec.RunOnlyOnNewCommit = true })
	first := f.firstRun(s)
	head := repo.Git("-C", repo.Path, "rev-parse", "HEAD")

	// The first run has no commit to compare with: it runs.
	f.reconcileAt(s.Name, first.Add(time.Second))
	f.expectTaskCount(s.Name, 1)
	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.LastCommit).To(Equal(head))

	// The next minute, the head is where it was: skipped, and said so.
	second := first.Add(time.Minute)
	f.reconcileAt(s.Name, second.Add(time.Second))
	got = f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonNoNewCommit)
	f.g.Expect(got.Status.LastRunTime.Time).To(BeTemporally("==", second))
	f.g.Expect(meta.FindStatusCondition(got.Status.Conditions, bastionv1.ConditionReady).Message).
		To(ContainSubstring("no new commit on main since " + head[:12]))
	f.g.Expect(f.tasks(f.g, s.Name)).To(HaveLen(1))
	f.g.Eventually(func(g Gomega) []string { return f.eventReasons(g, s.Name) }, timeout, interval).
		Should(ContainElements(bastionv1.ReasonTaskCreated, bastionv1.ReasonNoNewCommit))

	// A commit lands: the next run runs.
	newHead := repo.Commit("second")
	f.reconcileAt(s.Name, second.Add(time.Minute+time.Second))
	f.expectTaskCount(s.Name, 2)
	got = f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.LastCommit).To(Equal(newHead))
}

func TestScheduleReconciler_gitErrorSkipsTheRunWithTheReason(t *testing.T) {
	missing := t.TempDir() + "/missing"
	f := newScheduleFixture(t, "sched-giterror", missing)
	s := f.schedule("unreachable", "* * * * *", func(spec *bastionv1.ScheduleSpec) { spec.RunOnlyOnNewCommit = true })
	first := f.firstRun(s)

	f.reconcileAt(s.Name, first.Add(time.Second))
	got := f.waitReady(s.Name, metav1.ConditionFalse, bastionv1.ReasonGitError)
	message := meta.FindStatusCondition(got.Status.Conditions, bastionv1.ConditionReady).Message
	// Only that: git's own words would tell a project member what the
	// manager's disk holds.
	f.g.Expect(message).To(HaveSuffix(": cannot reach the repository"))
	f.g.Expect(message).NotTo(ContainSubstring(missing))
	f.g.Expect(strings.Count(message, "\n")).To(BeZero())
	f.g.Expect(got.Status.LastRunTime.Time).To(BeTemporally("==", first))
	f.expectNoNewTasks(s.Name, 0)
}

func TestScheduleReconciler_readsCronInUTCWhateverTheClocksZone(t *testing.T) {
	f := newScheduleFixture(t, "sched-utc", "/srv/git/code")
	s := f.schedule("hourly", "0 * * * *", nil)
	first := f.firstRun(s)

	// In a zone half an hour off UTC, "minute 0" would be a different
	// minute.
	india := time.FixedZone("IST", 5*3600+30*60)
	f.reconcileAt(s.Name, first.Add(time.Second).In(india))
	f.expectTaskCount(s.Name, 1)
	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.NextRunTime.Time).To(BeTemporally("==", first.Add(time.Hour)))
}

// A write to the Schedule between the claim of a run and the record of its
// outcome (here an annotation, as kubectl annotate or a GitOps tool would
// make while the Task is being created) must not lose the outcome: the run
// is claimed and never repeated, so nothing else would ever record it.
// The suite's reconciler sees a clock before the minute and only waits;
// this reconciler, with its own clock past the minute, takes the run.
func TestScheduleReconciler_aWriteDuringTheRunKeepsTheRunsOutcome(t *testing.T) {
	f := newScheduleFixture(t, "sched-touch", "/srv/git/code")
	s := f.schedule("every-five", "*/5 * * * *", nil)
	first := f.firstRun(s)
	f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonScheduled)

	ctx := context.Background()
	touched := 0
	touching := interceptor.NewClient(withoutWatch{k8sClient}, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, isTask := obj.(*bastionv1.Task); isTask {
				touched++
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.bastion.dev/touched":"%d"}}}`, touched)
				target := &bastionv1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: s.Name}}
				if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	reconciler := &controllers.ScheduleReconciler{Client: touching, Clock: clocktesting.NewFakePassiveClock(first.Add(10 * time.Second))}
	_, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)})
	f.g.Expect(err).NotTo(HaveOccurred())
	f.g.Expect(touched).To(Equal(1), "the schedule was written while its task was created")

	f.expectTaskCount(s.Name, 1)
	task := f.tasks(f.g, s.Name)[0]
	got := f.waitReady(s.Name, metav1.ConditionTrue, bastionv1.ReasonTaskCreated)
	f.g.Expect(got.Status.LastTask).To(Equal(task.Name))
	f.g.Expect(got.Status.LastRunTime.Time).To(BeTemporally("==", first))
	f.g.Expect(got.Annotations).To(HaveKeyWithValue("test.bastion.dev/touched", "1"))
}

// withoutWatch lets a plain client be wrapped by an interceptor, which
// wants a client that can watch; the reconciler never watches through it.
type withoutWatch struct{ client.Client }

func (withoutWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, fmt.Errorf("this test client does not watch")
}
