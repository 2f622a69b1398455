package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// validFile is a small, complete backup that Parse accepts; the hostile
// cases each break one thing in it.
const validFile = `{
  "meta": {"name": "Shop", "alert": false, "alert_chat": null, "max_parallel_tasks": 0, "type": ""},
  "keys": [{"name": "Deploy key", "type": "ssh"}, {"name": "None", "type": "none"}, {"name": "Hook", "type": "login_password"}],
  "repositories": [{"name": "App", "git_url": "git@example.com:app.git", "git_branch": "main", "ssh_key": "Deploy key"}],
  "inventories": [{"name": "Prod", "type": "static", "inventory": "web1", "ssh_key": "Deploy key", "become_key": null}],
  "environments": [{"name": "Staging", "json": "{\"port\": 80}", "env": "", "secrets": [{"name": "TOKEN", "type": "env"}]}],
  "views": [{"title": "Main", "position": 0}],
  "templates": [
    {"name": "Build", "type": "build", "app": "", "playbook": "build.yml", "start_version": "1.0.0",
     "repository": "App", "environment": "Staging", "inventory": "Prod", "view": "Main", "cron": "0 3 * * *",
     "arguments": "[\"-v\"]", "survey_vars": [{"name": "n", "title": "N", "type": "int", "required": true}],
     "vaults": [{"name": "prod", "vault_key": "Hook", "type": "password"}]},
    {"name": "Deploy", "type": "deploy", "app": "ansible", "playbook": "deploy.yml", "build_template": "Build",
     "repository": "App", "environment": "Staging", "inventory": null, "view": null}
  ],
  "integrations": [{"name": "Push", "template": "Build", "auth_method": "hmac", "auth_header": "X-Sig", "auth_secret": "Hook",
    "searchable": false, "task_params": null, "aliases": ["anything"],
    "matchers": [{"name": "m", "match_type": "body", "method": "equals", "body_data_type": "json", "key": "ref", "value": "main"}],
    "extract_values": [{"name": "e", "value_source": "header", "key": "X-Id", "variable": "ID"}]}],
  "integration_aliases": []
}`

func TestParse_acceptsAValidFile(t *testing.T) {
	b, err := Parse([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	if b.Meta.Name != "Shop" || len(b.Templates) != 2 || b.Templates[0].Cron != "0 3 * * *" {
		t.Errorf("parsed %+v", b)
	}
	// No "schedules" key: the older layout, whose template cron stands.
	if len(b.Schedules) != 0 {
		t.Errorf("schedules = %+v, want none", b.Schedules)
	}
	// null task_params is no task_params.
	if b.Integrations[0].TaskParams != nil {
		t.Errorf("task_params = %s, want nil", b.Integrations[0].TaskParams)
	}
}

func TestParse_takesSchedulesWithTheirDefaults(t *testing.T) {
	file := edit(t, validFile, func(m map[string]any) {
		m["schedules"] = []any{map[string]any{"template": "Build", "cron_format": "0 3 * * *"}}
	})
	b, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []Schedule{{Template: "Build", CronFormat: "0 3 * * *"}}
	if !reflect.DeepEqual(b.Schedules, want) || b.Schedules[0].Active != nil {
		t.Errorf("schedules = %+v, want %+v (active absent, so true on restore)", b.Schedules, want)
	}
}

func TestParse_refusesHostileFiles(t *testing.T) {
	for _, tc := range hostileFiles(t) {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Parse(tc.data)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", b)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n  %s\ndoes not say\n  %s", err, want)
				}
			}
		})
	}
}

type hostileFile struct {
	name string
	data []byte
	want []string
}

