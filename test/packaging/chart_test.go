package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join(repoRoot, "config", "helm", "bastion")

// The install commands docs/install.md gives; TestInstallDoc checks that
// the document says exactly these.
const (
	releaseName      = "bastion"
	releaseNamespace = "bastion-system"
	helmInstall      = "helm install bastion config/helm/bastion --namespace bastion-system --create-namespace"
	readAdminSecret  = "kubectl -n bastion-system get secret bastion-initial-admin -o jsonpath='{.data.password}' | base64 -d; echo"
)

// render renders the chart as `helm install bastion -n bastion-system`
// would, with values merged over values.yaml.
func render(t *testing.T, values map[string]any) (map[string]string, error) {
	t.Helper()
	return renderRelease(t, values, common.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true,
	}, engine.Engine{})
}

// renderRelease renders the chart for the release with eng: one made by
// engine.New answers the templates' lookups from a cluster, as Helm does
// on a real install or upgrade.
func renderRelease(t *testing.T, values map[string]any, release common.ReleaseOptions, eng engine.Engine) (map[string]string, error) {
	t.Helper()
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := util.ToRenderValues(chart, values, release, nil)
	if err != nil {
		return nil, err
	}
	return eng.RenderWithContext(t.Context(), chart, top)
}

// renderObjects renders and decodes every manifest (not NOTES.txt).
func renderObjects(t *testing.T, values map[string]any) ([]*unstructured.Unstructured, string) {
	t.Helper()
	files, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var objs []*unstructured.Unstructured
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		objs = append(objs, decodeAll(t, name, []byte(files[name]))...)
	}
	return objs, files["bastion/templates/NOTES.txt"]
}

func valuesFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	return values
}

// applyChart dry-runs the CRDs first (installed for real by TestMain),
// then everything else, in the release namespace.
func applyChart(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ensureNamespace(t, releaseNamespace)
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	dryRunApply(t, crds)
	dryRunApply(t, rest)
}

func TestChart_lintFindsNothingWithDefaultOrAllOptionValues(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"default":     {},
		"all options": valuesFile(t, "testdata/values-all.yaml"),
	} {
		result := lint.RunAll(chartDir, values, releaseNamespace)
		for _, m := range result.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", name, m)
			}
		}
	}
}

func TestChart_defaultInstallIsAcceptedByTheAPIServer(t *testing.T) {
	objs, notes := renderObjects(t, nil)
	got := kinds(objs)
	for kind, n := range map[string]int{
		"CustomResourceDefinition": 11, "Deployment": 1, "Service": 2, "ServiceAccount": 1, "ClusterRole": 2,
		"ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 2, "PersistentVolumeClaim": 1, "Secret": 1,
		"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
		// The runners' egress (--runner-network-policy) and the manager's
		// ingress.
		"ConfigMap": 1, "NetworkPolicy": 1,
	} {
		if got[kind] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", got[kind], kind, n, got)
		}
	}
	for _, kind := range []string{"Ingress", "ServiceMonitor"} {
		if got[kind] != 0 {
			t.Errorf("the default install has a %s", kind)
		}
	}
	crd := find(t, objs, "CustomResourceDefinition", "tasks.automation.bastion.dev")
	if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Error("CRDs are not kept on uninstall by default")
	}
	secret := find(t, objs, "Secret", "-initial-admin")
	if pw, _, _ := unstructured.NestedString(secret.Object, "data", "password"); len(pw) < 24 {
		t.Errorf("initial admin password %q is not generated", pw)
	}
	if secret.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Error("the initial admin's password is not kept on uninstall, but the users it opens are")
	}

	args := containerArgs(t, find(t, objs, "Deployment", releaseName))
	for _, want := range []string{
		"--leader-elect=true", "--runner-url=http://bastion.bastion-system.svc:80",
		"--store=sqlite:///var/lib/bastion/bastion.db", "--demo-repo-listen=:9418",
		"--runner-image-ansible=ghcr.io/bastion-dev/bastion-runner-ansible:0.1.0",
		"--initial-admin-password-file=/etc/bastion/initial-admin/password",
		"--runner-network-policy=/etc/bastion/config/runner-egress.yaml",
		"--task-cpu-request=100m", "--task-memory-request=256Mi", "--task-cpu-limit=2", "--task-memory-limit=2Gi",
		"--shutdown-delay=5s",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("manager args %v lack %s", args, want)
		}
	}
	assertFlagsExist(t, args)
	// The pod's grace period holds the shutdown delay and the stop after it.
	if grace, _, _ := unstructured.NestedFieldNoCopy(find(t, objs, "Deployment", releaseName).Object,
		"spec", "template", "spec", "terminationGracePeriodSeconds"); fmt.Sprint(grace) != "50" {
		t.Errorf("terminationGracePeriodSeconds %v, want 50: the 5 s shutdown delay and 45 s to stop", grace)
	}
	// No runner image to choose and no service account to give task pods
	// unless the admin lists them.
	for _, arg := range args {
		if strings.HasPrefix(arg, "--runner-images") || strings.HasPrefix(arg, "--task-service-accounts") {
			t.Errorf("the default install allows task pods %s", arg)
		}
	}
	assertRestrictedPod(t, find(t, objs, "Deployment", releaseName))
	assertTaskPodsNetwork(t, objs)

	// NOTES.txt tells how to reach the console and read the password.
	for _, want := range []string{readAdminSecret, "kubectl -n bastion-system port-forward svc/bastion 3000:80", `Sign in as "admin"`} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
		}
	}
	applyChart(t, objs)
}

