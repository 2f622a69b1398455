package controllers

import (
	"context"
	"fmt"

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
// manager's stream port, DNS, and what the administrator adds). It is
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
			Egress:      r.RunnerNetworkPolicy.Egress,
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
