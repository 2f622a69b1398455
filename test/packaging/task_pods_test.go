package packaging

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The cloud metadata services' addresses.
var metadataAddresses = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// assertTaskPodsNetwork checks the chart's default network for task pods:
// their egress (runner-egress.yaml, which the manager applies in every
// project namespace) reaches no metadata address and, of the manager's
// ports, only the stream endpoint and the demo repository; the manager's
// own NetworkPolicy opens its metrics port only to namespaces that are no
// project's, so a wide egress rule cannot reach it either.
func assertTaskPodsNetwork(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for i, rule := range runnerEgress(t, objs) {
		if len(rule.To) == 0 {
			t.Errorf("egress rule %d allows every destination", i)
		}
		for _, peer := range rule.To {
			if peer.IPBlock != nil {
				assertExceptsMetadata(t, peer.IPBlock)
			}
			if peer.PodSelector != nil && peer.PodSelector.MatchLabels["app.kubernetes.io/component"] == "manager" {
				var ports []int
				for _, p := range rule.Ports {
					ports = append(ports, p.Port.IntValue())
				}
				if !slices.Equal(ports, []int{3000, 9418}) {
					t.Errorf("task pods reach the manager on ports %v, want the stream endpoint and git only", ports)
				}
			}
		}
	}

	policy := &networkingv1.NetworkPolicy{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "NetworkPolicy", "-manager").Object, policy); err != nil {
		t.Fatal(err)
	}
	open := map[int]bool{} // ports any pod may reach
	for _, rule := range policy.Spec.Ingress {
		fromProjects := len(rule.From) == 0
		for _, peer := range rule.From {
			ns := peer.NamespaceSelector
			excludesProjects := ns != nil && len(ns.MatchExpressions) == 1 && ns.MatchExpressions[0].Key == "automation.bastion.dev/project" &&
				ns.MatchExpressions[0].Operator == "DoesNotExist" && peer.IPBlock == nil && peer.PodSelector == nil
			fromProjects = fromProjects || !excludesProjects
		}
		for _, p := range rule.Ports {
			if fromProjects {
				open[p.Port.IntValue()] = true
			}
		}
	}
	if open[8080] || !open[3000] || !open[9418] {
		t.Errorf("the manager's pods are open to task pods on %v: want 3000 and 9418, never the metrics port 8080", open)
	}
}

// runnerEgress reads the runners' egress file the chart writes for
// --runner-network-policy, as strictly as the manager does.
func runnerEgress(t *testing.T, objs []*unstructured.Unstructured) []networkingv1.NetworkPolicyEgressRule {
	t.Helper()
	cm := find(t, objs, "ConfigMap", releaseName)
	egressYAML, _, _ := unstructured.NestedString(cm.Object, "data", "runner-egress.yaml")
	var rules struct {
		Egress []networkingv1.NetworkPolicyEgressRule `json:"egress"`
	}
	if err := yaml.UnmarshalStrict([]byte(egressYAML), &rules); err != nil {
		t.Fatalf("runner-egress.yaml: %v\n%s", err, egressYAML)
	}
	return rules.Egress
}

// assertExceptsMetadata fails unless every metadata address inside block
// is in its except list.
func assertExceptsMetadata(t *testing.T, block *networkingv1.IPBlock) {
	t.Helper()
	cidr := netip.MustParsePrefix(block.CIDR)
	for _, addr := range metadataAddresses {
		if !cidr.Contains(addr) {
			continue
		}
		if !slices.ContainsFunc(block.Except, func(e string) bool { return netip.MustParsePrefix(e).Contains(addr) }) {
			t.Errorf("ipBlock %s %v lets task pods reach the metadata service at %s", block.CIDR, block.Except, addr)
		}
	}
}

// The PostgreSQL DSN holds a password: it reaches the manager as a file
// from its Secret, never in the container's args (the kubelet would
// expand a $(VAR) there, into the process's argv) nor as a plain env
// value, whether the chart makes the Secret or the user brings one.
func TestChart_postgresDSNIsInNoArgvAndNoPlainEnv(t *testing.T) {
	const password = "dsn-password-4e1f"
	for name, postgres := range map[string]map[string]any{
		"the chart's Secret": {"dsn": "postgres://bastion:" + password + "@db:5432/bastion"},
		"an existing Secret": {"existingSecret": "my-dsn", "secretKey": "url"},
	} {
		objs, _ := renderObjects(t, map[string]any{"store": map[string]any{"type": "postgres", "postgres": postgres}})
		deploy := find(t, objs, "Deployment", releaseName)
		pod := &corev1.PodSpec{}
		spec, _, _ := unstructured.NestedMap(deploy.Object, "spec", "template", "spec")
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, pod); err != nil {
			t.Fatal(err)
		}
		c := pod.Containers[0]
		for _, arg := range c.Args {
			if strings.Contains(arg, "postgres") || strings.Contains(arg, password) || strings.Contains(arg, "$(") {
				t.Errorf("%s: the argument %q carries the DSN", name, arg)
			}
		}
		if !slices.Contains(c.Args, "--store-file=/etc/bastion/store/dsn") {
			t.Errorf("%s: args %v do not read the DSN from its file", name, c.Args)
		}
		for _, env := range c.Env {
			if strings.Contains(env.Value, "postgres") || strings.Contains(env.Value, password) {
				t.Errorf("%s: env %s has the DSN as a plain value", name, env.Name)
			}
		}
		wantSecret, wantKey := "bastion-store", "dsn"
		if s, ok := postgres["existingSecret"].(string); ok {
			wantSecret, wantKey = s, postgres["secretKey"].(string)
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "store" && m.MountPath == "/etc/bastion/store" && m.ReadOnly
		})
		fromSecret := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.Name == "store" && v.Secret != nil && v.Secret.SecretName == wantSecret &&
				len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == wantKey && v.Secret.Items[0].Path == "dsn"
		})
		if !mounted || !fromSecret {
			t.Errorf("%s: the DSN file is not the Secret %s's key %s mounted read-only: %+v %+v", name, wantSecret, wantKey, c.VolumeMounts, pod.Volumes)
		}
		if strings.Contains(deploymentYAML(t, deploy), password) {
			t.Errorf("%s: the Deployment holds the DSN's password", name)
		}
	}
}
