package apiserver_test

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// snapshot is every view, schedule, integration and alias of a namespace
// at its generation (which only a spec change moves; reconcilers write
// status meanwhile): a refused request must leave it as it was.
func (e *apiEnv) snapshot(t *testing.T, ns string) string {
	t.Helper()
	lists := []client.ObjectList{&bastionv1.ViewList{}, &bastionv1.ScheduleList{}, &bastionv1.IntegrationList{}, &bastionv1.IntegrationAliasList{}}
	var out []string
	for _, list := range lists {
		if err := e.K8s.List(t.Context(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		switch l := list.(type) {
		case *bastionv1.ViewList:
			for _, o := range l.Items {
				out = append(out, "view "+o.Name+"@"+strconv.FormatInt(o.Generation, 10))
			}
		case *bastionv1.ScheduleList:
			for _, o := range l.Items {
				out = append(out, "schedule "+o.Name+"@"+strconv.FormatInt(o.Generation, 10))
			}
		case *bastionv1.IntegrationList:
			for _, o := range l.Items {
				out = append(out, "integration "+o.Name+"@"+strconv.FormatInt(o.Generation, 10))
			}
		case *bastionv1.IntegrationAliasList:
			for _, o := range l.Items {
				out = append(out, "alias "+o.Name+"@"+strconv.FormatInt(o.Generation, 10))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestValidation_viewsSchedulesIntegrationsMatchersValuesSpec5AndNothingWritten(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "Validated resources")
	view := &bastionv1.View{Spec: bastionv1.ViewSpec{Title: "Ops"}}
	viewID := e.seed(t, p.obj, view, ids.CounterView)
	_, tplID := e.seedTemplate(t, p.obj, "Site", "")
	_, sshID := e.seedKey(t, p.obj, bastionv1.KeyTypeSSH, "")
	_, keyID := e.seedKey(t, p.obj, bastionv1.KeyTypeLoginPassword, "pw")
	sch := &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: "site"}, CronFormat: "0 0 * * *", Active: true}}
	schID := e.seed(t, p.obj, sch, ids.CounterSchedule)
	_, inID, matcherID, valueID := e.seedIntegration(t, p.obj, bastionv1.IntegrationSpec{})

	r := strings.NewReplacer("{view}", itoa(viewID), "{tpl}", itoa(tplID), "{ssh}", itoa(sshID), "{key}", itoa(keyID),
		"{sch}", itoa(schID), "{in}", itoa(inID), "{m}", itoa(matcherID), "{v}", itoa(valueID))
	tests := []struct {
		method, path, body, want string
	}{
		// Views.
		{"POST", "/views", `{"title":""}`, "Title is required"},
		{"POST", "/views", `{"title":"   "}`, "Title is required"},
		{"PUT", "/views/{view}", `{"title":""}`, "Title is required"},
		{"POST", "/views", `{"title":"x","position":-1}`, "Must be 0 or greater"},
		{"POST", "/views", `{"title":5}`, "invalid JSON: title must be a string, not a number"},
		{"POST", "/views/positions", `{"{view}":3,"999999":1}`, "view 999999 does not exist in this project"},
		{"POST", "/views/positions", `{"{view}":-1}`, "Must be 0 or greater"},
		{"POST", "/views/positions", `{"ops":1}`, `invalid view id "ops": must be a positive integer`},
		{"PUT", "/views/{view}", `{"id":999999,"title":"x"}`, "the body's id 999999 is not the URL's id {view}"},

		// Schedules.
		{"POST", "/schedules", `{"cron_format":"0 0 * * *"}`, "Template is required"},
		{"POST", "/schedules", `{"template_id":999999,"cron_format":"0 0 * * *"}`, "template_id 999999 does not exist in this project"},
		{"POST", "/schedules", `{"template_id":{tpl},"cron_format":"* * *"}`, "Cron: expected exactly 5 fields, found 3: [* * *]"},
		{"POST", "/schedules", `{"template_id":{tpl},"cron_format":""}`, "Cron: empty spec string"},
		{"POST", "/schedules", `{"template_id":{tpl},"cron_format":"@every 5m"}`, `Cron: @every is not supported: use five fields, for example "*/5 * * * *"`},
		{"POST", "/schedules", `{"template_id":{tpl},"cron_format":"0 0 * * *","repository_id":999999}`, "repository_id 999999 does not exist in this project"},
		{"PUT", "/schedules/{sch}", `{"template_id":{tpl},"cron_format":"61 * * * *"}`, "Cron: end of range (61) above maximum (59): 61"},
		{"PUT", "/schedules/{sch}", `{"template_id":0,"cron_format":"0 0 * * *"}`, "Template is required"},
		{"PUT", "/schedules/{sch}/active", `{}`, "active is required"},
		{"POST", "/schedules/validate", `{"cron_format":"0 0 30 2 *"}`, `Cron: "0 0 30 2 *" matches no date`},

		// Integrations.
		{"POST", "/integrations", `{"name":""}`, "Name is required"},
		{"POST", "/integrations", `{"name":"x","auth_method":"github"}`, "Auth secret is required"},
		{"POST", "/integrations", `{"name":"x","auth_method":"token","auth_secret_id":{key}}`, "Auth header is required"},
		{"POST", "/integrations", `{"name":"x","auth_method":"hmac","auth_secret_id":{key},"auth_header":" "}`, "Auth header is required"},
		{"POST", "/integrations", `{"name":"x","auth_method":"basic"}`, `auth_method must be empty, github, token or hmac, not "basic"`},
		{"POST", "/integrations", `{"name":"x","template_id":999999}`, "template_id 999999 does not exist in this project"},
		{"POST", "/integrations", `{"name":"x","auth_method":"github","auth_secret_id":999999}`, "auth_secret_id 999999 does not exist in this project"},
		{"POST", "/integrations", `{"name":"x","auth_method":"github","auth_secret_id":{ssh}}`, "auth_secret_id {ssh} is not a login_password key; its password is the webhook's secret"},
		{"POST", "/integrations", `{"name":"x","task_params":[1]}`, "task_params must be a JSON object"},
		{"POST", "/integrations", `{"name":"x","task_params":{"environment":"nope"}}`, "Environment and extra variables must be valid JSON"},
		{"PUT", "/integrations/{in}", `{"name":" "}`, "Name is required"},
		{"PUT", "/integrations/{in}", `{"id":999999,"name":"x"}`, "the body's id 999999 is not the URL's id {in}"},

		// Matchers.
		{"POST", "/integrations/{in}/matchers", `{}`, "Name is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m"}`, "Match type is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"body"}`, "Key is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"body","key":"ref"}`, "Method is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"body","key":"ref","method":"equals"}`, "Value is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"body","key":"ref","method":"equals","value":"x"}`, "Body data type is required"},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"query","key":"ref","method":"equals","value":"x"}`, `match_type must be body or header, not "query"`},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"header","key":"ref","method":"regex","value":"x"}`, `method must be equals, unequals or contains, not "regex"`},
		{"POST", "/integrations/{in}/matchers", `{"name":"m","match_type":"body","body_data_type":"xml","key":"ref","method":"equals","value":"x"}`, `body_data_type must be json or string, not "xml"`},
		{"POST", "/integrations/{in}/matchers", `{"integration_id":999999,"name":"m"}`, "the body's id 999999 is not the URL's id {in}"},
		{"PUT", "/integrations/{in}/matchers/{m}", `{"name":""}`, "Name is required"},

		// Extracted values.
		{"POST", "/integrations/{in}/values", `{}`, "Name is required"},
		{"POST", "/integrations/{in}/values", `{"name":"v"}`, "Value source is required"},
		{"POST", "/integrations/{in}/values", `{"name":"v","value_source":"body"}`, "Key is required"},
		{"POST", "/integrations/{in}/values", `{"name":"v","value_source":"body","key":"ref"}`, "Variable is required"},
		{"POST", "/integrations/{in}/values", `{"name":"v","value_source":"body","key":"ref","variable":"REF"}`, "Body data type is required"},
		{"POST", "/integrations/{in}/values", `{"name":"v","value_source":"cookie","key":"ref","variable":"REF"}`, `value_source must be body or header, not "cookie"`},
		{"PUT", "/integrations/{in}/values/{v}", `{"name":"v"}`, "Value source is required"},
	}

	before := e.snapshot(t, p.ns)
	for _, tt := range tests {
		path, want := p.base+r.Replace(tt.path), r.Replace(tt.want)
		code, data := p.b.call(tt.method, path, []byte(r.Replace(tt.body)))
		if code != http.StatusBadRequest {
			t.Errorf("%s %s %s = %d %s, want 400", tt.method, tt.path, tt.body, code, data)
			continue
		}
		if got := errorOf(t, data); got != want {
			t.Errorf("%s %s %s: error %q, want %q", tt.method, tt.path, tt.body, got, want)
		}
	}
	if after := e.snapshot(t, p.ns); after != before {
		t.Errorf("refused requests wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
