package apiserver

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/bastion-dev/bastion/internal/backup"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// openAPIOps is the one table of what /api/openapi.json says about each
// route beyond its path: keyed by method and documented path (chi's
// pattern without the trailing slash of a mounted "/", see
// documentedPaths), with the Go types the handler decodes and encodes.
// A route of the tree missing here, or an entry of no route, fails
// TestOpenAPI_everyRouteIsDocumentedAndEveryDocumentedRouteIsServed.

// authKind is who may call a route.
type authKind int

const (
	// signedIn: a session cookie or an API token (the zero value: most
	// routes are behind sign-in).
	signedIn authKind = iota
	// public: anyone.
	public
	// runnerToken: a runner, with its task's token as a bearer token.
	runnerToken
	// webhookSecret: anyone over HTTP; the integration checks its own
	// secret (token, HMAC or basic auth) in the handler.
	webhookSecret
)

// webhookAuth is what a webhook's operation says of its authentication,
// which OpenAPI's schemes cannot name.
const webhookAuth = "Authenticated by the integration's own secret (a token, an HMAC signature or " +
	"basic auth, as the integration says), not by a session. "

var securitySchemes = map[string]*securityScheme{
	"session": {Type: "apiKey", In: "cookie", Name: sessionCookie,
		Description: "The session cookie that POST /auth/login sets (HttpOnly)."},
	"apiToken": {Type: "http", Scheme: "bearer",
		Description: "An API token made with POST /user/tokens: Authorization: Bearer <token>."},
	"runnerToken": {Type: "http", Scheme: "bearer",
		Description: "The task's own token, which only its runner holds."},
}

// requirement is the operation's security: any of the listed schemes.
func (a authKind) requirement() []map[string][]string {
	switch a {
	case signedIn:
		return []map[string][]string{{"session": {}}, {"apiToken": {}}}
	case runnerToken:
		return []map[string][]string{{"runnerToken": {}}}
	}
	return []map[string][]string{} // public and webhooks: no scheme of OpenAPI's
}

// opDoc is one route's entry.
type opDoc struct {
	method, path         string
	summary, description string
	auth                 authKind
	// request is a value of the body's Go type; nil: no body.
	request      any
	optionalBody bool
	// status is the success status (200 when 0); response a value of
	// the answer's Go type (nil: no body), or text for text/plain.
	status   int
	response any
	text     bool
	query    []queryParam
	// textIDs are path parameters named like ids that are not numbers.
	textIDs []string
}

type queryParam struct {
	name, description string
	example           any // a value of its Go type
}

func op(method, path, summary string) opDoc {
	return opDoc{method: method, path: path, summary: summary}
}

func (o opDoc) as(a authKind) opDoc             { o.auth = a; return o }
func (o opDoc) takes(v any) opDoc               { o.request = v; return o }
func (o opDoc) mayTake(v any) opDoc             { o.request, o.optionalBody = v, true; return o }
func (o opDoc) answers(status int, v any) opDoc { o.status, o.response = status, v; return o }
func (o opDoc) text200() opDoc                  { o.text = true; return o }
func (o opDoc) note(description string) opDoc   { o.description = description; return o }
func (o opDoc) withQuery(q ...queryParam) opDoc { o.query = q; return o }
func (o opDoc) noContent() opDoc                { o.status = http.StatusNoContent; return o }
func (o opDoc) redirects() opDoc                { o.status = http.StatusFound; return o }
func (o opDoc) textID(name string) opDoc        { o.textIDs = append(o.textIDs, name); return o }
func (o opDoc) key() string                     { return o.method + " " + o.path }

const (
	get, post, put, del  = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete
	status200, status201 = http.StatusOK, http.StatusCreated
)

const webhookAnswers = "204 when tasks started; 200 with {\"message\"} saying why when none did."

var taskListQuery = []queryParam{
	{"limit", fmt.Sprintf("how many of the newest tasks, 1 to %d (the default)", taskListLimit), 0},
	{"status", "only tasks of this status (success: the builds a deploy can deploy)", ""},
}

