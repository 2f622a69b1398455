package backup

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// Secret values of the fixture; none may appear in a backup.
const (
	fixturePassword   = "s3cret-login-password"
	fixturePrivateKey = "-----BEGIN OPENSSH PRIVATE KEY-----fixture"
	fixtureEnvSecret  = "s3cret-db-password"
	fixtureAlias      = "fixtureAliasThatIsACredential01"
)

// fixture creates a project holding every kind, with every field set
// somewhere, and returns it. Metadata names differ from display names, as
// they do for objects the API creates, so that a mix-up shows.
func fixture(t *testing.T) *bastionv1.Project {
	t.Helper()
	ctx := context.Background()
	project, err := createProject(k8sClient)(ctx, bastionv1.ProjectSpec{
		DisplayName: "Web shop", Alert: true, AlertChat: "chat-42", MaxParallelTasks: 3, Type: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	ns := bastionv1.ProjectNamespace(project.Name)
	meta := func(name string, id int) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: ns}
		if id > 0 {
			m.Labels = map[string]string{bastionv1.LabelID: ids.Format(int64(id))}
		}
		return m
	}
	key := func(name, display string, keyType bastionv1.KeyType, secretType corev1.SecretType, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: meta(name, 0), Type: secretType, StringData: data}
		s.Labels = map[string]string{bastionv1.LabelKeyType: string(keyType)}
		if display != "" {
			s.Annotations = map[string]string{bastionv1.AnnotationDisplayName: display}
		}
		return s
	}
	ref := func(name string) *bastionv1.ObjectRef { return &bastionv1.ObjectRef{Name: name} }
	objs := []client.Object{
		// Keys have no id here (as when made with kubectl), so an export
		// lists them by creation time, then name. They are created in name
		// order, so the order is the same whether or not a second boundary
		// falls between two creations.
		key("k-hook", "Webhook secret", bastionv1.KeyTypeLoginPassword, corev1.SecretTypeBasicAuth,
			map[string]string{"password": fixturePassword}),
		key("k-login", "Deploy login", bastionv1.KeyTypeLoginPassword, corev1.SecretTypeBasicAuth,
			map[string]string{"username": "deploy", "password": fixturePassword}),
		key("k-ssh", "Deploy SSH", bastionv1.KeyTypeSSH, corev1.SecretTypeSSHAuth,
			map[string]string{bastionv1.KeyPrivateKey: fixturePrivateKey, bastionv1.KeyLogin: "deploy"}),
		key("k-vault", "Vault password", bastionv1.KeyTypeLoginPassword, corev1.SecretTypeBasicAuth,
			map[string]string{"password": fixturePassword}),
		// No display-name annotation: the key is called by its metadata.name.
		key("public-none", "", bastionv1.KeyTypeNone, corev1.SecretTypeOpaque, nil),
		// Not a key: no label, so not in the backup.
		&corev1.Secret{ObjectMeta: meta("unrelated", 0), StringData: map[string]string{"x": fixturePassword}},

		&bastionv1.Repository{ObjectMeta: meta("r-app", 1), Spec: bastionv1.RepositorySpec{
			DisplayName: "App repo", GitURL: "https://example.com/app.git", GitBranch: "main",
			SSHKeyRef: bastionv1.ObjectRef{Name: "public-none"}}},
		&bastionv1.Repository{ObjectMeta: meta("r-local", 2), Spec: bastionv1.RepositorySpec{
			DisplayName: "Local", GitURL: "/srv/app", SSHKeyRef: bastionv1.ObjectRef{Name: "k-ssh"}}},

		&bastionv1.Inventory{ObjectMeta: meta("i-static", 1), Spec: bastionv1.InventorySpec{
			DisplayName: "Prod hosts", Type: bastionv1.InventoryStatic, Inventory: "[web]\nweb1\n",
			SSHKeyRef: bastionv1.ObjectRef{Name: "k-login"}, BecomeKeyRef: ref("k-ssh")}},
		&bastionv1.Inventory{ObjectMeta: meta("i-yaml", 2), Spec: bastionv1.InventorySpec{
			DisplayName: "YAML hosts", Type: bastionv1.InventoryStaticYAML, Inventory: "all:\n  hosts: {web1: {}}\n",
			SSHKeyRef: bastionv1.ObjectRef{Name: "k-ssh"}}},
		&bastionv1.Inventory{ObjectMeta: meta("i-file", 3), Spec: bastionv1.InventorySpec{
			DisplayName: "File hosts", Type: bastionv1.InventoryFile, Inventory: "inventories/prod.ini",
			SSHKeyRef: bastionv1.ObjectRef{Name: "k-ssh"}, BecomeKeyRef: ref("k-login"), RepositoryRef: ref("r-app")}},
		&bastionv1.Inventory{ObjectMeta: meta("i-tf", 4), Spec: bastionv1.InventorySpec{
			DisplayName: "TF workspace", Type: bastionv1.InventoryTerraformWorkspace,
			SSHKeyRef: bastionv1.ObjectRef{Name: "public-none"}}},

		&corev1.Secret{ObjectMeta: meta("e-staging-secrets", 0), StringData: map[string]string{
			"var.db_password": fixtureEnvSecret, "env.API_TOKEN": fixtureEnvSecret, "password": fixtureEnvSecret}},
		&bastionv1.Environment{ObjectMeta: meta("e-staging", 1), Spec: bastionv1.EnvironmentSpec{
			DisplayName: "Staging",
			ExtraVars:   &apiextensionsv1.JSON{Raw: []byte(`{"app_port":8080,"nested":{"list":[1,"two",true]}}`)},
			Env:         map[string]string{"ANSIBLE_FORCE_COLOR": "1", "TZ": "UTC"},
			SecretRef:   ref("e-staging-secrets")}},
		&bastionv1.Environment{ObjectMeta: meta("e-empty", 2), Spec: bastionv1.EnvironmentSpec{DisplayName: "Empty"}},

		&bastionv1.View{ObjectMeta: meta("v-builds", 1), Spec: bastionv1.ViewSpec{Title: "Builds"}},
		&bastionv1.View{ObjectMeta: meta("v-deploys", 2), Spec: bastionv1.ViewSpec{Title: "Deploys", Position: 1}},

		// The deploy template has the lower id, so the file lists it before
		// the build template it needs: the restore must reorder.
		&bastionv1.Template{ObjectMeta: meta("t-deploy", 1), Spec: bastionv1.TemplateSpec{
			DisplayName: "Deploy app", Type: bastionv1.TemplateDeploy, App: bastionv1.AppAnsible, Playbook: "deploy.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: "r-app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "e-staging"},
			InventoryRef: ref("i-file"), ViewRef: ref("v-deploys"), BuildTemplateRef: ref("t-build"),
			Autorun: true, SuppressSuccessAlerts: true}},
		&bastionv1.Template{ObjectMeta: meta("t-build", 2), Spec: bastionv1.TemplateSpec{
			DisplayName: "Build app", Description: "Builds the app", Type: bastionv1.TemplateBuild, Playbook: "build.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: "r-app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "e-empty"},
			InventoryRef: ref("i-static"), ViewRef: ref("v-builds"), StartVersion: "1.0.0", GitBranch: "develop",
			Arguments: []string{"-v", "--diff"}, AllowOverrideArgsInTask: true, KeepLast: ptr.To[int32](5),
			Vaults: []bastionv1.TemplateVault{
				{KeyRef: bastionv1.ObjectRef{Name: "k-vault"}},
				{Name: "prod", KeyRef: bastionv1.ObjectRef{Name: "k-vault"}},
			},
			SurveyVars: []bastionv1.SurveyVar{
				{Name: "replicas", Title: "Replicas", Type: "int", Required: true, Description: "How many"},
				{Name: "tier", Title: "Tier", Type: "enum", Values: []bastionv1.SurveyVarValue{{Name: "Gold", Value: "gold"}, {Name: "Free", Value: "free"}}},
				{Name: "note", Title: "Note"},
			}}},
		&bastionv1.Template{ObjectMeta: meta("t-cleanup", 3), Spec: bastionv1.TemplateSpec{
			DisplayName: "Clean up", App: bastionv1.AppBash, Playbook: "cleanup.sh",
			RepositoryRef: bastionv1.ObjectRef{Name: "r-local"}, EnvironmentRef: bastionv1.ObjectRef{Name: "e-empty"}}},

		&bastionv1.Schedule{ObjectMeta: meta("s-nightly", 1), Spec: bastionv1.ScheduleSpec{
			DisplayName: "Nightly build", TemplateRef: bastionv1.ObjectRef{Name: "t-build"}, CronFormat: "0 3 * * *",
			Active: false, RunOnlyOnNewCommit: true, RepositoryRef: ref("r-app")}},
		// Two schedules on one template: `cron` cannot say it, Schedules can.
		&bastionv1.Schedule{ObjectMeta: meta("s-hourly", 2), Spec: bastionv1.ScheduleSpec{
			TemplateRef: bastionv1.ObjectRef{Name: "t-cleanup"}, CronFormat: "0 * * * *", Active: true}},
		&bastionv1.Schedule{ObjectMeta: meta("s-weekly", 3), Spec: bastionv1.ScheduleSpec{
			DisplayName: "Weekly", TemplateRef: bastionv1.ObjectRef{Name: "t-cleanup"}, CronFormat: "CRON_TZ=Europe/Paris 30 2 * * 1", Active: true}},

		&bastionv1.Integration{ObjectMeta: meta("int-github", 1), Spec: bastionv1.IntegrationSpec{
			DisplayName: "GitHub push", TemplateRef: ref("t-build"), AuthMethod: bastionv1.AuthGitHub,
			AuthSecretRef: ref("k-hook"), Searchable: true,
			TaskParams: &apiextensionsv1.JSON{Raw: []byte(`{"message":"from webhook"}`)},
			Matchers: []bastionv1.IntegrationMatcher{
				{Name: "branch is main", MatchType: "body", Method: "equals", BodyDataType: "json", Key: "ref", Value: "refs/heads/main"},
				{Name: "is a push", MatchType: "header", Method: "contains", Key: "X-GitHub-Event", Value: "push"},
			},
			ExtractValues: []bastionv1.IntegrationExtractValue{
				{Name: "commit", ValueSource: "body", BodyDataType: "json", Key: "head_commit.id", Variable: "COMMIT_SHA"},
				{Name: "delivery", ValueSource: "header", Key: "X-GitHub-Delivery", Variable: "DELIVERY"},
			}}},
		&bastionv1.Integration{ObjectMeta: meta("int-manual", 2), Spec: bastionv1.IntegrationSpec{
			DisplayName: "Manual", AuthMethod: bastionv1.AuthToken, AuthHeader: "X-Token", AuthSecretRef: ref("k-hook")}},
		&bastionv1.IntegrationAlias{ObjectMeta: meta("a-github", 1), Spec: bastionv1.IntegrationAliasSpec{
			Alias: fixtureAlias, IntegrationRef: ref("int-github")}},
		&bastionv1.IntegrationAlias{ObjectMeta: meta("a-project", 2), Spec: bastionv1.IntegrationAliasSpec{
			Alias: fixtureAlias + "project"}},
	}
	for _, obj := range objs {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	return project
}

