package apiserver_test

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// The permission matrix of views, schedules and integrations (docs/features.md §6):
// members read; views and schedules need manageProjectResources (manager,
// owner); integrations need updateProject (owner), and so do writes to
// their matchers and extracted values and every alias route, reads
// included: an alias URL is a credential (issue #19, item 4). Incoming
// webhooks need no sign-in at all.

type seeder = func(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string

var (
	withView seeder = func(t *testing.T, e *apiEnv, p *bastionv1.Project) map[string]string {
		id := e.seed(t, p, &bastionv1.View{Spec: bastionv1.ViewSpec{Title: "Ops"}}, ids.CounterView)
		return map[string]string{"view": itoa(id)}
	}
	withSchedule seeder = func(t *testing.T, e *apiEnv, p *bastionv1.Project) map[string]string {
		tpl, tplID := e.seedTemplate(t, p, "Nightly", "")
		sch := &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: tpl.Name}, CronFormat: "0 3 * * *", Active: true}}
		return map[string]string{"template": itoa(tplID), "schedule": itoa(e.seed(t, p, sch, ids.CounterSchedule))}
	}
	withIntegration seeder = func(t *testing.T, e *apiEnv, p *bastionv1.Project) map[string]string {
		in, id, matcherID, valueID := e.seedIntegration(t, p, bastionv1.IntegrationSpec{})
		_, aliasID := e.seedAlias(t, p, in)
		_, projectAliasID := e.seedAlias(t, p, nil)
		return map[string]string{"integration": itoa(id), "matcher": itoa(matcherID), "value": itoa(valueID),
			"alias": itoa(aliasID), "project_alias": itoa(projectAliasID)}
	}
	// withHook is an open integration (no auth, no matchers) and its alias.
	withHook seeder = func(t *testing.T, e *apiEnv, p *bastionv1.Project) map[string]string {
		tpl, _ := e.seedTemplate(t, p, "Hooked", "")
		in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{DisplayName: "Open", TemplateRef: &bastionv1.ObjectRef{Name: tpl.Name}}}
		e.seed(t, p, in, ids.CounterIntegration)
		alias, _ := e.seedAlias(t, p, in)
		return map[string]string{"hook_alias": alias.Spec.Alias}
	}
)

const (
	matcherBody = `{"name":"m","match_type":"header","key":"X-Event","method":"equals","value":"push"}`
	valueBody   = `{"name":"v","value_source":"header","key":"X-Delivery","variable":"DELIVERY"}`
)

var schedintMatrix = []matrixRow{
	// Views.
	{"GET", "/api/project/{project}/views", "", members(200), nil, false},
	{"POST", "/api/project/{project}/views", `{"title":"New"}`, needs(201, manager, owner), nil, false},
	{"POST", "/api/project/{project}/views/positions", `{"{view}":2}`, needs(204, manager, owner), withView, false},
	{"GET", "/api/project/{project}/views/{view}", "", members(200), withView, false},
	{"GET", "/api/project/{project}/views/{view}/templates", "", members(200), withView, false},
	{"PUT", "/api/project/{project}/views/{view}", `{"title":"Renamed"}`, needs(204, manager, owner), withView, false},
	{"DELETE", "/api/project/{project}/views/{view}", "", needs(204, manager, owner), withView, false},

	// Schedules.
	{"GET", "/api/project/{project}/schedules", "", members(200), nil, false},
	{"POST", "/api/project/{project}/schedules/validate", `{"cron_format":"0 0 * * *"}`, members(200), nil, false},
	{"POST", "/api/project/{project}/schedules", `{"template_id":{template},"cron_format":"0 0 * * *"}`, needs(201, manager, owner), withSchedule, false},
	{"GET", "/api/project/{project}/schedules/{schedule}", "", members(200), withSchedule, false},
	{"PUT", "/api/project/{project}/schedules/{schedule}", `{"template_id":{template},"cron_format":"0 1 * * *"}`, needs(204, manager, owner), withSchedule, false},
	{"PUT", "/api/project/{project}/schedules/{schedule}/active", `{"active":false}`, needs(204, manager, owner), withSchedule, false},
	{"DELETE", "/api/project/{project}/schedules/{schedule}", "", needs(204, manager, owner), withSchedule, false},

	// Integrations and aliases.
	{"GET", "/api/project/{project}/integrations", "", members(200), nil, false},
	{"POST", "/api/project/{project}/integrations", `{"name":"Hook"}`, needs(201, owner), nil, false},
	{"GET", "/api/project/{project}/integrations/aliases", "", needs(200, owner), nil, false},
	{"POST", "/api/project/{project}/integrations/aliases", "", needs(201, owner), nil, false},
	{"DELETE", "/api/project/{project}/integrations/aliases/{project_alias}", "", needs(204, owner), withIntegration, false},
	{"GET", "/api/project/{project}/integrations/{integration}", "", members(200), withIntegration, false},
	{"GET", "/api/project/{project}/integrations/{integration}/refs", "", members(200), withIntegration, false},
	{"PUT", "/api/project/{project}/integrations/{integration}", `{"name":"Renamed"}`, needs(204, owner), withIntegration, false},
	{"DELETE", "/api/project/{project}/integrations/{integration}", "", needs(204, owner), withIntegration, false},
	{"GET", "/api/project/{project}/integrations/{integration}/aliases", "", needs(200, owner), withIntegration, false},
	{"POST", "/api/project/{project}/integrations/{integration}/aliases", "", needs(201, owner), withIntegration, false},
	{"DELETE", "/api/project/{project}/integrations/{integration}/aliases/{alias}", "", needs(204, owner), withIntegration, false},

	// Matchers and extracted values: every member reads, owners write.
	{"GET", "/api/project/{project}/integrations/{integration}/matchers", "", members(200), withIntegration, false},
	{"POST", "/api/project/{project}/integrations/{integration}/matchers", matcherBody, needs(201, owner), withIntegration, false},
	{"PUT", "/api/project/{project}/integrations/{integration}/matchers/{matcher}", matcherBody, needs(204, owner), withIntegration, false},
	{"DELETE", "/api/project/{project}/integrations/{integration}/matchers/{matcher}", "", needs(204, owner), withIntegration, false},
	{"GET", "/api/project/{project}/integrations/{integration}/values", "", members(200), withIntegration, false},
	{"POST", "/api/project/{project}/integrations/{integration}/values", valueBody, needs(201, owner), withIntegration, false},
	{"PUT", "/api/project/{project}/integrations/{integration}/values/{value}", valueBody, needs(204, owner), withIntegration, false},
	{"DELETE", "/api/project/{project}/integrations/{integration}/values/{value}", "", needs(204, owner), withIntegration, false},

	// Incoming webhooks: the alias is the credential; nobody signs in.
	{"POST", "/api/integrations/{hook_alias}", `{}`, expect{"*": 204}, withHook, false},
}

func TestPermissionMatrix_schedint(t *testing.T) {
	runMatrix(t, schedintMatrix)
}