// openAPIOps lists every entry.
func openAPIOps() []opDoc {
	ops := []opDoc{
		// Anyone.
		op(get, "/ping", "Answer pong").as(public).text200(),
		op(get, "/info", "The server's version and how to sign in").as(public).answers(status200, info{}),
		op(get, "/openapi.json", "This document").as(public).answers(status200, map[string]any{}),
		op(get, "/auth/login", "The sign-in methods").as(public).answers(status200, loginOptions{}),
		op(post, "/auth/login", "Sign in with a password; sets the session cookie").as(public).takes(loginRequest{}).noContent(),
		op(post, "/auth/logout", "Sign out; ends the session").as(public).noContent(),
		op(get, "/auth/oidc/{provider}/login", "Start single sign-on with a provider").as(public).redirects(),
		op(get, "/auth/oidc/{provider}/redirect", "The provider's callback; signs in and redirects to the console").as(public).redirects(),
		op(get, "/integrations/{alias}", "Incoming webhook of an integration alias").as(webhookSecret).noContent().
			note(webhookAuth + webhookAnswers),
		op(post, "/integrations/{alias}", "Incoming webhook of an integration alias").as(webhookSecret).
			takes(map[string]any{}).noContent().note(webhookAuth + webhookAnswers),
		op(post, "/runner/tasks/{namespace}/{name}/events", "A runner reports output lines and its phase").
			as(runnerToken).takes(runproto.Batch{}).answers(status200, runproto.Reply{}),

		// Signed in.
		op(get, "/user", "The signed-in user").answers(status200, userJSON{}),
		op(get, "/user/", "The signed-in user (Semaphore's clients also ask with the slash)").answers(status200, userJSON{}),
		op(get, "/auth/oidc/{provider}/link", "Link the signed-in user to a single sign-on provider").redirects(),
		op(get, "/user/tokens", "The signed-in user's API tokens").answers(status200, []tokenJSON{}),
		op(post, "/user/tokens", "Make an API token; the only answer that shows it whole").answers(status201, tokenJSON{}),
		op(del, "/user/tokens/{token_id}", "Expire an API token").textID("token_id").noContent(),
		op(get, "/users", "List users").answers(status200, []userBrief{}).
			note("Admins get every field of User; others id, username and name."),
		op(post, "/users", "Create a user (admins)").takes(userRequest{}).answers(status201, userJSON{}),
		op(get, "/users/{user_id}", "Get a user").answers(status200, userJSON{}),
		op(put, "/users/{user_id}", "Update a user").takes(userRequest{}).noContent(),
		op(del, "/users/{user_id}", "Delete a user (admins)").noContent(),
		op(post, "/users/{user_id}/password", "Set a user's password").takes(passwordRequest{}).noContent(),
		op(get, "/projects", "The projects the user belongs to (admins: all)").answers(status200, []projectJSON{}),
		op(post, "/projects", "Create a project (demo: true fills it with the demo resources)").
			takes(projectRequest{}).answers(status201, projectJSON{}),
		op(post, "/projects/restore", "Restore a project backup as a new project").
			takes(backup.Backup{}).answers(status200, projectJSON{}),
		op(get, "/events", "The events of the projects the user is a member of").answers(status200, []eventJSON{}),
		op(get, "/events/last", "The latest events of the user's projects").answers(status200, []eventJSON{}),
		op(get, "/apps", "The kinds of template (apps) and their looks").answers(status200, []appJSON{}),
		op(get, "/task_pods/options", "The runner images and service accounts projects and templates may choose").answers(status200, taskPodOptionsJSON{}),
		op(get, "/ws", "The live-update websocket").answers(http.StatusSwitchingProtocols, nil).
			note("Upgrades to a websocket carrying the events and task output of the user's projects."),

		// A project and its members.
		op(get, "/project/{id}", "Get a project").answers(status200, projectJSON{}),
		op(put, "/project/{id}", "Update a project").takes(projectRequest{}).noContent(),
		op(del, "/project/{id}", "Delete a project and everything in it").noContent(),
		op(get, "/project/{id}/role", "The user's role and permissions in the project").answers(status200, roleJSON{}),
		op(get, "/project/{id}/backup", "Download the project's backup (no secrets)").answers(status200, backup.Backup{}),
		op(get, "/project/{id}/events/last", "The project's latest events").answers(status200, []eventJSON{}),
		op(del, "/project/{id}/me", "Leave the project").noContent(),
		op(get, "/project/{id}/users", "The project's team").answers(status200, []memberJSON{}),
		op(post, "/project/{id}/users", "Add a member").takes(memberRequest{}).noContent(),
		op(put, "/project/{id}/users/{user_id}", "Change a member's role").takes(memberRequest{}).noContent(),
		op(del, "/project/{id}/users/{user_id}", "Remove a member").noContent(),

		// Beyond CRUD: schedules, templates, views.
		op(post, "/project/{id}/schedules/validate", "Check a cron expression").takes(cronRequest{}).answers(status200, nil),
		op(put, "/project/{id}/schedules/{schedule_id}/active", "Turn a schedule on or off").
			takes(activeRequest{}).noContent(),
		op(get, "/project/{id}/templates/{template_id}/schedules", "The template's schedules").answers(status200, []scheduleJSON{}),
		op(get, "/project/{id}/templates/{template_id}/tasks", "The template's tasks, newest first").
			withQuery(taskListQuery...).answers(status200, []taskItemJSON{}),
		op(get, "/project/{id}/templates/{template_id}/tasks/last", "The template's latest tasks").
			withQuery(taskListQuery...).answers(status200, []taskItemJSON{}),
		op(get, "/project/{id}/templates/{template_id}/durations", "The template's finished runs and their durations, newest first, paged by task id").
			withQuery(queryParam{"limit", fmt.Sprintf("runs to answer, 1 to %d (default %d)", taskListLimit, durationsDefaultLimit), 0},
				queryParam{"before", "only runs whose task id is below it: the next_before of the previous page", 0}).
			answers(status200, taskDurationsJSON{}),
		op(post, "/project/{id}/views/positions", "Reorder the views: view id → position").
			takes(map[string]int32{}).noContent(),
		op(get, "/project/{id}/views/{view_id}/templates", "The templates of a view").answers(status200, []templateJSON{}),

		// Tasks.
		op(get, "/project/{id}/tasks", "The project's tasks, newest first").
			withQuery(taskListQuery...).answers(status200, []taskItemJSON{}),
		op(get, "/project/{id}/tasks/last", "The project's latest tasks").
			withQuery(taskListQuery...).answers(status200, []taskItemJSON{}),
		op(get, "/project/{id}/stats/tasks", "Finished tasks per day by result, every one of the last days, oldest first").
			withQuery(queryParam{"days", fmt.Sprintf("days to answer, today included, 1 to %d (default %d)", statsMaxDays, statsDefaultDays), 0},
				queryParam{"utc_offset", "the reader's time zone, minutes east of UTC, -840 to 840 (default 0)", 0}).
			answers(status200, taskStatsJSON{}),
		op(post, "/project/{id}/tasks", "Start a task of a template").takes(taskRequest{}).answers(status201, taskJSON{}),
		op(get, "/project/{id}/tasks/{task_id}", "Get a task").answers(status200, taskItemJSON{}),
		op(del, "/project/{id}/tasks/{task_id}", "Delete a finished task and its output").noContent(),
		op(post, "/project/{id}/tasks/{task_id}/confirm", "Confirm a task waiting for confirmation, or approve one waiting for approval").noContent(),
		op(post, "/project/{id}/tasks/{task_id}/reject", "Reject a task waiting for approval: it ends stopped with the reason").mayTake(rejectRequest{}).noContent(),
		op(post, "/project/{id}/tasks/{task_id}/stop", "Stop a task (force: at once)").mayTake(stopRequest{}).noContent(),
		op(get, "/project/{id}/tasks/{task_id}/output", "The task's output lines").
			withQuery(queryParam{"offset", "lines to skip", 0}, queryParam{"limit", fmt.Sprintf("lines to answer at most, 1 to %d (default: all)", maxOutputPage), 0}).
			answers(status200, []outputJSON{}),
		op(get, "/project/{id}/tasks/{task_id}/raw", "The task's output as plain text").text200(),
		op(get, "/project/{id}/tasks/{task_id}/stderr", "The numbers of the output lines the task's program wrote to its stderr (1 is the first line)").
			answers(status200, []int64{}),
	}
	ops = append(ops, integrationExtraDocs()...)
	return append(ops, projectResourceDocs()...)
}

