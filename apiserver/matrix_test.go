package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// The permission matrix of docs/features.md §6 and api-contract.md: every route of the
// users, projects, team, events, tokens and session calls, called by each
// kind of caller, answers exactly the status in the table.

const (
	anonymous  = "anonymous"
	nonMember  = "non-member"
	guest      = "guest"
	taskRunner = "task_runner"
	manager    = "manager"
	owner      = "owner"
	admin      = "admin"
)

var callers = []string{anonymous, nonMember, guest, taskRunner, manager, owner, admin}

// expect lists the status per caller; "*" is every caller not named.
type expect map[string]int

func (x expect) of(caller string) int {
	if code, ok := x[caller]; ok {
		return code
	}
	return x["*"]
}

// Shorthands for the common shapes of a row.
var (
	signedIn   = func(ok int) expect { return expect{anonymous: 401, "*": ok} }
	members    = func(ok int) expect { return expect{anonymous: 401, nonMember: 404, "*": ok} }
	adminsOnly = func(ok int) expect { return expect{anonymous: 401, admin: ok, "*": 403} }
	// needs: members with the bit pass, other members get 403.
	needs = func(ok int, roles ...string) expect {
		x := expect{anonymous: 401, nonMember: 404, admin: ok, "*": 403}
		for _, r := range roles {
			x[r] = ok
		}
		return x
	}
)

// matrixRow is one route. Paths may name {project}, {self}, {target} (a
// guest of the project, made fresh for each call) and {spare} (a user who
// is not a member).
type matrixRow struct {
	method, path string
	body         string
	want         expect
	// setup, when set, makes objects in the call's project (a fresh one
	// for writes) and returns more placeholders: {"key": "3"} fills {key}.
	setup func(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string
	// fresh gives even a GET its own project (a setup that must not pile
	// objects into the shared one).
	fresh bool
}

var matrix = []matrixRow{
	// Session and global.
	{"GET", "/api/auth/login", "", expect{"*": 200}, nil, false},
	{"POST", "/api/auth/logout", "", expect{"*": 204}, nil, false},
	{"GET", "/api/user", "", signedIn(200), nil, false},
	{"GET", "/api/user/", "", signedIn(200), nil, false},
	{"GET", "/api/info", "", expect{"*": 200}, nil, false},
	{"GET", "/api/events", "", signedIn(200), nil, false},
	{"GET", "/api/openapi.json", "", expect{"*": 200}, nil, false},
	{"GET", "/api/events/last", "", signedIn(200), nil, false},
	// What the cluster admin allows task pods (issue 23): names only, to
	// choose from; choosing is updateProject or a template's write.
	{"GET", "/api/task_pods/options", "", signedIn(200), nil, false},
	{"GET", "/api/user/tokens", "", signedIn(200), nil, false},
	{"POST", "/api/user/tokens", "", signedIn(201), nil, false},

	// Users: admins manage everyone; each user their own row.
	{"GET", "/api/users", "", signedIn(200), nil, false},
	{"POST", "/api/users", `{"name":"N","username":"new-{nonce}","email":"new-{nonce}@example.test","password":"pw-123456"}`, adminsOnly(201), nil, false},
	{"GET", "/api/users/{self}", "", signedIn(200), nil, false},
	{"PUT", "/api/users/{self}", `{"name":"Me","username":"{self_login}","email":"{self_login}@example.test","admin":{self_admin}}`, signedIn(204), nil, false},
	{"GET", "/api/users/{target}", "", adminsOnly(200), nil, false},
	{"PUT", "/api/users/{target}", `{"name":"T","username":"{target_login}","email":"{target_login}@example.test"}`, adminsOnly(204), nil, false},
	{"POST", "/api/users/{target}/password", `{"password":"another-pw"}`, adminsOnly(204), nil, false},
	{"DELETE", "/api/users/{target}", "", adminsOnly(204), nil, false},
	// Nobody deletes their own row, admins included.
	{"DELETE", "/api/users/{self}", "", expect{anonymous: 401, "*": 403}, nil, false},

	// Projects.
	{"GET", "/api/projects", "", signedIn(200), nil, false},
	{"POST", "/api/projects", `{"name":"made by matrix"}`, adminsOnly(201), nil, false},
	{"GET", "/api/project/{project}", "", members(200), nil, false},
	{"GET", "/api/project/{project}/role", "", members(200), nil, false},
	{"GET", "/api/project/{project}/events/last", "", members(200), nil, false},
	{"GET", "/api/project/{project}/backup", "", members(200), nil, false},
	{"PUT", "/api/project/{project}", `{"name":"renamed"}`, needs(204, owner), nil, false},
	// Where its tasks run and as which allowed service account: the owner's.
	{"PUT", "/api/project/{project}", `{"name":"renamed","task_pods":{"service_account":"deployer","node_selector":{"pool":"a"}}}`, needs(204, owner), nil, false},
	{"DELETE", "/api/project/{project}", "", needs(204, owner), nil, false},

	// Team.
	{"GET", "/api/project/{project}/users", "", members(200), nil, false},
	{"POST", "/api/project/{project}/users", `{"user_id":{spare},"role":"guest"}`, needs(204, owner), nil, false},
	{"PUT", "/api/project/{project}/users/{target}", `{"role":"task_runner"}`, needs(204, owner), nil, false},
	{"DELETE", "/api/project/{project}/users/{target}", "", needs(204, owner), nil, false},
	// Any member but the owner may leave; an admin who is not a member
	// has nothing to leave.
	{"DELETE", "/api/project/{project}/me", "", expect{anonymous: 401, nonMember: 404, owner: 403, admin: 400, "*": 204}, nil, false},
}

// matrixFixture is a project with one member per role, and the users
// around it.
type matrixFixture struct {
	users     map[string]*bastionv1.User // by caller
	passwords map[string]string
	browsers  map[string]*browser
}

func newMatrixFixture(t *testing.T, e *apiEnv) *matrixFixture {
	f := &matrixFixture{users: map[string]*bastionv1.User{}, passwords: map[string]string{}, browsers: map[string]*browser{}}
	for _, c := range callers {
		if c == anonymous {
			f.browsers[c] = e.browser(t)
			continue
		}
		u, pw := e.newUser(t, strings.ReplaceAll(c, "_", "-"), c == admin)
		f.users[c], f.passwords[c] = u, pw
		f.browsers[c] = e.signIn(t, u.Spec.Username, pw)
	}
	return f
}

// newProject makes a project with the fixture's members straight in the
// cluster (not through the API under test) and waits until the API sees it.
func (f *matrixFixture) newProject(t *testing.T, e *apiEnv, extra ...bastionv1.ProjectMember) int64 {
	t.Helper()
	members := append([]bastionv1.ProjectMember{}, extra...)
	for _, role := range []string{guest, taskRunner, manager, owner} {
		members = append(members, bastionv1.ProjectMember{User: f.users[role].Name, Role: bastionv1.ProjectRole(role)})
	}
	return e.newProject(t, "matrix", members, f.browsers[owner])
}

func (e *apiEnv) newProject(t *testing.T, name string, members []bastionv1.ProjectMember, viewer *browser) int64 {
	t.Helper()
	id, err := (&ids.Allocator{Client: e.K8s}).Next(t.Context(), managerNamespace, ids.CounterProject)
	if err != nil {
		t.Fatal(err)
	}
	p := &bastionv1.Project{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "test-", Labels: map[string]string{bastionv1.LabelID: ids.Format(id)}},
		Spec:       bastionv1.ProjectSpec{DisplayName: name, Members: members},
	}
	if err := e.K8s.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bastionv1.ProjectNamespace(p.Name), Labels: map[string]string{bastionv1.LabelProject: p.Name}}}
	// The Project controller may have made it already.
	if err := e.K8s.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := viewer.call("GET", fmt.Sprintf("/api/project/%d", id), nil)
		if code == http.StatusOK {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("project %d never became visible (last %d)", id, code)
		}
		time.Sleep(20 * time.Millisecond) // polling the cache of a real server
	}
}

