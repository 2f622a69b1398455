package controllers_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// kubectlTable is the default output of `kubectl get`: the headers, and
// each row as header -> cell.
type kubectlTable struct {
	headers []string
	rows    []map[string]string
}

// columnGap separates kubectl's columns: at least two spaces (one space
// may sit inside a header such as DISPLAY NAME, or inside a value).
var columnGap = regexp.MustCompile(`\S+( \S+)*`)

// parseKubectlTable cuts every line at the offsets where the header's
// columns start, so that values with single spaces ("0 3 * * *") stay whole.
func parseKubectlTable(out string) kubectlTable {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return kubectlTable{}
	}
	header := lines[0]
	spans := columnGap.FindAllStringIndex(header, -1)
	table := kubectlTable{}
	for _, s := range spans {
		table.headers = append(table.headers, header[s[0]:s[1]])
	}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, s := range spans {
			start := s[0]
			end := len(line)
			if i+1 < len(spans) {
				end = min(spans[i+1][0], len(line))
			}
			cell := ""
			if start < len(line) {
				cell = strings.TrimSpace(line[start:end])
			}
			row[table.headers[i]] = cell
		}
		table.rows = append(table.rows, row)
	}
	return table
}

// row finds the row of the object called name.
func (t kubectlTable) row(name string) map[string]string {
	for _, r := range t.rows {
		if r["NAME"] == name {
			return r
		}
	}
	return nil
}

// kubectlAge is how kubectl shows a creation time: 5s, 3m2s, 4h, 2d...
var kubectlAge = MatchRegexp(`^[0-9]+[smhdy]([0-9]+[smh])?$`)