func TestChart_everyOptionOnIsAcceptedByTheAPIServer(t *testing.T) {
	objs, notes := renderObjects(t, valuesFile(t, "testdata/values-all.yaml"))
	got := kinds(objs)
	for _, kind := range []string{"Ingress", "ServiceMonitor", "ConfigMap"} {
		if got[kind] != 1 {
			t.Errorf("%d %s objects, want 1", got[kind], kind)
		}
	}
	if got["PersistentVolumeClaim"] != 0 {
		t.Error("a PostgreSQL install has a PVC")
	}
	// Secrets: the admin password, the DSN, the single sign-on cookie key.
	if got["Secret"] != 3 {
		t.Errorf("%d Secrets, want 3", got["Secret"])
	}
	deploy := find(t, objs, "Deployment", releaseName)
	args := containerArgs(t, deploy)
	for _, want := range []string{
		"--store-file=/etc/bastion/store/dsn", "--public-url=https://bastion.example.com",
		"--task-cpu-request=250m", "--task-memory-request=512Mi", "--task-cpu-limit=", "--task-memory-limit=4Gi",
		"--runner-url=http://bastion.bastion-system.svc:8000", "--oidc-config=/etc/bastion/config/oidc.yaml",
		"--disable-password-login", "--runner-network-policy=/etc/bastion/config/runner-egress.yaml", "--allow-gitops-edits",
		"--global-max-parallel-tasks=10", "--task-keep-last=50", "--task-deadline=2h",
		"--runner-image-terraform=registry.example.com/bastion-runner-terraform:0.1.0", "--initial-admin-login=root",
		"--runner-image-pull-policy=Always", "--trusted-proxies=10.244.0.0/16,192.168.0.10",
		// Alerts: every sender on, its secrets as files.
		"--alert-on-stopped=true", "--alert-attempts=3", "--alert-backoff=30s",
		"--smtp-host=smtp.example.com", "--smtp-port=465", "--smtp-tls=tls", "--smtp-username=bastion",
		"--smtp-password-file=/etc/bastion/alerts/smtp-password", "--telegram-token-file=/etc/bastion/alerts/telegram-token",
		"--chat-webhook-url-file=/etc/bastion/alerts/chat-webhook-url",
		"--runner-images=ansible-gpu=registry.example.com/runner-ansible-gpu:1.2,tf-1.9=registry.example.com/runner-terraform:1.9",
		"--task-service-accounts=deployer,backup-writer",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("manager args %v lack %s", args, want)
		}
	}
	assertFlagsExist(t, args)
	assertRestrictedPod(t, deploy)
	for _, secret := range []string{"bastion-smtp", "bastion-telegram", "bastion-chat-webhook"} {
		if !strings.Contains(deploymentYAML(t, deploy), "name: "+secret) {
			t.Errorf("the Deployment does not mount the alert Secret %s", secret)
		}
	}
	if !strings.Contains(notes, "https://bastion.example.com") {
		t.Errorf("NOTES.txt does not give the public URL:\n%s", notes)
	}

	// The runners' egress file is what --runner-network-policy reads
	// strictly, and the policy the manager makes of it is valid.
	egress := runnerEgress(t, objs)
	if len(egress) != 4 || len(egress[0].Ports) != 2 || egress[0].Ports[0].Port.IntValue() != 3000 {
		t.Errorf("runner egress: manager (3000, 9418), DNS and the two allowed rules expected, got %+v", egress)
	}
	policy := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "bastion-runners", Namespace: releaseNamespace},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "bastion-runner"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(policy)
	if err != nil {
		t.Fatal(err)
	}
	applyChart(t, append(objs, &unstructured.Unstructured{Object: content}))
}

