package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/alert/alerttest"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// alertUser creates a User with an address and the alert switch.
func alertUser(t *testing.T, name string, alertOn bool) {
	t.Helper()
	user := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: bastionv1.UserSpec{
		Username: name, Name: strings.ToUpper(name[:1]) + name[1:], Email: name + "@example.com", Alert: alertOn,
	}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), user)).To(Succeed())
}

// alertProject is a task project with alerts on or off, a chat id and a
// team of the named users.
func alertProject(t *testing.T, name string, alertOn bool, chat string, members ...string) *taskProject {
	t.Helper()
	return newTaskProjectWith(t, name, func(p *bastionv1.Project) {
		p.Spec.Alert, p.Spec.AlertChat = alertOn, chat
		for _, m := range members {
			p.Spec.Members = append(p.Spec.Members, bastionv1.ProjectMember{User: m, Role: bastionv1.RoleOwner})
		}
	})
}

// finished waits until the task's finish is complete (its finalizer gone).
func (p *taskProject) finished(name string) *bastionv1.Task {
	p.t.Helper()
	var task *bastionv1.Task
	p.g.Eventually(func(g Gomega) {
		task = &bastionv1.Task{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, task)).To(Succeed())
		g.Expect(task.Status.Status.Finished()).To(BeTrue())
		g.Expect(controllerutil.ContainsFinalizer(task, controllers.TaskFinalizer)).To(BeFalse())
	}, timeout, interval).Should(Succeed())
	return task
}

// key is the task's output-store key.
func (p *taskProject) key(name string) store.TaskKey {
	p.t.Helper()
	var key store.TaskKey
	p.g.Eventually(func(g Gomega) {
		project := &bastionv1.Project{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: bastionv1.ProjectOfNamespace(p.ns)}, project)).To(Succeed())
		var ok bool
		key.ProjectID, ok = ids.FromLabels(project)
		g.Expect(ok).To(BeTrue())
		key.TaskID, ok = ids.FromLabels(p.get(name))
		g.Expect(ok).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	return key
}

// mailsOf are the mails the suite's SMTP server holds about a project.
func mailsOf(project string) []alerttest.Mail {
	var out []alerttest.Mail
	for _, m := range suiteSMTP.Mails() {
		if strings.HasPrefix(m.Subject(), "[Project "+project+"]") {
			out = append(out, m)
		}
	}
	return out
}

// chatsOf are the Telegram or webhook requests about a project.
func chatsOf(rec *alerttest.Recorder, project string) []string {
	var out []string
	for _, r := range rec.Requests() {
		if strings.Contains(string(r.Body), "[Project "+project+"]") {
			out = append(out, r.Path+" "+string(r.Body))
		}
	}
	return out
}

func alerted(task *bastionv1.Task) bool {
	return meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionAlerted) != nil
}

func TestTaskAlerts_failedTaskMailsMembersWithAlertOnAndMessagesTheChat(t *testing.T) {
	alertUser(t, "anna", true)
	alertUser(t, "boris", false)
	p := alertProject(t, "alerts-fail", true, "-100777", "anna", "boris")
	p.task("nightly", "deploy-site", func(s *bastionv1.TaskSpec) { s.User = "anna"; s.Message = "nightly run" })
	key := p.key("nightly")
	var lines []store.Line
	for i := 1; i <= 25; i++ {
		lines = append(lines, store.Line{Seq: int64(i), Time: time.Now(), Output: fmt.Sprintf("TASK [step %d]", i)})
	}
	p.g.Expect(suiteStore.AppendLines(context.Background(), key, lines)).To(Succeed())
	p.runToEnd("nightly", false)
	task := p.finished("nightly")
	p.g.Expect(alerted(task)).To(BeTrue(), "the task is marked before its alerts are queued")

	p.g.Eventually(func() []alerttest.Mail { return mailsOf("alerts-fail") }, timeout, interval).Should(HaveLen(1))
	mail := mailsOf("alerts-fail")[0]
	p.g.Expect(mail.To).To(Equal([]string{"anna@example.com"}), "boris has alerts off")
	p.g.Expect(mail.Login).To(Equal("bastion"))
	p.g.Expect(mail.Subject()).To(Equal(fmt.Sprintf("[Project alerts-fail] deploy-site failed (task #%d)", key.TaskID)))
	body := mail.Body()
	for _, want := range []string{
		"Started by: Anna (anna)", "Started:    ", "Ran for:    ", "Message:    nightly run",
		"Result:     BackoffLimitExceeded: Job has reached the specified backoff limit",
		"Last 20 lines of output:", "TASK [step 6]\n", "TASK [step 25]\n",
		fmt.Sprintf("Open the task: %s/project/%d/history?t=%d", suitePublicURL, key.ProjectID, key.TaskID),
	} {
		p.g.Expect(body).To(ContainSubstring(want))
	}
	p.g.Expect(body).NotTo(ContainSubstring("TASK [step 5]\n"))

	p.g.Eventually(func() []string { return chatsOf(suiteTelegram, "alerts-fail") }, timeout, interval).Should(HaveLen(1))
	bot := chatsOf(suiteTelegram, "alerts-fail")[0]
	p.g.Expect(bot).To(HavePrefix("/telegram/bot" + suiteBotToken + "/sendMessage "))
	p.g.Expect(bot).To(ContainSubstring(`"chat_id":"-100777"`))
	p.g.Eventually(func() []string { return chatsOf(suiteWebhook, "alerts-fail") }, timeout, interval).Should(HaveLen(1))
	hook := strings.TrimPrefix(chatsOf(suiteWebhook, "alerts-fail")[0], "/hooks/suite ")
	var payload map[string]string
	p.g.Expect(json.Unmarshal([]byte(hook), &payload)).To(Succeed())
	p.g.Expect(payload).To(HaveKey("text"))
	p.g.Expect(payload).To(HaveLen(1))
	p.g.Expect(payload["text"]).To(HaveSuffix(fmt.Sprintf("/project/%d/history?t=%d", key.ProjectID, key.TaskID)))

	// A manager that died before the finish was complete runs it again:
	// the mark keeps the alerts from going out twice.
	p.update("nightly", func(t *bastionv1.Task) { controllerutil.AddFinalizer(t, controllers.TaskFinalizer) })
	p.finished("nightly")
	p.g.Consistently(func() int { return len(mailsOf("alerts-fail")) + len(chatsOf(suiteTelegram, "alerts-fail")) }, "1s", interval).Should(Equal(2))
}