// The printer columns of every kind, read through the real kubectl from
// the sample objects: what `kubectl get` shows must be useful.
func TestPrintColumns_kubectlGetShowsUsefulColumns(t *testing.T) {
	k := newKubectl(t)
	applySamplesWithKubectl(t, k)

	cases := []struct {
		resource string
		name     string
		headers  []string
		cells    map[string]gomegatypes.GomegaMatcher
	}{
		{"projects", sampleProject,
			[]string{"NAME", "DISPLAY NAME", "NAMESPACE", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Demo"), "NAMESPACE": Equal(sampleNamespace), "READY": Equal("True"), "AGE": kubectlAge}},
		{"users", "ops",
			[]string{"NAME", "USERNAME", "FULL NAME", "EMAIL", "ADMIN", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"USERNAME": Equal("ops"), "FULL NAME": Equal("Operations"), "EMAIL": Equal("ops@example.com"), "AGE": kubectlAge}},
		{"repositories", "demo-playbooks",
			[]string{"NAME", "DISPLAY NAME", "URL", "BRANCH", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Demo playbooks"), "URL": Equal("https://github.com/bastion-dev/demo-playbooks.git"), "BRANCH": Equal("main"), "AGE": kubectlAge}},
		{"inventories", "staging",
			[]string{"NAME", "DISPLAY NAME", "TYPE", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Staging"), "TYPE": Equal("static"), "AGE": kubectlAge}},
		{"environments", "staging",
			[]string{"NAME", "DISPLAY NAME", "SECRET", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Staging"), "AGE": kubectlAge}},
		{"views", "release",
			[]string{"NAME", "TITLE", "POSITION", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"TITLE": Equal("Release"), "POSITION": Equal("0"), "AGE": kubectlAge}},
		{"templates", "ping",
			[]string{"NAME", "DISPLAY NAME", "TYPE", "APP", "PLAYBOOK", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Ping the hosts"), "TYPE": BeEmpty(), "APP": Equal("ansible"), "PLAYBOOK": Equal("ping.yml"), "AGE": kubectlAge}},
		{"templates", "build",
			[]string{"NAME", "DISPLAY NAME", "TYPE", "APP", "PLAYBOOK"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Build the app"), "TYPE": Equal("build"), "PLAYBOOK": Equal("build.yml")}},
		{"templates", "deploy",
			[]string{"NAME", "DISPLAY NAME", "TYPE", "APP", "PLAYBOOK"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("Deploy to staging"), "TYPE": Equal("deploy"), "PLAYBOOK": Equal("deploy.yml")}},
		{"schedules", "nightly-build",
			[]string{"NAME", "TEMPLATE", "CRON", "ACTIVE", "NEXT RUN", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"TEMPLATE": Equal("build"), "CRON": Equal("0 3 * * *"), "ACTIVE": Equal("false"), "NEXT RUN": BeEmpty() /* inactive */, "AGE": kubectlAge}},
		{"integrations", "github-push",
			[]string{"NAME", "DISPLAY NAME", "TEMPLATE", "AUTH", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"DISPLAY NAME": Equal("GitHub push to main"), "TEMPLATE": Equal("build"), "AUTH": Equal("github"), "AGE": kubectlAge}},
		{"integrationaliases", "github-push",
			[]string{"NAME", "INTEGRATION", "READY", "AGE"},
			map[string]gomegatypes.GomegaMatcher{"INTEGRATION": Equal("github-push"), "AGE": kubectlAge}},
	}
	for _, c := range cases {
		t.Run(c.resource+"/"+c.name, func(t *testing.T) {
			g := NewWithT(t)
			args := []string{"get", c.resource, c.name}
			if c.resource != "projects" && c.resource != "users" {
				args = append(args, "-n", sampleNamespace)
			}
			table := parseKubectlTable(k.mustRun(args...))
			for _, h := range c.headers {
				g.Expect(table.headers).To(ContainElement(h))
			}
			g.Expect(table.headers).To(HaveLen(len(distinctStrings(table.headers))), "a header appears twice: %v", table.headers)
			row := table.row(c.name)
			g.Expect(row).NotTo(BeNil(), "no row for %s in %v", c.name, table.rows)
			for header, m := range c.cells {
				g.Expect(row[header]).To(m, "column %s of %s/%s", header, c.resource, c.name)
			}
		})
	}
}

// The next run of an active schedule is in the future, which a "date"
// column cannot show (kubectl prints <invalid>): NEXT RUN is a timestamp.
func TestPrintColumns_scheduleShowsTheNextRunAsATime(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKubectl(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "printcolumns"}}
	g.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
	// February 29th: the suite's clock is never stepped that far, so it
	// does not fire.
	schedule := &bastionv1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "leap-day"},
		Spec:       bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: "tpl"}, CronFormat: "0 0 29 2 *", Active: true},
	}
	g.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, schedule))).To(Succeed())

	g.Eventually(func(g Gomega) {
		// The Schedule controller sets the next run; should it not have
		// yet, the test sets one as it would.
		current := &bastionv1.Schedule{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(schedule), current)).To(Succeed())
		if current.Status.NextRunTime == nil {
			next := metav1.NewTime(time.Now().Add(24 * time.Hour).Truncate(time.Hour))
			current.Status.NextRunTime = &next
			g.Expect(k8sClient.Status().Update(ctx, current)).To(Succeed())
		}
		table := parseKubectlTable(k.mustRun("get", "schedules", "-n", ns.Name))
		row := table.row("leap-day")
		g.Expect(row).NotTo(BeNil(), "%v", table.rows)
		g.Expect(row["ACTIVE"]).To(Equal("true"))
		g.Expect(row["NEXT RUN"]).To(MatchRegexp(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`))
	}, timeout, interval).Should(Succeed())
}

// Issue 3: "the printer columns show status, template and age". The task
// engine may or may not have run the sample task yet; if it has not set a
// status, the test sets one through the status subresource, as the engine
// would.
func TestPrintColumns_taskShowsTemplateStatusAndAge(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKubectl(t)
	applySamplesWithKubectl(t, k)

	key := client.ObjectKey{Namespace: sampleNamespace, Name: "ping-1"}
	states := []string{}
	for _, s := range []bastionv1.TaskStatusValue{
		bastionv1.TaskWaiting, bastionv1.TaskStarting, bastionv1.TaskWaitingConfirmation, bastionv1.TaskConfirmed,
		bastionv1.TaskRunning, bastionv1.TaskSuccess, bastionv1.TaskError, bastionv1.TaskStopping, bastionv1.TaskStopped,
	} {
		states = append(states, string(s))
	}

	g.Eventually(func(g Gomega) {
		task := &bastionv1.Task{}
		g.Expect(k8sClient.Get(ctx, key, task)).To(Succeed())
		if task.Status.Status == "" {
			task.Status.Status = bastionv1.TaskWaiting
			g.Expect(k8sClient.Status().Update(ctx, task)).To(Succeed())
		}
		table := parseKubectlTable(k.mustRun("get", "tasks", "-n", sampleNamespace))
		g.Expect(table.headers).To(HaveExactElements("NAME", "TEMPLATE", "STATUS", "VERSION", "USER", "AGE"))
		row := table.row("ping-1")
		g.Expect(row).NotTo(BeNil(), "%v", table.rows)
		g.Expect(row["TEMPLATE"]).To(Equal("ping"))
		g.Expect(row["STATUS"]).To(BeElementOf(states))
		g.Expect(row["AGE"]).To(kubectlAge)
	}, timeout, interval).Should(Succeed())
}

// Several kinds at once, as an operator would look at a project.
func TestPrintColumns_kubectlGetSeveralKinds(t *testing.T) {
	g := NewWithT(t)
	k := newKubectl(t)
	applySamplesWithKubectl(t, k)
	out := k.mustRun("get", "tasks,templates,schedules,repositories,inventories,environments,views,integrations,integrationaliases", "-n", sampleNamespace)
	for _, want := range []string{
		"task.automation.bastion.dev/ping-1",
		"template.automation.bastion.dev/ping",
		"template.automation.bastion.dev/build",
		"template.automation.bastion.dev/deploy",
		"schedule.automation.bastion.dev/nightly-build",
		"repository.automation.bastion.dev/demo-playbooks",
		"inventory.automation.bastion.dev/staging",
		"environment.automation.bastion.dev/staging",
		"view.automation.bastion.dev/release",
		"integration.automation.bastion.dev/github-push",
		"integrationalias.automation.bastion.dev/github-push",
	} {
		g.Expect(out).To(ContainSubstring(want))
	}
	// Short names work too.
	out = k.mustRun("get", "btask,btpl,bsched,brepo,binv,benv,bview,bint,balias", "-n", sampleNamespace, "-o", "name")
	g.Expect(strings.Fields(out)).To(ContainElements(
		"task.automation.bastion.dev/ping-1", "template.automation.bastion.dev/ping",
		"schedule.automation.bastion.dev/nightly-build", "repository.automation.bastion.dev/demo-playbooks",
		"inventory.automation.bastion.dev/staging", "environment.automation.bastion.dev/staging",
		"view.automation.bastion.dev/release", "integration.automation.bastion.dev/github-push",
		"integrationalias.automation.bastion.dev/github-push"))
	out = k.mustRun("get", "bproj,buser", "-o", "name")
	g.Expect(out).To(ContainSubstring("project.automation.bastion.dev/" + sampleProject))
	g.Expect(out).To(ContainSubstring("user.automation.bastion.dev/ops"))

	// Keys are Secrets; their type is a label kubectl can show.
	keys := parseKubectlTable(k.mustRun("get", "secrets", "-n", sampleNamespace,
		"-l", bastionv1.LabelKeyType, "-L", bastionv1.LabelKeyType))
	g.Expect(keys.headers).To(ContainElement("KEY-TYPE"))
	g.Expect(keys.row("no-key")).To(HaveKeyWithValue("KEY-TYPE", "none"))
	g.Expect(keys.row("deploy-login")).To(HaveKeyWithValue("KEY-TYPE", "login_password"))
	g.Expect(keys.row("deploy-login")).To(HaveKeyWithValue("TYPE", "kubernetes.io/basic-auth"))
}

func distinctStrings(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}
