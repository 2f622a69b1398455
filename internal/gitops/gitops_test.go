package gitops

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOf_recognisesEachManagersMarks(t *testing.T) {
	cases := []struct {
		name                string
		labels, annotations map[string]string
		want                string // Manager.String(); "" for not managed
	}{
		{"nothing", nil, nil, ""},
		{"flux kustomization", map[string]string{LabelFluxKustomizeName: "apps", LabelFluxKustomizeNamespace: "flux-system"}, nil, "Flux (Kustomization flux-system/apps)"},
		{"flux helm release, also labelled by Helm", map[string]string{LabelFluxHelmName: "bastion-objects", LabelFluxHelmNamespace: "ops", LabelManagedBy: "Helm"}, nil, "Flux (HelmRelease ops/bastion-objects)"},
		{"argo cd label", map[string]string{LabelArgoInstance: "guestbook"}, nil, "Argo CD (Application guestbook)"},
		{"argo cd tracking id", nil, map[string]string{AnnotationArgoTrackingID: "guestbook:automation.bastion.dev/Template:bastion-demo/deploy"}, "Argo CD (Application guestbook)"},
		{"argo cd app in another namespace", nil, map[string]string{AnnotationArgoTrackingID: "team-a_guestbook:/Secret:ns/key"}, "Argo CD (Application team-a/guestbook)"},
		{"not a tracking id", nil, map[string]string{AnnotationArgoTrackingID: "garbage"}, ""},
		{"helm", map[string]string{LabelManagedBy: "Helm"}, map[string]string{AnnotationHelmRelease: "ops", AnnotationHelmNamespace: "bastion"}, "Helm (release bastion/ops)"},
		{"another manager", map[string]string{LabelManagedBy: "pulumi"}, nil, "pulumi"},
		{"bastion's own", map[string]string{LabelManagedBy: "bastion"}, nil, ""},
		{"bastion's own, any case", map[string]string{LabelManagedBy: "Bastion"}, nil, ""},
	}
	for _, c := range cases {
		m, ok := Of(&metav1.ObjectMeta{Labels: c.labels, Annotations: c.annotations})
		if got := m.String(); ok != (c.want != "") || got != c.want {
			t.Errorf("%s: Of = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
}

func TestRefusal_saysWhereToChangeIt(t *testing.T) {
	cases := map[Manager]string{
		{Flux, "Kustomization flux-system/apps"}: "This template is managed by Flux (Kustomization flux-system/apps); change it in its Git repository (an edit here would be reverted at the next sync).",
		{Helm, "release ops"}:                    "This template is managed by Helm (release ops); change it in its chart or release values (an edit here would be reverted at the next sync).",
		{Name: "pulumi"}:                         "This template is managed by pulumi; change it where pulumi keeps it (an edit here would be reverted at the next sync).",
	}
	for m, want := range cases {
		if got := m.Refusal("template"); got != want {
			t.Errorf("%v: %q, want %q", m, got, want)
		}
	}
}
