package packaging

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// postgres is the smallest PostgreSQL store the chart accepts.
func postgres(extra string) map[string]any {
	values := map[string]any{}
	if err := yaml.Unmarshal([]byte("store: {type: postgres, postgres: {existingSecret: bastion-pg}}\n"+extra), &values); err != nil {
		panic(err)
	}
	return values
}

func parseValues(t *testing.T, s string) map[string]any {
	t.Helper()
	values := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &values); err != nil {
		t.Fatal(err)
	}
	return values
}

func typedDeployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", releaseName).Object, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The replicas each store gets, and what comes with more than one: a
// PodDisruptionBudget, a spread over nodes, leader election, a rolling
// update that keeps replicas serving; replicaCount still works.
func TestChart_replicasDefaultToTwoOnPostgresAndOneOnSQLite(t *testing.T) {
	for _, c := range []struct {
		name     string
		values   map[string]any
		replicas int32
		sqlite   bool
	}{
		{"sqlite by default", nil, 1, true},
		{"postgres by default", postgres(""), 2, false},
		{"postgres, replicas 3", postgres("replicas: 3"), 3, false},
		{"postgres, replicas 1", postgres("replicas: 1"), 1, false},
		{"postgres, replicaCount 3 (the old name)", postgres("replicaCount: 3"), 3, false},
		{"sqlite, replicaCount 1 (the old name)", parseValues(t, "replicaCount: 1"), 1, true},
		// An upgrade with --reuse-values from an older chart carries its
		// replicaCount; replicas, set with it, wins.
		{"postgres, replicaCount 1 and replicas 3", postgres("replicaCount: 1\nreplicas: 3"), 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, notes := renderObjects(t, c.values)
			d := typedDeployment(t, objs)
			if tellsLeader := strings.Contains(notes, "get lease bastion-manager.automation.bastion.dev"); tellsLeader != (c.replicas > 1) {
				t.Errorf("NOTES.txt tells how to find the leader: %v, with %d replicas:\n%s", tellsLeader, c.replicas, notes)
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != c.replicas {
				t.Fatalf("replicas %v, want %d", d.Spec.Replicas, c.replicas)
			}
			args := containerArgs(t, find(t, objs, "Deployment", releaseName))
			if !slices.Contains(args, "--leader-elect=true") {
				t.Errorf("args %v lack --leader-elect=true", args)
			}
			assertFlagsExist(t, args)
			assertPodName(t, d)
			assertStrategy(t, d, c.sqlite)
			pdbs := kinds(objs)["PodDisruptionBudget"]
			spread := d.Spec.Template.Spec.TopologySpreadConstraints
			if c.replicas == 1 {
				if pdbs != 0 || len(spread) != 0 {
					t.Errorf("one replica has %d PodDisruptionBudgets and spread %+v, want none", pdbs, spread)
				}
			} else {
				assertPDB(t, objs, d)
				assertSpread(t, spread, d)
			}
			applyChart(t, objs)
		})
	}
}

// POD_NAME from the downward API: the replica's own name.
func assertPodName(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "POD_NAME" {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
				t.Errorf("POD_NAME is %+v, want the pod's metadata.name", e)
			}
			return
		}
	}
	t.Error("no POD_NAME in the manager's environment")
}

// SQLite's volume is ReadWriteOnce: the old pod goes before the new one
// starts. PostgreSQL: a new pod is up before an old one stops.
func assertStrategy(t *testing.T, d *appsv1.Deployment, sqlite bool) {
	t.Helper()
	s := d.Spec.Strategy
	if sqlite {
		if s.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("SQLite: strategy %+v, want Recreate", s)
		}
		return
	}
	if s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 1 {
		t.Errorf("PostgreSQL: strategy %+v, want RollingUpdate with maxUnavailable 0, maxSurge 1", s)
	}
}

// The budget lets one replica go at a time, and selects exactly the
// manager's pods.
func assertPDB(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment) {
	t.Helper()
	pdb := &policyv1.PodDisruptionBudget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "PodDisruptionBudget", releaseName).Object, pdb); err != nil {
		t.Fatal(err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget %+v, want maxUnavailable 1", pdb.Spec)
	}
	if pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		t.Error("an unhealthy replica would block a drain: unhealthyPodEvictionPolicy is not AlwaysAllow")
	}
	if !selects(t, pdb.Spec.Selector, d) {
		t.Errorf("PodDisruptionBudget selector %+v does not select the manager's pods %v", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
}

// One replica per node where there are nodes enough, and still scheduled
// on one node.
func assertSpread(t *testing.T, spread []corev1.TopologySpreadConstraint, d *appsv1.Deployment) {
	t.Helper()
	if len(spread) != 1 {
		t.Fatalf("spread %+v, want one constraint", spread)
	}
	s := spread[0]
	if s.TopologyKey != "kubernetes.io/hostname" || s.WhenUnsatisfiable != corev1.ScheduleAnyway || s.MaxSkew != 1 {
		t.Errorf("spread %+v, want maxSkew 1 over kubernetes.io/hostname, ScheduleAnyway", s)
	}
	if !selects(t, s.LabelSelector, d) {
		t.Errorf("spread selector %+v does not select the manager's pods", s.LabelSelector)
	}
}

func selects(t *testing.T, sel *metav1.LabelSelector, d *appsv1.Deployment) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(labels.Set(d.Spec.Template.Labels))
}