func TestTaskAlerts_successIsSentUnlessTheTemplateSuppressesIt(t *testing.T) {
	alertUser(t, "cleo", true)
	p := alertProject(t, "alerts-ok", true, "", "cleo")
	p.template("quiet", func(s *bastionv1.TemplateSpec) { s.SuppressSuccessAlerts = true })
	p.task("loud-run", "deploy-site", nil)
	p.task("quiet-run", "quiet", nil)
	p.runToEnd("loud-run", true)
	p.runToEnd("quiet-run", true)

	p.g.Expect(alerted(p.finished("quiet-run"))).To(BeFalse(), "a suppressed success queues nothing")
	p.g.Expect(alerted(p.finished("loud-run"))).To(BeTrue())
	p.g.Eventually(func() []alerttest.Mail { return mailsOf("alerts-ok") }, timeout, interval).Should(HaveLen(1))
	p.g.Expect(mailsOf("alerts-ok")[0].Subject()).To(HavePrefix("[Project alerts-ok] deploy-site succeeded"))
	p.g.Expect(chatsOf(suiteTelegram, "alerts-ok")).To(BeEmpty(), "the project has no chat id")
}

func TestTaskAlerts_aProjectWithAlertOffAndStoppedTasksSendNone(t *testing.T) {
	alertUser(t, "dora", true)
	off := alertProject(t, "alerts-off", false, "-1", "dora")
	off.task("failing", "deploy-site", nil)
	off.runToEnd("failing", false)
	off.g.Expect(alerted(off.finished("failing"))).To(BeFalse())

	on := alertProject(t, "alerts-stop", true, "-2", "dora")
	on.task("stuck", "deploy-site", nil)
	on.startPod("stuck")
	on.waitStatus("stuck", bastionv1.TaskRunning)
	on.update("stuck", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopForce })
	on.g.Expect(alerted(on.finished("stuck"))).To(BeFalse(), "stopped tasks send nothing without --alert-on-stopped")

	// The marks are written before anything is queued, so an unmarked
	// finished task sent nothing; the servers agree.
	for _, project := range []string{"alerts-off", "alerts-stop"} {
		off.g.Expect(mailsOf(project)).To(BeEmpty())
		off.g.Expect(chatsOf(suiteTelegram, project)).To(BeEmpty())
		off.g.Expect(chatsOf(suiteWebhook, project)).To(BeEmpty())
	}
}

func TestTaskAlerts_aDeadMailServerNeverDelaysTheTaskAndFailsAsAnEvent(t *testing.T) {
	alertUser(t, "emil", true)
	p := alertProject(t, "alerts-dead", true, "-3", "emil")
	suiteSMTP.SetDead(true)
	suiteTelegram.Answer(401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
	t.Cleanup(func() { suiteSMTP.SetDead(false); suiteTelegram.Answer(200, `{"ok":true,"result":{}}`) })
	before := suiteSMTP.Connections()

	p.task("doomed", "deploy-site", nil)
	key := p.key("doomed")
	p.runToEnd("doomed", false)
	p.g.Expect(alerted(p.finished("doomed"))).To(BeTrue())
	// Three tries of 400 ms with 300 and 600 ms between them: the task's
	// finish was complete long before they ran out.
	events := func() string {
		list, err := suiteStore.Events(context.Background(), []int64{key.ProjectID}, 50)
		p.g.Expect(err).NotTo(HaveOccurred())
		var all []string
		for _, e := range list {
			all = append(all, e.Description)
		}
		return strings.Join(all, "\n")
	}
	p.g.Expect(events()).NotTo(ContainSubstring("alert to"), "the task finished before the first retry")

	p.g.Eventually(events, timeout, interval).Should(And(
		ContainSubstring("alert to emil@example.com failed: "),
		ContainSubstring("alert to Telegram chat -3 failed: Telegram answered 401: Unauthorized"),
	))
	p.g.Expect(suiteSMTP.Connections()-before).To(Equal(3), "three tries")
	p.g.Expect(mailsOf("alerts-dead")).To(BeEmpty())
	p.g.Expect(suiteLogs.String()).To(ContainSubstring("alert failed after retries"), "the logs were captured")

	for _, secret := range []string{suiteSMTPPassword, suiteBotToken, "suite-bot-token"} {
		p.g.Expect(events()).NotTo(ContainSubstring(secret))
		p.g.Expect(suiteLogs.String()).NotTo(ContainSubstring(secret))
	}
}