// wantFixture is the backup of the fixture, written out by hand.
func wantFixture() *Backup {
	return &Backup{
		Meta: Meta{Name: "Web shop", Alert: true, AlertChat: ptr.To("chat-42"), MaxParallelTasks: 3},
		// Keys have no ids in the fixture, so they come by metadata.name.
		Keys: []Key{
			{Name: "Webhook secret", Type: "login_password"},
			{Name: "Deploy login", Type: "login_password"},
			{Name: "Deploy SSH", Type: "ssh"},
			{Name: "Vault password", Type: "login_password"},
			{Name: "public-none", Type: "none"},
		},
		Repositories: []Repository{
			{Name: "App repo", GitURL: "https://example.com/app.git", GitBranch: "main", SSHKey: "public-none"},
			{Name: "Local", GitURL: "/srv/app", SSHKey: "Deploy SSH"},
		},
		Inventories: []Inventory{
			{Name: "Prod hosts", Type: "static", Inventory: "[web]\nweb1\n", SSHKey: "Deploy login", BecomeKey: "Deploy SSH"},
			{Name: "YAML hosts", Type: "static-yaml", Inventory: "all:\n  hosts: {web1: {}}\n", SSHKey: "Deploy SSH"},
			{Name: "File hosts", Type: "file", Inventory: "inventories/prod.ini", SSHKey: "Deploy SSH", BecomeKey: "Deploy login", Repository: "App repo"},
			{Name: "TF workspace", Type: "terraform-workspace", SSHKey: "public-none"},
		},
		Environments: []Environment{
			{Name: "Staging", JSON: `{"app_port":8080,"nested":{"list":[1,"two",true]}}`, Env: `{"ANSIBLE_FORCE_COLOR":"1","TZ":"UTC"}`,
				Secrets: []EnvironmentSecret{{Name: "API_TOKEN", Type: "env"}, {Name: "db_password", Type: "var"}}},
			{Name: "Empty", JSON: "{}", Env: "{}"},
		},
		Views: []View{{Title: "Builds"}, {Title: "Deploys", Position: 1}},
		Templates: []Template{
			{Name: "Deploy app", Type: "deploy", App: "ansible", Playbook: "deploy.yml", Autorun: true, SuppressSuccessAlerts: true,
				Repository: "App repo", Environment: "Staging", Inventory: "File hosts", View: "Deploys", BuildTemplate: "Build app"},
			{Name: "Build app", Description: "Builds the app", Type: "build", Playbook: "build.yml",
				Arguments: `["-v","--diff"]`, AllowOverrideArgsInTask: true, GitBranch: "develop", StartVersion: "1.0.0",
				KeepLast: ptr.To[int32](5),
				SurveyVars: []SurveyVar{
					{Name: "replicas", Title: "Replicas", Description: "How many", Type: "int", Required: true},
					{Name: "tier", Title: "Tier", Type: "enum", Values: []SurveyVarValue{{Name: "Gold", Value: "gold"}, {Name: "Free", Value: "free"}}},
					{Name: "note", Title: "Note"},
				},
				Repository: "App repo", Environment: "Empty", Inventory: "Prod hosts", View: "Builds",
				// Its one schedule is inactive, so no `cron`.
				Vaults: []Vault{{VaultKey: "Vault password"}, {Name: "prod", VaultKey: "Vault password"}}},
			{Name: "Clean up", App: "bash", Playbook: "cleanup.sh", Repository: "Local", Environment: "Empty"},
		},
		Schedules: []Schedule{
			{Name: "Nightly build", Template: "Build app", CronFormat: "0 3 * * *", Active: ptr.To(false), RunOnlyOnNewCommit: true, Repository: "App repo"},
			{Template: "Clean up", CronFormat: "0 * * * *", Active: ptr.To(true)},
			{Name: "Weekly", Template: "Clean up", CronFormat: "CRON_TZ=Europe/Paris 30 2 * * 1", Active: ptr.To(true)},
		},
		Integrations: []Integration{
			{Name: "GitHub push", Template: "Build app", AuthMethod: "github", AuthSecret: "Webhook secret", Searchable: true,
				TaskParams: json.RawMessage(`{"message":"from webhook"}`),
				Aliases:    []string{"a-github"},
				Matchers: []Matcher{
					{Name: "branch is main", MatchType: "body", Method: "equals", BodyDataType: "json", Key: "ref", Value: "refs/heads/main"},
					{Name: "is a push", MatchType: "header", Method: "contains", Key: "X-GitHub-Event", Value: "push"},
				},
				ExtractValues: []ExtractValue{
					{Name: "commit", ValueSource: "body", BodyDataType: "json", Key: "head_commit.id", Variable: "COMMIT_SHA"},
					{Name: "delivery", ValueSource: "header", Key: "X-GitHub-Delivery", Variable: "DELIVERY"},
				}},
			{Name: "Manual", AuthMethod: "token", AuthHeader: "X-Token", AuthSecret: "Webhook secret",
				Aliases: []string{}, Matchers: []Matcher{}, ExtractValues: []ExtractValue{}},
		},
		IntegrationAliases: []string{"a-project"},
	}
}

