package controllers_test

import (
	"context"
	"flag"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/controllers/launch"
)

// The manager's --task-* resource flags reach the runner container of the
// Job the apiserver stores; a flag left out keeps its default.
func TestJobLauncher_theJobHasTheResourcesOfTheFlags(t *testing.T) {
	p := newTaskProject(t, "tasks-resources", 0)
	p.task("sized", "deploy-site", nil)
	p.job("sized") // the suite's own launcher ran it; reuse its Task
	task := p.get("sized")

	opts := launch.DefaultJobOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	opts.RegisterResourceFlags(fs)
	p.g.Expect(fs.Parse([]string{"--task-cpu-request=300m", "--task-memory-request=512Mi", "--task-memory-limit=3Gi"})).To(Succeed())
	p.g.Expect(opts.CheckResources()).To(Succeed())
	launcher := &launch.JobLauncher{Client: k8sClient, Options: opts}
	p.g.Expect(launcher.Start(context.Background(), launch.Run{Task: task, Name: "sized-by-flags", InputSecret: "sized-input"})).To(Succeed())

	job := &batchv1.Job{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "sized-by-flags"}, job)).To(Succeed())
	got := job.Spec.Template.Spec.Containers[0].Resources
	for name, want := range map[string]struct{ got, want resource.Quantity }{
		"cpu request":    {got.Requests[corev1.ResourceCPU], resource.MustParse("300m")},
		"memory request": {got.Requests[corev1.ResourceMemory], resource.MustParse("512Mi")},
		"cpu limit":      {got.Limits[corev1.ResourceCPU], resource.MustParse("2")}, // the default
		"memory limit":   {got.Limits[corev1.ResourceMemory], resource.MustParse("3Gi")},
	} {
		if want.got.Cmp(want.want) != 0 {
			t.Errorf("%s %s, want %s", name, want.got.String(), want.want.String())
		}
	}
}

// suiteRunnerEgress is an administrator's egress for task pods that, as
// written, would reach the cloud metadata service: the world, a port to
// anywhere, and the metadata address itself.
func suiteRunnerEgress() *networkingv1.NetworkPolicySpec {
	tcp := corev1.ProtocolTCP
	port := func(n int) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptrTo(intstr.FromInt(n))}}
	}
	manager := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "bastion-system"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/component": "manager"}},
	}
	return &networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{manager}, Ports: port(3000)},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8"}}}}},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "::/0"}}}},
		{Ports: port(443)},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "169.254.0.0/16", Except: []string{"169.254.169.0/24"}}}}},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "169.254.169.254/32"}}, manager}, Ports: port(22)},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "169.254.169.254/32"}}}, Ports: port(80)},
	}}
}

func ptrTo[T any](v T) *T { return &v }

// Each project namespace gets the runners' NetworkPolicy with the metadata
// addresses taken out of every rule that would reach them: except blocks
// on the administrator's ipBlocks (none added where one already covers
// the address), a rule to anywhere narrowed to every address but those, a
// metadata address dropped from a rule's peers, and a rule to it alone
// dropped. The rules to the manager's pods stay as they were.
func TestProjectReconciler_runnersNetworkPolicyNeverReachesTheMetadataService(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(k8sClient.Create(ctx, newProject("netpol"))).To(Succeed())
	ns := bastionv1.ProjectNamespace("netpol")
	policy := &networkingv1.NetworkPolicy{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: controllers.RunnerNetworkPolicyName}, policy)
	}, timeout, interval).Should(Succeed())

	want := suiteRunnerEgress().Egress[:6]
	want[1].To[0].IPBlock.Except = []string{"10.0.0.0/8", "169.254.169.254/32"}
	want[2].To[0].IPBlock.Except = []string{"fd00:ec2::254/128"}
	want[3].To = []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"169.254.169.254/32"}}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fd00:ec2::254/128"}}},
	}
	want[5].To = want[5].To[1:]
	g.Expect(policy.Spec.Egress).To(Equal(want))
	g.Expect(policy.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))
	g.Expect(policy.Spec.Ingress).To(BeEmpty(), "no ingress to task pods")
}
