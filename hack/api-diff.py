#!/usr/bin/env python3
"""api-diff: drive the same script of /api calls through two running bastions
(`bastion dev` of two builds) and print every difference in their answers:
status codes, JSON key sets and value types, error messages, and values once
ids and timestamps are normalised.

Usage: hack/api-diff.py OLD_URL OLD_ADMIN_PASSWORD NEW_URL NEW_ADMIN_PASSWORD

Start each build with its own data dir and port, for example
  git worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/bastion-old .)
  /tmp/bastion-old dev --listen 127.0.0.1:18722 --data-dir /tmp/old-data
and read each admin password from its banner. Run the script on fresh
servers (or twice on both: every run makes its own projects). Differences
that are expected: web_host (the port), can_create_project for admins,
GET /api/user/ and /api/events (new), alias names (random), and the order of
activity-log entries written in the same instant.

Why a script and not a test under test/e2e: the comparison needs two binaries
built from two commits, and test/e2e builds one binary from its own checkout.
"""
import atexit
import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


class Client:
    def __init__(self, base, login, password):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        code, body = self.call("POST", "/api/auth/login", {"auth": login, "password": password})
        if code != 204:
            raise SystemExit(f"{base}: login {login}: {code} {body}")

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(req, timeout=120) as resp:
                raw = resp.read()
                code = resp.status
        except urllib.error.HTTPError as e:
            raw = e.read()
            code = e.code
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = ("<text>", raw.decode(errors="replace")[:200])
        return code, parsed


TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
REFS = {"templates", "inventories", "repositories", "schedules", "integrations"}
VOLATILE = {"created", "start", "end", "time", "expired", "last_task", "status", "commit_hash",
            "commit_message", "url", "output", "task", "version", "tasks", "last_task_id", "tpl_name"}


def normalise(v, key=""):
    """Replace ids and timestamps by placeholders that keep their type."""
    if isinstance(v, dict):
        return {k: normalise(x, k) for k, x in v.items()}
    if isinstance(v, list):
        out = [normalise(x, key) for x in v]
        # refs lists have no order in either build: compare them as sets
        return sorted(out, key=json.dumps) if key in REFS else out
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int) and (key == "id" or key.endswith("_id") or key == "position"):
        return "<int-id>"
    if isinstance(v, str) and TS.match(v):
        return "<ts>"
    if isinstance(v, str) and key == "error":
        return re.sub(r"/\d+", "/<n>", v)
    if key in VOLATILE:
        return f"<{type(v).__name__}>"
    return v


def where(a, b, path="$"):
    """The paths at which a and b differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'new' if k not in a else 'old'}")
            else:
                out += where(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items (old) vs {len(b)} (new)"]
        return [d for x, y, i in zip(a, b, range(len(a))) for d in where(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: old {json.dumps(a)[:150]} new {json.dumps(b)[:150]}"]


def shape(v):
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    return type(v).__name__


def git_repo():
    d = tempfile.mkdtemp(prefix="api-diff-repo-")
    atexit.register(shutil.rmtree, d, True)
    files = {"site.yml": "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: hi}\n",
             "run.sh": "#!/bin/sh\necho hello\n", "main.tf": "output \"x\" { value = 1 }\n"}
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    os.chmod(os.path.join(d, "run.sh"), 0o755)
    for cmd in (["init", "-q", "-b", "main"], ["add", "."],
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-C", d] + cmd, check=True)
    return d


def ssh_key():
    d = tempfile.mkdtemp(prefix="api-diff-key-")
    atexit.register(shutil.rmtree, d, True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", d + "/k"], check=True)
    return open(d + "/k").read()


class Side:
    """One server: the calls' answers, by step name."""

    def __init__(self, base, password, repo):
        self.base, self.repo = base, repo
        self.admin = Client(base, "admin", password)
        self.answers = []
        self.ids = {}

    def rec(self, step, who, method, path, body=None):
        code, parsed = who.call(method, path, body)
        self.answers.append((step, method, code, parsed))
        return code, parsed

    def id_named(self, path, name, field="name"):
        _, items = self.admin.call("GET", path)
        for it in items or []:
            if it.get(field) == name:
                return it["id"]
        raise SystemExit(f"{self.base}: no {name} in {path}: {items}")