// hostileFiles are files a restore must refuse, with what the error must
// say about each.
func hostileFiles(t *testing.T) []hostileFile {
	tpl := func(i int, f func(tpl map[string]any)) func(map[string]any) {
		return func(m map[string]any) { f(m["templates"].([]any)[i].(map[string]any)) }
	}
	first := func(kind string, f func(obj map[string]any)) func(map[string]any) {
		return func(m map[string]any) { f(m[kind].([]any)[0].(map[string]any)) }
	}
	junk := bytes.Repeat([]byte("junk "), 2<<20) // 10 MiB
	return []hostileFile{
		{"10 MiB of junk", junk, []string{"the file is 10.0 MiB; a backup may be at most 5 MiB"}},
		{"just over the limit", append([]byte(validFile), bytes.Repeat([]byte(" "), MaxSize)...), []string{"a backup may be at most 5 MiB"}},
		{"empty", nil, []string{"invalid backup: the file is empty"}},
		{"not JSON", []byte("meta: {}\n"), []string{"not valid JSON: invalid character 'm' looking for beginning of value (line 1, column 1)"}},
		{"truncated", []byte(validFile[:200]), []string{"not valid JSON: unexpected end of JSON input"}},
		{"trailing junk", []byte(validFile + "\n}"), []string{"not valid JSON: invalid character '}' after top-level value (line 22, column 1)"}},
		{"an array", []byte(`[{"meta": {"name": "x"}}]`), []string{"a backup is a JSON object, not an array"}},
		{"null", []byte(`null`), []string{"a backup is a JSON object, not null"}},
		{"unknown top-level key", edit(t, validFile, func(m map[string]any) { m["workflows"] = []any{} }),
			[]string{`unknown key "workflows": a backup has the keys meta, templates, repositories, keys, views, inventories, environments, integrations, integration_aliases, schedules`}},
		{"no meta", edit(t, validFile, func(m map[string]any) { delete(m, "meta") }), []string{"meta is missing"}},
		{"templates is an object", edit(t, validFile, func(m map[string]any) { m["templates"] = map[string]any{"name": "x"} }),
			[]string{"templates: must be an array, not an object"}},
		{"an element is a string", edit(t, validFile, func(m map[string]any) { m["views"] = []any{"Main"} }),
			[]string{"views[0]: must be an object, not a string"}},
		{"wrong field types", edit(t, validFile, func(m map[string]any) {
			m["meta"].(map[string]any)["max_parallel_tasks"] = "3"
			m["keys"].([]any)[0].(map[string]any)["name"] = 7
			m["inventories"].([]any)[0].(map[string]any)["ssh_key"] = []any{"Deploy key"}
			m["templates"].([]any)[0].(map[string]any)["vaults"] = []any{map[string]any{"vault_key": true}}
			m["views"].([]any)[0].(map[string]any)["position"] = 1.5
			m["integration_aliases"] = "abc"
		}), []string{
			"meta: max_parallel_tasks must be an integer, not a string",
			"keys[0]: name must be a string, not a number",
			`inventories[0] "Prod": ssh_key must be a string, not an array`,
			`templates[0] "Build": vaults.vault_key must be a string, not a boolean`,
			`views[0] "Main": position must be an integer, not number 1.5`,
			"integration_aliases: must be an array of strings",
		}},
		{"unknown field", edit(t, validFile, tpl(1, func(tpl map[string]any) { tpl["tasks"] = 12 })),
			[]string{`templates[1] "Deploy": unknown field "tasks"`}},
		{"dangling names", edit(t, validFile, func(m map[string]any) {
			tpl(1, func(tpl map[string]any) { tpl["inventory"] = "prod" })(m)
			tpl(0, func(tpl map[string]any) { tpl["vaults"].([]any)[0].(map[string]any)["vault_key"] = "Gone" })(m)
			first("inventories", func(inv map[string]any) { inv["become_key"] = "Root" })(m)
			first("integrations", func(i map[string]any) { i["template"] = "Nope" })(m)
			first("repositories", func(r map[string]any) { r["ssh_key"] = "" })(m)
		}), []string{
			`templates[1] "Deploy": inventory "prod" is not in the backup`,
			`templates[0] "Build": vaults[0]: vault_key "Gone" is not in the backup`,
			`inventories[0] "Prod": become_key "Root" is not in the backup`,
			`integrations[0] "Push": template "Nope" is not in the backup`,
			`repositories[0] "App": ssh_key is required`,
		}},
		{"duplicate and missing names", edit(t, validFile, func(m map[string]any) {
			m["keys"] = append(m["keys"].([]any), map[string]any{"name": "Deploy key", "type": "none"}, map[string]any{"name": " ", "type": "none"})
			m["views"] = append(m["views"].([]any), map[string]any{"title": "Main"})
			tpl(1, func(tpl map[string]any) { tpl["name"] = "Build" })(m)
		}), []string{
			`keys[3] "Deploy key": the name is already used by keys[0]; names must be unique within keys`,
			`keys[4] " ": name is required`,
			`views[1] "Main": the name is already used by views[0]; names must be unique within views`,
			`templates[1] "Build": the name is already used by templates[0]; names must be unique within templates`,
		}},
		{"invalid enums", edit(t, validFile, func(m map[string]any) {
			first("keys", func(k map[string]any) { k["type"] = "password" })(m)
			first("inventories", func(i map[string]any) { i["type"] = "ini" })(m)
			tpl(0, func(tpl map[string]any) { tpl["app"] = "puppet" })(m)
			tpl(1, func(tpl map[string]any) { tpl["type"] = "release" })(m)
			first("integrations", func(i map[string]any) {
				i["auth_method"] = "basic"
				i["matchers"].([]any)[0].(map[string]any)["method"] = "regex"
			})(m)
			first("environments", func(e map[string]any) { e["secrets"].([]any)[0].(map[string]any)["type"] = "file" })(m)
		}), []string{
			`keys[0] "Deploy key": type "password" is not one of none, ssh, login_password`,
			`inventories[0] "Prod": type "ini" is not one of static, static-yaml, file, terraform-workspace`,
			`templates[0] "Build": app "puppet" is not one of "", ansible, terraform, tofu, bash`,
			`templates[1] "Deploy": type "release" is not one of "", build, deploy`,
			`integrations[0] "Push": auth_method "basic" is not one of "", github, token, hmac`,
			`integrations[0] "Push": matchers[0]: method "regex" is not one of equals, unequals, contains`,
			`environments[0] "Staging": secrets[0]: type "file" is not one of var, env`,
		}},
		{"missing key type", edit(t, validFile, first("keys", func(k map[string]any) { delete(k, "type") })),
			[]string{`keys[0] "Deploy key": type is required (one of none, ssh, login_password)`}},
		{"invalid cron", edit(t, validFile, func(m map[string]any) {
			tpl(0, func(tpl map[string]any) { tpl["cron"] = "61 * * * *" })(m)
			m["schedules"] = []any{
				map[string]any{"template": "Deploy", "cron_format": "@every 5m"},
				map[string]any{"template": "Deploy", "cron_format": "0 0 30 2 *"},
			}
		}), []string{
			`templates[0] "Build": cron "61 * * * *": Cron: `,
			`schedules[0]: cron_format "@every 5m": Cron: @every is not supported`,
			`schedules[1]: cron_format "0 0 30 2 *": Cron: "0 0 30 2 *" matches no date`,
		}},
		{"cron and schedules disagree", edit(t, validFile, func(m map[string]any) {
			m["schedules"] = []any{map[string]any{"template": "Build", "cron_format": "0 4 * * *", "name": "Early"}}
		}), []string{`templates[0] "Build": cron "0 3 * * *" is not the cron_format of any of this template's schedules in "schedules"`}},
		{"what the CRDs refuse", edit(t, validFile, func(m map[string]any) {
			tpl(0, func(tpl map[string]any) { tpl["start_version"] = ""; tpl["playbook"] = "" })(m)
			tpl(1, func(tpl map[string]any) { delete(tpl, "build_template"); delete(tpl, "environment") })(m)
			first("repositories", func(r map[string]any) { r["git_url"] = "ftp://example.com/app"; r["git_branch"] = "" })(m)
			first("inventories", func(i map[string]any) { i["type"] = "file"; i["inventory"] = "../../etc/hosts" })(m)
			m["meta"].(map[string]any)["max_parallel_tasks"] = -1
		}), []string{
			"meta: max_parallel_tasks must be 0 or greater",
			`templates[0] "Build": playbook is required`,
			`templates[0] "Build": start_version is required for a build template`,
			`templates[1] "Deploy": environment is required`,
			`templates[1] "Deploy": build_template is required for a deploy template`,
			`repositories[0] "App": git_url "ftp://example.com/app": Incorrect URL`,
			`repositories[0] "App": git_branch is required unless the URL is a local path`,
			`inventories[0] "Prod": inventory "../../etc/hosts": the inventory file must be a relative path inside the repository`,
		}},
		{"what the CRDs refuse of integrations", edit(t, validFile, func(m map[string]any) {
			m["integrations"] = []any{
				map[string]any{"name": "A", "auth_method": "hmac", "auth_secret": "Hook",
					"matchers":       []any{map[string]any{"name": "m", "match_type": "body", "method": "equals", "key": "k", "value": ""}},
					"extract_values": []any{map[string]any{"name": "", "value_source": "body", "body_data_type": "xml", "key": "k"}}},
				map[string]any{"name": "B", "auth_method": "github", "task_params": []any{}},
			}
		}), []string{
			`integrations[0] "A": auth_header is required for hmac authentication`,
			`integrations[0] "A": matchers[0]: body_data_type (json or string) is required when the source is body`,
			`integrations[0] "A": matchers[0]: value is required`,
			`integrations[0] "A": extract_values[0]: name is required`,
			`integrations[0] "A": extract_values[0]: body_data_type "xml" is not one of json, string`,
			`integrations[0] "A": extract_values[0]: variable is required`,
			`integrations[1] "B": auth_secret (a login_password key) is required when an auth method is set`,
			`integrations[1] "B": task_params must be a JSON object, not an array`,
		}},
		{"environment text", edit(t, validFile, func(m map[string]any) {
			first("environments", func(e map[string]any) {
				e["json"] = "[1, 2]"
				e["env"] = `{"PORT": 80}`
				e["secrets"] = []any{map[string]any{"name": "a b", "type": "var"}}
			})(m)
		}), []string{
			`environments[0] "Staging": json: Environment and extra variables must be valid JSON: must be a JSON object, not an array`,
			`environments[0] "Staging": env: the value of "PORT" must be a string, not a number`,
			`environments[0] "Staging": secrets[0]: name "a b" must consist of letters, digits, '-', '_' or '.'`,
		}},
		{"build templates in a cycle", edit(t, validFile, func(m map[string]any) {
			tpl(0, func(tpl map[string]any) { tpl["type"] = "deploy"; tpl["build_template"] = "Deploy" })(m)
		}), []string{`templates[0] "Build": its build_template chain comes back to it ("Build" → "Deploy" → "Build")`}},
		{"a template is its own build template", edit(t, validFile, tpl(1, func(tpl map[string]any) { tpl["build_template"] = "Deploy" })),
			[]string{`templates[1] "Deploy": build_template names the template itself`}},
		{"one malformed element does not cascade", edit(t, validFile, first("inventories", func(i map[string]any) { i["inventory"] = 5 })),
			[]string{`invalid backup: inventories[0] "Prod": inventory must be a string, not a number`}},
		{"at most ten problems", edit(t, validFile, func(m map[string]any) {
			var views []any
			for i := range 15 {
				views = append(views, map[string]any{"title": fmt.Sprint(i), "position": -1})
			}
			m["views"] = views
		}), []string{`views[9] "9": position must be 0 or greater (and 6 more problems)`}},
	}
}

