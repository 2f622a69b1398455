package packaging

import (
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeBuild is `kustomize build config/default`.
func kustomizeBuild(t *testing.T) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := resources.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestKustomize_configDefaultIsAcceptedByTheAPIServer(t *testing.T) {
	objs := decodeAll(t, "kustomize build config/default", kustomizeBuild(t))
	got := kinds(objs)
	for kind, n := range map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 11, "ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 2,
		"Role": 1, "RoleBinding": 2, "Deployment": 1, "Service": 2, "PersistentVolumeClaim": 1,
		"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
	} {
		if got[kind] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", got[kind], kind, n, got)
		}
	}
	for _, o := range objs {
		clusterScoped := map[string]bool{"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true,
			"ClusterRoleBinding": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
		if !clusterScoped[o.GetKind()] && o.GetNamespace() != "bastion-system" {
			t.Errorf("%s %s is in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	deploy := find(t, objs, "Deployment", "bastion-manager")
	assertRestrictedPod(t, deploy)
	args := containerArgs(t, deploy)
	if !slices.Contains(args, "--store=sqlite:///var/lib/bastion/bastion.db") {
		t.Errorf("args %v", args)
	}
	assertFlagsExist(t, args)

	ensureNamespace(t, "bastion-system")
	dryRunApply(t, objs)
}