def script(s: Side):
    a = s.admin
    r = s.rec
    r("info", a, "GET", "/api/info")
    r("user", a, "GET", "/api/user")
    for login in ("guesty", "runnery", "outsider"):
        r("create user " + login, a, "POST", "/api/users", {"username": login, "name": login,
          "email": login + "@example.test", "password": "pw-" + login + "-0123", "admin": False})
    _, proj = r("create project", a, "POST", "/api/projects", {"name": "Diff A"})
    _, projB = r("create project B", a, "POST", "/api/projects", {"name": "Diff B"})
    pid, pidB = proj["id"], projB["id"]
    p, pB = f"/api/project/{pid}", f"/api/project/{pidB}"
    uid = {u["username"]: u["id"] for u in a.call("GET", "/api/users")[1]}
    r("add guest", a, "POST", p + "/users", {"user_id": uid["guesty"], "role": "guest"})
    r("add runner", a, "POST", p + "/users", {"user_id": uid["runnery"], "role": "task_runner"})
    r("add guest again", a, "POST", p + "/users", {"user_id": uid["guesty"], "role": "guest"})

    # keys of every type
    r("key none", a, "POST", p + "/keys", {"name": "k-none", "type": "none"})
    r("key ssh", a, "POST", p + "/keys", {"name": "k-ssh", "type": "ssh",
      "ssh": {"login": "root", "passphrase": "", "private_key": ssh_key()}})
    r("key lp", a, "POST", p + "/keys", {"name": "k-lp", "type": "login_password",
      "login_password": {"login": "u", "password": "s3cret"}})
    r("key vault", a, "POST", p + "/keys", {"name": "k-vault", "type": "login_password",
      "login_password": {"login": "", "password": "vaultpw"}})
    r("key bad type", a, "POST", p + "/keys", {"name": "k-bad", "type": "nope"})
    r("key missing name", a, "POST", p + "/keys", {"type": "none"})
    r("key dup name", a, "POST", p + "/keys", {"name": "k-none", "type": "none"})
    r("key bad json", a, "POST", p + "/keys", None)
    kn, kssh, klp, kv = (s.id_named(p + "/keys", n) for n in ("k-none", "k-ssh", "k-lp", "k-vault"))
    r("keyB", a, "POST", pB + "/keys", {"name": "kb", "type": "none"})
    kB = s.id_named(pB + "/keys", "kb")

    r("repo", a, "POST", p + "/repositories", {"name": "repo", "git_url": s.repo, "git_branch": "main", "ssh_key_id": kn})
    r("repo missing url", a, "POST", p + "/repositories", {"name": "repo2", "ssh_key_id": kn})
    r("repo bad key", a, "POST", p + "/repositories", {"name": "repo3", "git_url": s.repo, "ssh_key_id": 99999})
    r("repo key of B", a, "POST", p + "/repositories", {"name": "repo4", "git_url": s.repo, "ssh_key_id": kB})
    repo = s.id_named(p + "/repositories", "repo")

    r("inv static", a, "POST", p + "/inventory", {"name": "inv-s", "type": "static", "inventory": "localhost ansible_connection=local\n", "ssh_key_id": kn})
    r("inv yaml", a, "POST", p + "/inventory", {"name": "inv-y", "type": "static-yaml", "inventory": "all:\n  hosts:\n    localhost: {}\n", "ssh_key_id": kssh, "become_key_id": klp})
    r("inv file", a, "POST", p + "/inventory", {"name": "inv-f", "type": "file", "inventory": "hosts.ini", "ssh_key_id": kn, "repository_id": repo})
    r("inv tf", a, "POST", p + "/inventory", {"name": "inv-t", "type": "terraform-workspace", "inventory": "default", "ssh_key_id": kn})
    r("inv bad type", a, "POST", p + "/inventory", {"name": "inv-x", "type": "what", "inventory": "", "ssh_key_id": kn})
    r("inv missing key", a, "POST", p + "/inventory", {"name": "inv-z", "type": "static", "inventory": "x"})
    inv = s.id_named(p + "/inventory", "inv-s")
    invT = s.id_named(p + "/inventory", "inv-t")

    r("env", a, "POST", p + "/environment", {"name": "env", "password": "", "json": '{"a": "b"}', "env": '{"E": "1"}',
      "secrets": [{"type": "var", "name": "sv", "secret": "s1", "operation": "create"},
                  {"type": "env", "name": "SE", "secret": "s2", "operation": "create"}]})
    r("env bad json", a, "POST", p + "/environment", {"name": "env2", "json": "{nope", "env": "{}"})
    r("env missing name", a, "POST", p + "/environment", {"json": "{}", "env": "{}"})
    env = s.id_named(p + "/environment", "env")

    r("view 1", a, "POST", p + "/views", {"title": "V1", "position": 1})
    r("view 2", a, "POST", p + "/views", {"title": "V2", "position": 2})
    r("view missing title", a, "POST", p + "/views", {"position": 3})
    v1 = s.id_named(p + "/views", "V1", "title")
    v2 = s.id_named(p + "/views", "V2", "title")

    survey = [{"name": "who", "title": "Who", "required": True, "type": "", "description": "d", "values": []},
              {"name": "lvl", "title": "Level", "required": False, "type": "enum", "description": "",
               "values": [{"name": "lo", "value": "1"}, {"name": "hi", "value": "2"}]}]
    base = {"repository_id": repo, "inventory_id": inv, "environment_id": env, "arguments": "[]", "description": "x",
            "survey_vars": survey, "view_id": v1}
    r("tpl ansible", a, "POST", p + "/templates", dict(base, name="T-ansible", playbook="site.yml", app="ansible",
      vaults=[{"vault_key_id": kv, "name": "vault1"}]))
    r("tpl bash", a, "POST", p + "/templates", dict(base, name="T-bash", playbook="run.sh", app="bash"))
    r("tpl tf", a, "POST", p + "/templates", dict(base, name="T-tf", playbook="", app="terraform", inventory_id=invT))
    r("tpl tofu", a, "POST", p + "/templates", dict(base, name="T-tofu", playbook="", app="tofu", inventory_id=invT))
    r("tpl build", a, "POST", p + "/templates", dict(base, name="T-build", playbook="run.sh", app="bash", type="build", start_version="1.0.0"))
    tb = s.id_named(p + "/templates", "T-build")
    r("tpl deploy", a, "POST", p + "/templates", dict(base, name="T-deploy", playbook="run.sh", app="bash", type="deploy", build_template_id=tb))
    r("tpl bad app", a, "POST", p + "/templates", dict(base, name="T-x", playbook="x", app="chef"))
    r("tpl missing repo", a, "POST", p + "/templates", {"name": "T-y", "playbook": "x", "app": "bash", "inventory_id": inv, "environment_id": env})
    r("tpl bad inv", a, "POST", p + "/templates", dict(base, name="T-z", playbook="x", app="bash", inventory_id=424242))
    r("tpl view of nothing", a, "POST", p + "/templates", dict(base, name="T-w", playbook="x", app="bash", view_id=424242))
    ta = s.id_named(p + "/templates", "T-ansible")
    tbash = s.id_named(p + "/templates", "T-bash")

    r("sched", a, "POST", p + "/schedules", {"template_id": tbash, "cron_format": "0 3 * * *", "name": "nightly", "active": True})
    r("sched bad cron", a, "POST", p + "/schedules", {"template_id": tbash, "cron_format": "nope", "name": "bad", "active": True})
    r("sched bad tpl", a, "POST", p + "/schedules", {"template_id": 424242, "cron_format": "0 3 * * *", "name": "bad2"})
    r("sched validate ok", a, "POST", p + "/schedules/validate", {"cron_format": "*/5 * * * *"})
    r("sched validate bad", a, "POST", p + "/schedules/validate", {"cron_format": "61 * * * *"})
    sch = s.id_named(p + "/schedules", "nightly")

    r("integ", a, "POST", p + "/integrations", {"name": "hook", "template_id": tbash, "auth_method": "token",
      "auth_secret_id": klp, "auth_header": "X-Token", "searchable": True, "task_params": {}})
    r("integ bad auth", a, "POST", p + "/integrations", {"name": "hook2", "template_id": tbash, "auth_method": "magic"})
    r("integ bad tpl", a, "POST", p + "/integrations", {"name": "hook3", "template_id": 424242, "auth_method": ""})
    ig = s.id_named(p + f"/integrations", "hook")
    I = f"{p}/integrations/{ig}"
    r("matcher", a, "POST", I + "/matchers", {"name": "m", "match_type": "body", "method": "equals", "body_data_type": "json", "key": "ref", "value": "main"})
    r("matcher bad", a, "POST", I + "/matchers", {"name": "m2", "match_type": "nope"})
    r("value", a, "POST", I + "/values", {"name": "v", "value_source": "body", "body_data_type": "json", "key": "after", "variable": "SHA"})
    r("value bad", a, "POST", I + "/values", {"name": "v2", "value_source": "nope"})
    r("alias", a, "POST", I + "/aliases", None)
    r("project alias", a, "POST", p + "/integrations/aliases", None)

    # tasks
    r("task", a, "POST", p + "/tasks", {"template_id": tbash, "message": "m", "environment": '{"who": "me"}'})
    r("task bad tpl", a, "POST", p + "/tasks", {"template_id": 424242})
    r("task tpl of B", a, "POST", pB + "/tasks", {"template_id": tbash})
    time.sleep(3)

    # every GET
    gets = ["/api/projects", p, p + "/role", p + "/users", p + "/keys", p + "/repositories", p + "/inventory",
            p + "/environment", p + "/views", p + "/templates", p + "/schedules", p + "/integrations",
            p + "/integrations/aliases", p + "/events/last", "/api/events/last", p + "/tasks", p + "/tasks/last",
            p + "/backup", "/api/apps", "/api/users", "/api/user/tokens"]
    for kind, ident in (("keys", kn), ("keys", kssh), ("keys", klp), ("repositories", repo), ("inventory", inv),
                        ("inventory", invT), ("environment", env), ("views", v1), ("templates", ta),
                        ("templates", tbash), ("templates", tb), ("schedules", sch), ("integrations", ig)):
        gets += [f"{p}/{kind}/{ident}", f"{p}/{kind}/{ident}/refs"]
    gets += [f"{p}/templates/{tbash}/tasks", f"{p}/templates/{tbash}/tasks/last", f"{p}/templates/{tbash}/schedules",
             f"{p}/views/{v1}/templates", I + "/matchers", I + "/values", I + "/aliases"]
    for g in gets:
        r("GET " + g.replace(str(pid), "P", 1), a, "GET", g)

    # wrong ids, cross-project ids
    for kind in ("keys", "repositories", "inventory", "environment", "views", "templates", "schedules", "integrations"):
        r(f"GET {kind} 999999", a, "GET", f"{p}/{kind}/999999")
        r(f"GET {kind} abc", a, "GET", f"{p}/{kind}/abc")
        r(f"PUT {kind} 999999", a, "PUT", f"{p}/{kind}/999999", {"id": 999999, "name": "x"})
        r(f"DELETE {kind} 999999", a, "DELETE", f"{p}/{kind}/999999")
    r("GET key of A via B", a, "GET", f"{pB}/keys/{kn}")
    r("refs key of A via B", a, "GET", f"{pB}/keys/{kn}/refs")
    r("GET tpl of A via B", a, "GET", f"{pB}/templates/{ta}")
    r("GET project 999999", a, "GET", "/api/project/999999/keys")

    # updates: body id != URL id, ok updates
    r("PUT key id mismatch", a, "PUT", f"{p}/keys/{kn}", {"id": kn + 1, "name": "k-none", "type": "none"})
    r("PUT key ok", a, "PUT", f"{p}/keys/{kn}", {"id": kn, "name": "k-none2", "type": "none"})
    r("PUT key no id", a, "PUT", f"{p}/keys/{kn}", {"name": "k-none3", "type": "none"})
    r("PUT key override", a, "PUT", f"{p}/keys/{klp}", {"id": klp, "name": "k-lp", "type": "login_password", "override_secret": True,
      "login_password": {"login": "u2", "password": "p2"}})
    r("PUT key type no override", a, "PUT", f"{p}/keys/{kv}", {"id": kv, "name": "k-vault", "type": "none"})
    r("GET key after type no override", a, "GET", f"{p}/keys/{kv}")
    r("PUT key type override", a, "PUT", f"{p}/keys/{kssh}", {"id": kssh, "name": "k-ssh", "type": "login_password",
      "override_secret": True, "login_password": {"login": "a", "password": "b"}})
    r("GET key after override", a, "GET", f"{p}/keys/{kssh}")
    r("PUT key override missing secret", a, "PUT", f"{p}/keys/{kssh}", {"id": kssh, "name": "k-ssh", "type": "ssh", "override_secret": True})
    _, envj = a.call("GET", f"{p}/environment/{env}")
    sec = {x["name"]: x["id"] for x in envj.get("secrets") or []}
    r("PUT env secrets ops", a, "PUT", f"{p}/environment/{env}", {"id": env, "name": "env", "json": "{}", "env": "{}", "secrets": [
        {"id": sec.get("sv", 0), "type": "var", "name": "sv", "secret": "new", "operation": "update"},
        {"id": sec.get("SE", 0), "type": "env", "name": "SE", "operation": "delete"},
        {"type": "env", "name": "S3", "secret": "x", "operation": "create"}]})
    r("GET env after ops", a, "GET", f"{p}/environment/{env}")
    r("PUT env bad op", a, "PUT", f"{p}/environment/{env}", {"id": env, "name": "env", "json": "{}", "env": "{}",
      "secrets": [{"type": "var", "name": "zz", "secret": "x", "operation": "explode"}]})
    _, tj = a.call("GET", f"{p}/templates/{ta}")
    r("PUT tpl vaults", a, "PUT", f"{p}/templates/{ta}", dict(tj, vaults=[], survey_vars=[], arguments="[\"-v\"]", git_branch="dev",
      allow_override_branch_in_task=True))
    r("GET tpl after vaults", a, "GET", f"{p}/templates/{ta}")
    r("PUT tpl bad args", a, "PUT", f"{p}/templates/{ta}", dict(tj, arguments="not json"))
    r("PUT inv type", a, "PUT", f"{p}/inventory/{invT}", {"id": invT, "name": "inv-t", "type": "static-yaml", "inventory": "all: {}\n", "ssh_key_id": kn})
    r("GET inv after type", a, "GET", f"{p}/inventory/{invT}")
    r("PUT repo id mismatch", a, "PUT", f"{p}/repositories/{repo}", {"id": repo + 7, "name": "repo", "git_url": s.repo, "ssh_key_id": kn})
    r("PUT repo ok", a, "PUT", f"{p}/repositories/{repo}", {"id": repo, "name": "repo", "git_url": s.repo, "git_branch": "main", "ssh_key_id": kn})
    r("PUT inv mismatch", a, "PUT", f"{p}/inventory/{inv}", {"id": inv + 9, "name": "inv-s", "type": "static", "inventory": "x", "ssh_key_id": kn})
    r("PUT inv ok", a, "PUT", f"{p}/inventory/{inv}", {"id": inv, "name": "inv-s", "type": "static", "inventory": "localhost\n", "ssh_key_id": kn})
    r("PUT env mismatch", a, "PUT", f"{p}/environment/{env}", {"id": env + 3, "name": "env", "json": "{}", "env": "{}"})
    r("PUT env ok", a, "PUT", f"{p}/environment/{env}", {"id": env, "name": "env", "json": "{}", "env": "{}",
      "secrets": [{"type": "var", "name": "sv", "operation": "delete"}]})
    r("PUT view mismatch", a, "PUT", f"{p}/views/{v1}", {"id": v2, "title": "V1", "position": 1})
    r("PUT view ok", a, "PUT", f"{p}/views/{v1}", {"id": v1, "title": "V1b", "position": 1})
    r("views positions", a, "POST", p + "/views/positions", {str(v1): 2, str(v2): 1})
    r("PUT tpl mismatch", a, "PUT", f"{p}/templates/{tbash}", dict(base, id=ta, name="T-bash", playbook="run.sh", app="bash"))
    r("PUT tpl ok", a, "PUT", f"{p}/templates/{tbash}", dict(base, id=tbash, name="T-bash", playbook="run.sh", app="bash", view_id=v2))
    r("PUT sched mismatch", a, "PUT", f"{p}/schedules/{sch}", {"id": sch + 1, "template_id": tbash, "cron_format": "0 4 * * *", "name": "nightly"})
    r("PUT sched ok", a, "PUT", f"{p}/schedules/{sch}", {"id": sch, "template_id": tbash, "cron_format": "0 4 * * *", "name": "nightly", "active": True})
    r("PUT sched active", a, "PUT", f"{p}/schedules/{sch}/active", {"active": False})
    r("PUT integ mismatch", a, "PUT", I, {"id": ig + 1, "name": "hook", "template_id": tbash})
    r("PUT integ ok", a, "PUT", I, {"id": ig, "name": "hook", "template_id": tbash, "auth_method": "", "searchable": True})

    # permission refusals
    g = Client(s.base, "guesty", "pw-guesty-0123")
    t = Client(s.base, "runnery", "pw-runnery-0123")
    o = Client(s.base, "outsider", "pw-outsider-0123")
    r("guest user", g, "GET", "/api/user")
    r("guest user/", g, "GET", "/api/user/")
    for who, c in (("guest", g), ("runner", t), ("outsider", o)):
        for kind, ident, body in (("keys", kn, {"id": kn, "name": "x", "type": "none"}),
                                  ("repositories", repo, {"id": repo, "name": "x", "git_url": s.repo, "ssh_key_id": kn}),
                                  ("inventory", inv, {"id": inv, "name": "x", "type": "static", "inventory": "", "ssh_key_id": kn}),
                                  ("environment", env, {"id": env, "name": "x", "json": "{}", "env": "{}"}),
                                  ("views", v1, {"id": v1, "title": "x"}),
                                  ("templates", tbash, dict(base, id=tbash, name="x", playbook="run.sh", app="bash")),
                                  ("schedules", sch, {"id": sch, "template_id": tbash, "cron_format": "0 3 * * *", "name": "x"}),
                                  ("integrations", ig, {"id": ig, "name": "x", "template_id": tbash})):
            r(f"{who} list {kind}", c, "GET", f"{p}/{kind}")
            r(f"{who} get {kind}", c, "GET", f"{p}/{kind}/{ident}")
            r(f"{who} refs {kind}", c, "GET", f"{p}/{kind}/{ident}/refs")
            r(f"{who} create {kind}", c, "POST", f"{p}/{kind}", body)
            r(f"{who} update {kind}", c, "PUT", f"{p}/{kind}/{ident}", body)
            r(f"{who} delete {kind}", c, "DELETE", f"{p}/{kind}/{ident}")
        r(f"{who} aliases", c, "GET", I + "/aliases")
        r(f"{who} project aliases", c, "GET", p + "/integrations/aliases")
        r(f"{who} create alias", c, "POST", I + "/aliases", None)
        r(f"{who} matchers", c, "GET", I + "/matchers")
        r(f"{who} add matcher", c, "POST", I + "/matchers", {"name": "m9", "match_type": "header", "method": "equals", "key": "X", "value": "y"})
        r(f"{who} run task", c, "POST", p + "/tasks", {"template_id": tbash})
        r(f"{who} change matcher", c, "PUT", I + "/matchers/1", {"id": 1, "name": "m", "match_type": "body", "method": "equals", "body_data_type": "json", "key": "ref", "value": "x"})
        r(f"{who} delete matcher", c, "DELETE", I + "/matchers/1")
        r(f"{who} values", c, "GET", I + "/values")
        r(f"{who} add value", c, "POST", I + "/values", {"name": "v9", "value_source": "header", "key": "X", "variable": "Y"})
        r(f"{who} delete alias", c, "DELETE", I + "/aliases/1")
        r(f"{who} view templates", c, "GET", f"{p}/views/{v1}/templates")
        r(f"{who} template tasks", c, "GET", f"{p}/templates/{tbash}/tasks")
        r(f"{who} template schedules", c, "GET", f"{p}/templates/{tbash}/schedules")
        r(f"{who} task", c, "GET", f"{p}/tasks/1")
        r(f"{who} task output", c, "GET", f"{p}/tasks/1/output")
        r(f"{who} stop task", c, "POST", f"{p}/tasks/1/stop", {})
        r(f"{who} delete task", c, "DELETE", f"{p}/tasks/1")
        r(f"{who} update project", c, "PUT", p, {"id": pid, "name": "Diff A"})
        r(f"{who} team", c, "GET", p + "/users")
        r(f"{who} add member", c, "POST", p + "/users", {"user_id": uid["outsider"], "role": "owner"})
        r(f"{who} events all", c, "GET", "/api/events")
        r(f"{who} view positions", c, "POST", p + "/views/positions", {str(v1): 1})
        r(f"{who} sched active", c, "PUT", f"{p}/schedules/{sch}/active", {"active": True})
        r(f"{who} backup", c, "GET", p + "/backup")
        r(f"{who} events", c, "GET", p + "/events/last")

    # backup and restore (internal/backup reads the kinds' descriptors now)
    _, backup = a.call("GET", p + "/backup")
    code, restored = r("restore", a, "POST", "/api/projects/restore", backup)
    if code == 200:
        R = f"/api/project/{restored['id']}"
        # Both builds answer the restore before every restored object is
        # numbered (controllers number them, and lists show only numbered
        # objects): wait until each list is as long as the source's.
        kinds = ("keys", "repositories", "inventory", "environment", "views", "templates", "schedules", "integrations")

        def counts(project):
            return [len(a.call("GET", f"{project}/{k}")[1] or []) for k in kinds]
        want = counts(p)
        for _ in range(300):
            if counts(R) == want:
                break
            time.sleep(0.2)
        for kind in ("keys", "repositories", "inventory", "environment", "views", "templates", "schedules", "integrations"):
            r(f"restored {kind}", a, "GET", f"{R}/{kind}")
        r("restored backup", a, "GET", R + "/backup")
    r("restore broken", a, "POST", "/api/projects/restore", {"meta": {"name": "x"}, "templates": [{"name": "t", "inventory": "nope"}]})
    r("restore empty", a, "POST", "/api/projects/restore", {})

    # in-use deletes
    r("delete key in use", a, "DELETE", f"{p}/keys/{kn}")
    r("delete repo in use", a, "DELETE", f"{p}/repositories/{repo}")
    r("delete inv in use", a, "DELETE", f"{p}/inventory/{inv}")
    r("delete env in use", a, "DELETE", f"{p}/environment/{env}")
    r("delete vault key in use", a, "DELETE", f"{p}/keys/{kv}")
    r("delete auth key in use", a, "DELETE", f"{p}/keys/{klp}")
    r("delete build tpl in use", a, "DELETE", f"{p}/templates/{tb}")
    r("delete tpl with integration", a, "DELETE", f"{p}/templates/{tbash}")
    # deletes that go through
    r("delete matcher list", a, "GET", I + "/matchers")
    r("delete sched", a, "DELETE", f"{p}/schedules/{sch}")
    r("delete view", a, "DELETE", f"{p}/views/{v2}")
    r("tpl after view delete", a, "GET", f"{p}/templates/{tbash}")
    r("delete integ", a, "DELETE", I)
    r("integ gone", a, "GET", I)
    r("delete tpl now", a, "DELETE", f"{p}/templates/{tbash}")
    r("tpl gone", a, "GET", f"{p}/templates/{tbash}")
    r("tasks after tpl delete", a, "GET", p + "/tasks")
    r("delete key of B via A", a, "DELETE", f"{p}/keys/{kB}")
    r("delete project B", a, "DELETE", pB)
    r("project B gone", a, "GET", pB)


def main():
    old_url, old_pw, new_url, new_pw = sys.argv[1:5]
    repo = git_repo()
    sides = [Side(old_url, old_pw, repo), Side(new_url, new_pw, repo)]
    for s in sides:
        script(s)
    diffs = 0
    for (step, method, c1, b1), (step2, _, c2, b2) in zip(sides[0].answers, sides[1].answers):
        assert step == step2
        n1, n2 = normalise(b1), normalise(b2)
        if c1 != c2:
            diffs += 1
            print(f"STATUS  {step}: old {c1} {json.dumps(b1)[:300]}\n        new {c2} {json.dumps(b2)[:300]}")
        elif shape(b1) != shape(b2):
            diffs += 1
            print(f"SHAPE   {step}:\n        " + "\n        ".join(where(shape(b1), shape(b2))[:8]))
        elif n1 != n2:
            diffs += 1
            print(f"VALUE   {step}:\n        " + "\n        ".join(where(n1, n2)[:8]))
    print(f"{len(sides[0].answers)} calls, {diffs} differences")


if __name__ == "__main__":
    main()