// integrationExtraDocs are an integration's aliases, matchers and values.
func integrationExtraDocs() []opDoc {
	const in = "/project/{id}/integrations/{integration_id}"
	ops := []opDoc{
		op(get, "/project/{id}/integrations/aliases", "The project's integration aliases").answers(status200, []aliasJSON{}),
		op(post, "/project/{id}/integrations/aliases", "Make a project integration alias").answers(status201, aliasJSON{}),
		op(del, "/project/{id}/integrations/aliases/{alias_id}", "Delete a project integration alias").noContent(),
		op(get, in+"/aliases", "The integration's aliases").answers(status200, []aliasJSON{}),
		op(post, in+"/aliases", "Make an integration alias").answers(status201, aliasJSON{}),
		op(del, in+"/aliases/{alias_id}", "Delete an integration alias").noContent(),
	}
	ops = append(ops, itemDocs(in+"/matchers", "matcher", matcherRequest{}, matcherJSON{})...)
	return append(ops, itemDocs(in+"/values", "extracted value", valueRequest{}, valueJSON{})...)
}

// itemDocs are the routes of itemRoutes: a list kept inside an integration.
func itemDocs(base, noun string, request, answer any) []opDoc {
	return []opDoc{
		op(get, base, "The integration's "+noun+"s").answers(status200, sliceOf(answer)),
		op(post, base, "Add "+article(noun)).takes(request).answers(status201, answer),
		op(put, base+"/{item_id}", "Replace "+article(noun)).takes(request).noContent(),
		op(del, base+"/{item_id}", "Remove "+article(noun)).noContent(),
	}
}