// The Lease NOTES.txt names is the one the manager takes (its name is a
// literal of internal/cmd).
func TestChart_notesNameTheManagersLease(t *testing.T) {
	sources, err := filepath.Glob(filepath.Join(repoRoot, "internal", "cmd", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range sources {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(path, "_test.go") && strings.Contains(string(data), `"bastion-manager.automation.bastion.dev"`) {
			return
		}
	}
	t.Error("the manager's Lease is no longer bastion-manager.automation.bastion.dev: change NOTES.txt, docs/install.md and test/cluster")
}

// Spread constraints given in values replace the chart's.
func TestChart_spreadConstraintsFromValuesReplaceTheDefault(t *testing.T) {
	objs, _ := renderObjects(t, postgres(`topologySpreadConstraints:
- {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app.kubernetes.io/component: manager}}}
`))
	spread := typedDeployment(t, objs).Spec.Template.Spec.TopologySpreadConstraints
	if len(spread) != 1 || spread[0].TopologyKey != "topology.kubernetes.io/zone" {
		t.Errorf("spread %+v, want the zone constraint of the values only", spread)
	}
}

// More than one replica on SQLite, or without leader election, is refused
// at render time (helm install, helm template), with the fix.
func TestChart_refusesReplicasThatCannotWork(t *testing.T) {
	for values, want := range map[string]string{
		`replicas: 2`:     "replicas=2 needs store.type=postgres: the SQLite file is on one ReadWriteOnce volume",
		`replicaCount: 3`: "replicas=3 needs store.type=postgres",
		"store: {type: postgres, postgres: {dsn: postgres://x}}\nleaderElection: false": "replicas=2 needs leaderElection=true",
	} {
		_, err := render(t, parseValues(t, values))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("values %q: got %v, want %q", values, err, want)
		}
	}
	// One replica without leader election stays possible.
	if _, err := render(t, postgres("replicas: 1\nleaderElection: false")); err != nil {
		t.Errorf("one replica without leader election: %v", err)
	}
}

// With single sign-on, every replica reads one cookie key from a Secret
// the chart generates on install and keeps on upgrade (read back from the
// cluster, as the initial admin's password is): a login that starts on
// one replica finishes on another.
func TestChart_singleSignOnCookieKeyIsSharedAndKeptAcrossUpgrades(t *testing.T) {
	values := postgres(`oidc:
  providers:
  - {id: corp, issuer: "https://sso.example.com", clientID: bastion, clientSecretRef: {name: bastion-oidc, key: client-secret}}
`)
	objs, _ := renderObjects(t, values)
	key := cookieKey(t, objs)
	if len(key) < 32 {
		t.Fatalf("cookie key %q is not generated", key)
	}
	d := typedDeployment(t, objs)
	args := containerArgs(t, find(t, objs, "Deployment", releaseName))
	if !slices.Contains(args, "--oidc-cookie-key-file=/etc/bastion/oidc-cookie-key/key") {
		t.Errorf("args %v lack --oidc-cookie-key-file", args)
	}
	mounted := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		mounted = mounted || (v.Secret != nil && v.Secret.SecretName == "bastion-oidc-cookie-key")
	}
	if !mounted {
		t.Error("the cookie key's Secret is not a volume of the manager")
	}

	// An upgrade finds the Secret in the cluster and keeps its key.
	ensureNamespace(t, releaseNamespace)
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bastion-oidc-cookie-key", Namespace: releaseNamespace},
		Data: map[string][]byte{"key": []byte("the-key-the-first-install-generated-0123456789")}}
	if err := k8sClient.Create(context.Background(), existing); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), existing) })
	files, err := renderRelease(t, values, common.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 2, IsUpgrade: true,
	}, engine.New(cfg))
	if err != nil {
		t.Fatal(err)
	}
	upgraded := decodeAll(t, "secrets.yaml", []byte(files["bastion/templates/secrets.yaml"]))
	if got := cookieKey(t, upgraded); got != string(existing.Data["key"]) {
		t.Errorf("the upgrade made cookie key %q, want the existing %q", got, existing.Data["key"])
	}
}

func cookieKey(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	encoded, _, _ := unstructured.NestedString(find(t, objs, "Secret", "-oidc-cookie-key").Object, "data", "key")
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return string(key)
}