func TestExport_writesEveryFieldByNameAndNoSecret(t *testing.T) {
	ctx := context.Background()
	project := fixture(t)
	got, err := Export(ctx, k8sClient, project)
	if err != nil {
		t.Fatal(err)
	}
	compareBackups(t, got, wantFixture(), false)

	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{fixturePassword, fixturePrivateKey, fixtureEnvSecret, fixtureAlias, "unrelated"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the backup contains %q:\n%s", secret, data)
		}
	}
	// The layout: every top-level key, arrays even when empty.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	for _, key := range topKeys {
		if _, ok := top[key]; !ok {
			t.Errorf("top-level key %q is missing", key)
		}
	}
}

func TestRestore_roundTripsEveryKind(t *testing.T) {
	ctx := context.Background()
	original := fixture(t)
	first, err := Export(ctx, k8sClient, original)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(first, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse of an export: %v\n%s", err, data)
	}
	restored, err := Restore(ctx, k8sClient, parsed, createProject(k8sClient))
	if err != nil {
		t.Fatal(err)
	}
	if restored.Name == original.Name {
		t.Fatalf("the restore reused the project name %s", restored.Name)
	}
	second, err := Export(ctx, k8sClient, restored)
	if err != nil {
		t.Fatal(err)
	}
	compareBackups(t, second, first, true)

	ns := bastionv1.ProjectNamespace(restored.Name)
	t.Run("keys have their type and no secret", func(t *testing.T) {
		var secrets corev1.SecretList
		if err := k8sClient.List(ctx, &secrets, client.InNamespace(ns), client.HasLabels{bastionv1.LabelKeyType}); err != nil {
			t.Fatal(err)
		}
		wantType := map[string]corev1.SecretType{
			"ssh": corev1.SecretTypeOpaque, "none": corev1.SecretTypeOpaque, "login_password": corev1.SecretTypeBasicAuth,
		}
		if len(secrets.Items) != 5 {
			t.Fatalf("%d keys, want 5", len(secrets.Items))
		}
		for _, s := range secrets.Items {
			if want := wantType[s.Labels[bastionv1.LabelKeyType]]; s.Type != want {
				t.Errorf("key %s: type %s, want %s", s.Name, s.Type, want)
			}
			for k, v := range s.Data {
				if len(v) > 0 {
					t.Errorf("key %s: data %q is not empty", s.Name, k)
				}
			}
			if display := s.Annotations[bastionv1.AnnotationDisplayName]; !strings.HasPrefix(s.Name, strings.ToLower(strings.Fields(display)[0])) {
				t.Errorf("key %s: name not derived from its display name %q", s.Name, display)
			}
		}
	})
	t.Run("environment secrets exist without values", func(t *testing.T) {
		var envs bastionv1.EnvironmentList
		if err := k8sClient.List(ctx, &envs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range envs.Items {
			if e.Spec.DisplayName != "Staging" {
				continue
			}
			secret := &corev1.Secret{}
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: e.Spec.SecretRef.Name}, secret); err != nil {
				t.Fatal(err)
			}
			if len(secret.Data) != 2 || secret.Data["var.db_password"] == nil || secret.Data["env.API_TOKEN"] == nil {
				t.Errorf("secret data keys = %v, want var.db_password and env.API_TOKEN", secret.Data)
			}
			for k, v := range secret.Data {
				if len(v) > 0 {
					t.Errorf("environment secret %q has a value", k)
				}
			}
			return
		}
		t.Fatal("no Staging environment")
	})
	t.Run("aliases are fresh random strings", func(t *testing.T) {
		var aliases bastionv1.IntegrationAliasList
		if err := k8sClient.List(ctx, &aliases, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(aliases.Items) != 2 {
			t.Fatalf("%d aliases, want 2", len(aliases.Items))
		}
		urlSafe := regexp.MustCompile(`^[A-Za-z0-9_-]{16,}$`)
		seen := map[string]bool{}
		for _, a := range aliases.Items {
			if !urlSafe.MatchString(a.Spec.Alias) || strings.HasPrefix(a.Spec.Alias, fixtureAlias) || seen[a.Spec.Alias] {
				t.Errorf("alias %q: want 16+ fresh URL-safe characters", a.Spec.Alias)
			}
			seen[a.Spec.Alias] = true
		}
	})
	t.Run("names are generated from display names", func(t *testing.T) {
		var templates bastionv1.TemplateList
		if err := k8sClient.List(ctx, &templates, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, tpl := range templates.Items {
			prefix := map[string]string{"Build app": "build-app-", "Deploy app": "deploy-app-", "Clean up": "clean-up-"}[tpl.Spec.DisplayName]
			if !strings.HasPrefix(tpl.Name, prefix) || len(tpl.Name) != len(prefix)+5 {
				t.Errorf("template %q is named %s, want %sxxxxx", tpl.Spec.DisplayName, tpl.Name, prefix)
			}
		}
	})
}

func TestRestore_twiceMakesTwoProjects(t *testing.T) {
	ctx := context.Background()
	b, err := Export(ctx, k8sClient, fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	one, err := Restore(ctx, k8sClient, b, createProject(k8sClient))
	if err != nil {
		t.Fatal(err)
	}
	two, err := Restore(ctx, k8sClient, b, createProject(k8sClient))
	if err != nil {
		t.Fatal(err)
	}
	if one.Name == two.Name {
		t.Fatalf("both restores made project %s", one.Name)
	}
	for _, p := range []*bastionv1.Project{one, two} {
		got, err := Export(ctx, k8sClient, p)
		if err != nil {
			t.Fatal(err)
		}
		compareBackups(t, got, b, true)
	}
}

// A failure half way (here: the apiserver refuses templates) removes the
// project and its namespace.
func TestRestore_removesTheProjectWhenACreateFails(t *testing.T) {
	ctx := context.Background()
	b, err := Export(ctx, k8sClient, fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("templates are refused today")
	failing := interceptor.NewClient(k8sClient, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*bastionv1.Template); ok {
				return refused
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	var created *bastionv1.Project
	create := func(ctx context.Context, spec bastionv1.ProjectSpec) (*bastionv1.Project, error) {
		p, err := createProject(k8sClient)(ctx, spec)
		created = p
		return p, err
	}
	project, err := Restore(ctx, failing, b, create)
	if !errors.Is(err, refused) || project != nil {
		t.Fatalf("Restore = %v, %v; want nil and the create's error", project, err)
	}
	if !strings.Contains(err.Error(), `restoring template "`) {
		t.Errorf("error %q does not say what failed", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(created), &bastionv1.Project{}); !apierrors.IsNotFound(err) {
		t.Errorf("the project still exists: %v", err)
	}
	// envtest runs no namespace controller: a deleted namespace stays
	// Terminating, which is as gone as it gets here.
	ns := &corev1.Namespace{}
	err = k8sClient.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectNamespace(created.Name)}, ns)
	if err == nil && ns.DeletionTimestamp.IsZero() {
		t.Errorf("namespace %s is not being deleted", ns.Name)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// compareBackups compares section by section, so that a difference names
// its kind. For a restored project (restored), alias entries, which are
// placeholders that differ between projects by design, count only by
// number; and order is ignored, because without controllers the restored
// objects have no ids and list by their generated names.
func compareBackups(t *testing.T, got, want *Backup, restored bool) {
	t.Helper()
	if restored {
		got, want = normalise(got), normalise(want)
	}
	sections := func(b *Backup) map[string]any {
		return map[string]any{
			"meta": b.Meta, "templates": b.Templates, "repositories": b.Repositories, "keys": b.Keys,
			"views": b.Views, "inventories": b.Inventories, "environments": b.Environments,
			"integrations": b.Integrations, "integration_aliases": b.IntegrationAliases, "schedules": b.Schedules,
		}
	}
	g, w := sections(got), sections(want)
	for _, key := range topKeys {
		gj, _ := json.MarshalIndent(g[key], "", "  ")
		wj, _ := json.MarshalIndent(w[key], "", "  ")
		if string(gj) != string(wj) {
			t.Errorf("%s differ:\ngot  %s\nwant %s", key, gj, wj)
		}
	}
}

func normalise(b *Backup) *Backup {
	c := *b
	count := func(aliases []string) []string {
		out := make([]string, len(aliases))
		for i := range out {
			out[i] = "alias"
		}
		return out
	}
	c.IntegrationAliases = count(b.IntegrationAliases)
	c.Integrations = nil
	for _, i := range b.Integrations {
		i.Aliases = count(i.Aliases)
		c.Integrations = append(c.Integrations, i)
	}
	byName := func(name func(i int) string) func(i, j int) bool {
		return func(i, j int) bool { return name(i) < name(j) }
	}
	c.Keys = slices.Clone(c.Keys)
	sort.Slice(c.Keys, byName(func(i int) string { return c.Keys[i].Name }))
	c.Repositories = slices.Clone(c.Repositories)
	sort.Slice(c.Repositories, byName(func(i int) string { return c.Repositories[i].Name }))
	c.Inventories = slices.Clone(c.Inventories)
	sort.Slice(c.Inventories, byName(func(i int) string { return c.Inventories[i].Name }))
	c.Environments = slices.Clone(c.Environments)
	sort.Slice(c.Environments, byName(func(i int) string { return c.Environments[i].Name }))
	c.Views = slices.Clone(c.Views)
	sort.Slice(c.Views, byName(func(i int) string { return c.Views[i].Title }))
	c.Templates = slices.Clone(c.Templates)
	sort.Slice(c.Templates, byName(func(i int) string { return c.Templates[i].Name }))
	sort.Slice(c.Integrations, byName(func(i int) string { return c.Integrations[i].Name }))
	c.Schedules = slices.Clone(c.Schedules)
	sort.Slice(c.Schedules, byName(func(i int) string {
		return c.Schedules[i].Template + "\x00" + c.Schedules[i].Name + "\x00" + c.Schedules[i].CronFormat
	}))
	return &c
}