// A bad file creates nothing: no Project and no namespace, whatever the
// flaw, because Parse refuses it before Restore runs.
func TestParseAndRestore_aRefusedFileCreatesNothing(t *testing.T) {
	ctx := context.Background()
	projectsBefore, namespacesBefore := clusterState(t)
	for _, tc := range hostileFiles(t) {
		b, err := Parse(tc.data)
		if err == nil {
			t.Fatalf("%s: Parse accepted it", tc.name)
		}
		if b != nil {
			if _, err := Restore(ctx, k8sClient, b, createProject(k8sClient)); err != nil {
				t.Fatal(err)
			}
		}
	}
	projectsAfter, namespacesAfter := clusterState(t)
	if !reflect.DeepEqual(projectsBefore, projectsAfter) || !reflect.DeepEqual(namespacesBefore, namespacesAfter) {
		t.Errorf("the cluster changed:\nprojects %v → %v\nnamespaces %v → %v",
			projectsBefore, projectsAfter, namespacesBefore, namespacesAfter)
	}
}

// edit returns the JSON of base after f changed it.
func edit(t *testing.T, base string, f func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestErrorMessages_doNotMentionGo(t *testing.T) {
	file := edit(t, validFile, func(m map[string]any) { m["meta"] = []any{} })
	_, err := Parse(file)
	if err == nil || !strings.Contains(err.Error(), "meta: must be an object, not an array") {
		t.Fatalf("err = %v", err)
	}
	for _, goWord := range []string{"Go struct", "backup.", "int32", "json:"} {
		if strings.Contains(err.Error(), goWord) {
			t.Errorf("error %q mentions %q", err, goWord)
		}
	}
}
