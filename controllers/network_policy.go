package controllers

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/controllers/launch"
)

// RunnerNetworkPolicyName names the NetworkPolicy of each project
// namespace that confines its task pods.
const RunnerNetworkPolicyName = "bastion-runners"

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=create;patch

// applyRunnerNetworkPolicy confines the task pods of a project namespace:
// no ingress at all, and egress only where the installation allows (the
// manager's stream port, DNS, and what the administrator adds), never to
// the cloud metadata service (withoutMetadata). It is
// applied server-side on every reconcile, so an edit by hand is undone and
// a changed policy reaches every project. Without a policy (the default)
// nothing is applied.
func (r *ProjectReconciler) applyRunnerNetworkPolicy(ctx context.Context, namespace string) error {
	if r.RunnerNetworkPolicy == nil {
		return nil
	}
	policy := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: RunnerNetworkPolicyName, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "bastion"}},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{launch.LabelRunner: launch.RunnerName}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      withoutMetadata(r.RunnerNetworkPolicy.Egress),
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(policy)
	if err != nil {
		return err
	}
	apply := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: content})
	if err := r.Apply(ctx, apply, client.FieldOwner("bastion-manager"), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the runners' NetworkPolicy in %s: %w", namespace, err)
	}
	return nil
}

// metadataAddresses are the clouds' instance metadata services, which hand
// out the node's credentials to whoever asks: 169.254.169.254 (AWS, GCP,
// Azure, OpenStack and others) and AWS's IPv6 fd00:ec2::254.
var metadataAddresses = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// withoutMetadata narrows egress rules so that no task pod reaches a
// metadata address, whatever the administrator's rules say: each ipBlock
// that contains one gets it in its except list, a rule to every
// destination (no `to`) becomes one to every address but those, and a
// peer that is a metadata address and nothing else is dropped (a rule
// left with no peer at all is dropped with it: an empty `to` would allow
// everything). Pod and namespace selectors never select those addresses.
func withoutMetadata(rules []networkingv1.NetworkPolicyEgressRule) []networkingv1.NetworkPolicyEgressRule {
	out := make([]networkingv1.NetworkPolicyEgressRule, 0, len(rules))
	for _, rule := range rules {
		rule := *rule.DeepCopy()
		if len(rule.To) == 0 {
			rule.To = everywhereButMetadata()
			out = append(out, rule)
			continue
		}
		to := rule.To[:0]
		for _, peer := range rule.To {
			if peer.IPBlock != nil && !exceptMetadata(peer.IPBlock) {
				continue
			}
			to = append(to, peer)
		}
		if len(to) > 0 {
			rule.To = to
			out = append(out, rule)
		}
	}
	return out
}

// everywhereButMetadata is every IPv4 and IPv6 address but the metadata
// services'.
func everywhereButMetadata() []networkingv1.NetworkPolicyPeer {
	world := []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0"}},
	}
	for _, peer := range world {
		exceptMetadata(peer.IPBlock)
	}
	return world
}

// exceptMetadata adds each metadata address inside block to its except
// list. It reports false when the block is no more than a metadata
// address, which no except can take out. A CIDR that does not parse is
// left for the apiserver to refuse with its own message.
func exceptMetadata(block *networkingv1.IPBlock) bool {
	cidr, err := netip.ParsePrefix(block.CIDR)
	if err != nil {
		return true
	}
	cidr = cidr.Masked()
	for _, meta := range metadataAddresses {
		if !cidr.Contains(meta.Addr()) {
			continue
		}
		if cidr.Bits() >= meta.Bits() {
			return false
		}
		if !slices.ContainsFunc(block.Except, func(e string) bool {
			p, err := netip.ParsePrefix(e)
			return err == nil && p.Contains(meta.Addr())
		}) {
			block.Except = append(block.Except, meta.String())
		}
	}
	return true
}