// Settings that cannot work are refused at render time with the fix.
func TestChart_refusesSettingsThatCannotWork(t *testing.T) {
	for values, want := range map[string]string{
		`replicaCount: 2`:                      "replicas=2 needs store.type=postgres",
		`store: {type: postgres}`:              "store.type=postgres needs store.postgres.existingSecret",
		`store: {type: mysql}`:                 `store.type must be sqlite or postgres, not "mysql"`,
		`oidc: {providers: [{id: corp}]}`:      "each oidc.providers entry needs id, issuer, clientID and clientSecretRef",
		`ingress: {enabled: true, host: ""}`:   "ingress.enabled needs ingress.host",
		`alerts: {email: {enabled: true}}`:     "alerts.email.host is required when alerts.email.enabled",
		`alerts: {telegram: {enabled: true}}`:  "alerts.telegram.tokenSecret is required when alerts.telegram.enabled",
		`tasks: {runnerImages: [{name: gpu}]}`: "each tasks.runnerImages entry needs name and image",
		`shutdownDelaySeconds: 90`:             "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not 90",
		`shutdownDelaySeconds: 5s`:             "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not 5s",
		`shutdownDelaySeconds: -1`:             "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not -1",
		`shutdownDelaySeconds: "09"`:           "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not 09",
		`shutdownDelaySeconds: "099"`:          "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not 099",
		`shutdownDelaySeconds: 5.5`:            "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not 5.5",
	} {
		parsed := map[string]any{}
		if err := yaml.Unmarshal([]byte(values), &parsed); err != nil {
			t.Fatal(err)
		}
		_, err := render(t, parsed)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("values %s: got %v, want %q", values, err, want)
		}
	}
}

// The chart's copies of the CRDs and of the generated ClusterRole are the
// generated files (make manifests refreshes both).
func TestChart_shipsTheGeneratedCRDsAndRole(t *testing.T) {
	bases, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	copies, _ := filepath.Glob(filepath.Join(chartDir, "files", "crds", "*.yaml"))
	if len(copies) != len(bases) {
		t.Errorf("the chart has %d CRDs, config/crd/bases %d: run make manifests", len(copies), len(bases))
	}
	pairs := map[string]string{
		filepath.Join(repoRoot, "config", "rbac", "role.yaml"):              filepath.Join(chartDir, "files", "rbac", "role.yaml"),
		filepath.Join(repoRoot, "config", "rbac", "namespace", "role.yaml"): filepath.Join(chartDir, "files", "rbac", "namespace-role.yaml"),
	}
	for _, b := range bases {
		pairs[b] = filepath.Join(chartDir, "files", "crds", filepath.Base(b))
	}
	for generated, copied := range pairs {
		a, errA := os.ReadFile(generated)
		b, errB := os.ReadFile(copied)
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s differs from %s (%v %v): run make manifests", copied, generated, errA, errB)
		}
	}
}

func containerArgs(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return args
}

func deploymentYAML(t *testing.T, deploy *unstructured.Unstructured) string {
	t.Helper()
	data, err := yaml.Marshal(deploy.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// assertFlagsExist checks every --flag the chart passes against the
// manager's flag definitions (internal/cmd): a renamed flag
// would otherwise only show as a crash-looping pod.
func assertFlagsExist(t *testing.T, args []string) {
	t.Helper()
	// The manager's flags are defined in internal/cmd (manager.go, and
	// alerts.go for the flags it shares with `bastion dev`), the task
	// pods' resources in controllers/launch.
	var source []byte
	for _, name := range []string{"internal/cmd/manager.go", "internal/cmd/alerts.go", "controllers/launch/resources.go"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		source = append(source, data...)
	}
	flag := regexp.MustCompile(`^--([a-z0-9-]+)`)
	for _, arg := range args[1:] { // args[0] is the subcommand
		m := flag.FindStringSubmatch(arg)
		if m == nil {
			t.Errorf("argument %q is not a flag", arg)
			continue
		}
		if !strings.Contains(string(source), `"`+m[1]+`"`) {
			t.Errorf("the manager has no flag --%s", m[1])
		}
	}
	if args[0] != "manager" {
		t.Errorf("the container runs %q, want the manager subcommand", args[0])
	}
}

// The shutdown delay reaches the flag and the grace period as the same
// number, whether it comes from a values file (a float), --set (an int) or
// --set-string.
func TestChart_shutdownDelayIsOneNumberInTheFlagAndTheGracePeriod(t *testing.T) {
	for _, v := range []any{10.0, int64(10), "10"} {
		objs, _ := renderObjects(t, map[string]any{"shutdownDelaySeconds": v})
		deploy := find(t, objs, "Deployment", releaseName)
		if args := containerArgs(t, deploy); !slices.Contains(args, "--shutdown-delay=10s") {
			t.Errorf("shutdownDelaySeconds %#v: args %v lack --shutdown-delay=10s", v, args)
		}
		if grace, _, _ := unstructured.NestedFieldNoCopy(deploy.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); fmt.Sprint(grace) != "55" {
			t.Errorf("shutdownDelaySeconds %#v: terminationGracePeriodSeconds %v, want 55", v, grace)
		}
	}
}