// The generic list/create/get/update/delete(/refs) routes of the project
// resources come from the same descriptors that mount them (resource.go):
// their path, path parameter and JSON types.

// resourceDoc is what the CRUD entries of one kind need.
type resourceDoc struct {
	path, param      string // "keys", "key_id"
	singular, plural string // "key", "keys"
	// answer is the JSON of one object; list the JSON of a list item;
	// request the body of create and update.
	answer, list, request any
	// createAnswers: create answers 201 with the object, else 204.
	createAnswers bool
	// refs is the answer of {param}/refs; nil: the kind has no such route.
	refs any
}

func projectResourceDocs() []opDoc {
	var ops []opDoc
	for _, res := range projectResources() {
		ops = append(ops, resourceDocs(resourceDocOf(res))...)
	}
	return ops
}

// resourceDocOf reads a resource's descriptor for its CRUD entries.
func resourceDocOf(res resourceRoutes) resourceDoc {
	t := res.jsonTypes()
	singular := res.kindName()
	plural := singular + "s"
	if strings.HasSuffix(singular, "y") {
		plural = strings.TrimSuffix(singular, "y") + "ies"
	}
	doc := resourceDoc{path: strings.TrimPrefix(res.mountPath(), "/"), param: t.Param,
		singular: singular, plural: plural,
		answer: zeroOf(t.Answer), list: zeroOf(t.ListItem), request: zeroOf(t.Request),
		createAnswers: t.Created == http.StatusCreated}
	if t.Refs != nil {
		doc.refs = zeroOf(t.Refs)
	}
	return doc
}

// zeroOf is a zero value of t, which the schema reflection reads.
func zeroOf(t reflect.Type) any { return reflect.Zero(t).Interface() }

// resourceDocs are the CRUD entries of one project resource kind.
func resourceDocs(k resourceDoc) []opDoc {
	list, request := k.list, k.request
	if list == nil {
		list = k.answer
	}
	if request == nil {
		request = k.answer
	}
	base := "/project/{id}/" + k.path
	one := base + "/{" + k.param + "}"
	create := op(post, base, "Create "+article(k.singular)).takes(request).noContent()
	if k.createAnswers {
		create = create.answers(status201, k.answer)
	}
	ops := []opDoc{
		op(get, base, "List the project's "+k.plural).answers(status200, sliceOf(list)),
		create,
		op(get, one, "Get "+article(k.singular)).answers(status200, k.answer),
		op(put, one, "Update "+article(k.singular)).takes(request).noContent(),
		op(del, one, "Delete "+article(k.singular)).noContent(),
	}
	if k.refs != nil {
		ops[4] = ops[4].note("Refused (400, inUse) while anything refers to it.")
		ops = append(ops, op(get, one+"/refs", "What refers to the "+k.singular).answers(status200, k.refs))
	}
	return ops
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// openAPIOpsByKey indexes openAPIOps by method and path.
func openAPIOpsByKey() map[string]opDoc {
	out := map[string]opDoc{}
	for _, o := range openAPIOps() {
		if _, dup := out[o.key()]; dup {
			panic("openapi: two entries for " + o.key())
		}
		out[o.key()] = o
	}
	return out
}