func TestPermissionMatrix(t *testing.T) {
	runMatrix(t, matrix)
}

// runMatrix calls every row as every caller and checks the status. Rows
// that write, and rows that name {target}, get a fresh project per call so
// one caller's success cannot change what the next one meets; a row's
// setup makes the objects its path names in that project.
func runMatrix(t *testing.T, rows []matrixRow) {
	e := startEnv(t)
	f := newMatrixFixture(t, e)
	shared := f.newProject(t, e)
	nonce := 0
	for _, row := range rows {
		for _, caller := range callers {
			want := row.want.of(caller)
			name := fmt.Sprintf("%s %s as %s", row.method, row.path, caller)
			b := f.browsers[caller]
			if caller == anonymous || row.method == "POST" && row.path == "/api/auth/logout" {
				b = e.browser(t) // logout must not end the fixture's sessions
				if caller != anonymous {
					b = e.signIn(t, f.users[caller].Spec.Username, f.passwords[caller])
				}
			}
			project := shared
			mutates := row.method != "GET"
			needsTarget := strings.Contains(row.path, "{target}")
			var target *bastionv1.User
			if needsTarget {
				target, _ = e.newUser(t, "target", false)
			}
			if (mutates || needsTarget || row.fresh) && strings.Contains(row.path, "{project}") {
				var extra []bastionv1.ProjectMember
				if target != nil {
					extra = append(extra, bastionv1.ProjectMember{User: target.Name, Role: bastionv1.RoleGuest})
				}
				project = f.newProject(t, e, extra...)
			}
			nonce++
			replacer := []string{
				"{project}", itoa(project), "{nonce}", itoa(int64(nonce)),
			}
			if row.setup != nil {
				for k, v := range row.setup(t, e, e.projectObject(t, project)) {
					replacer = append(replacer, "{"+k+"}", v)
				}
			}
			if u := f.users[caller]; u != nil {
				replacer = append(replacer, "{self}", itoa(userIDOf(t, u)), "{self_login}", u.Spec.Username,
					"{self_admin}", fmt.Sprint(u.Spec.Admin))
			} else {
				replacer = append(replacer, "{self}", "1", "{self_login}", "x", "{self_admin}", "false")
			}
			if target != nil {
				replacer = append(replacer, "{target}", itoa(userIDOf(t, target)), "{target_login}", target.Spec.Username)
			}
			if strings.Contains(row.body, "{spare}") {
				spare, _ := e.newUser(t, "spare", false)
				replacer = append(replacer, "{spare}", itoa(userIDOf(t, spare)))
			}
			r := strings.NewReplacer(replacer...)
			var body any
			if row.body != "" {
				body = []byte(r.Replace(row.body))
			}
			code, data := b.call(row.method, r.Replace(row.path), body)
			if code != want {
				t.Errorf("%s = %d %s, want %d", name, code, data, want)
			}
			if code >= 400 {
				errorOf(t, data) // every error carries {"error": ...}
			}
		}
	}
}
