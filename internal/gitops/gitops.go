// Package gitops recognises the objects that a GitOps tool (Flux, Argo CD)
// or another declared manager keeps in step with a source outside Bastion.
// The API makes them read-only (an edit there would be reverted at the
// tool's next sync) and the console says who manages them; both ask
// Of, so the rules live here only (docs/gitops.md).
//
// The marks are the tools' own:
//   - Flux's kustomize-controller labels what it applies with
//     kustomize.toolkit.fluxcd.io/name and /namespace (the Kustomization),
//     its helm-controller with helm.toolkit.fluxcd.io/name and /namespace
//     (the HelmRelease).
//   - Argo CD tracks with the label argocd.argoproj.io/instance (its
//     default) or the annotation argocd.argoproj.io/tracking-id
//     ("<app>:<group>/<kind>:<namespace>/<name>"), whichever the
//     installation's application.resourceTrackingMethod chose.
//   - Anything else says so with app.kubernetes.io/managed-by, the
//     Kubernetes recommended label; Helm sets it to "Helm", with the release
//     in the meta.helm.sh annotations.
//
// Bastion sets app.kubernetes.io/managed-by=bastion on what it creates
// itself (id counters, Jobs, namespaces' RBAC): that is not an outside
// manager and is ignored.
package gitops

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels and annotations Of reads.
const (
	LabelFluxKustomizeName      = "kustomize.toolkit.fluxcd.io/name"
	LabelFluxKustomizeNamespace = "kustomize.toolkit.fluxcd.io/namespace"
	LabelFluxHelmName           = "helm.toolkit.fluxcd.io/name"
	LabelFluxHelmNamespace      = "helm.toolkit.fluxcd.io/namespace"
	LabelArgoInstance           = "argocd.argoproj.io/instance"
	AnnotationArgoTrackingID    = "argocd.argoproj.io/tracking-id"
	LabelManagedBy              = "app.kubernetes.io/managed-by"
	AnnotationHelmRelease       = "meta.helm.sh/release-name"
	AnnotationHelmNamespace     = "meta.helm.sh/release-namespace"

	// Bastion is the managed-by value of Bastion's own objects.
	Bastion = "bastion"
)

// The managers' names as people know them.
const (
	Flux   = "Flux"
	ArgoCD = "Argo CD"
	Helm   = "Helm"
)

// Manager is who keeps an object in step with its source.
type Manager struct {
	// Name is the tool ("Flux", "Argo CD", "Helm") or, for another
	// manager, its app.kubernetes.io/managed-by value as written.
	Name string
	// Source is what the tool applies the object from, as its user names
	// it ("Kustomization flux-system/apps", "Application guestbook");
	// "" when the marks do not say.
	Source string
}

// Of returns who manages obj, or false when nobody outside Bastion does.
// Flux's and Argo CD's own marks come before app.kubernetes.io/managed-by:
// a chart that Flux's helm-controller installs also carries
// managed-by=Helm, and Flux is the one to go to.
func Of(obj metav1.Object) (Manager, bool) {
	labels, annotations := obj.GetLabels(), obj.GetAnnotations()
	if name := labels[LabelFluxKustomizeName]; name != "" {
		return Manager{Flux, "Kustomization " + qualified(labels[LabelFluxKustomizeNamespace], name)}, true
	}
	if name := labels[LabelFluxHelmName]; name != "" {
		return Manager{Flux, "HelmRelease " + qualified(labels[LabelFluxHelmNamespace], name)}, true
	}
	if app := argoApp(annotations[AnnotationArgoTrackingID]); app != "" {
		return Manager{ArgoCD, "Application " + app}, true
	}
	if app := labels[LabelArgoInstance]; app != "" {
		return Manager{ArgoCD, "Application " + app}, true
	}
	by := strings.TrimSpace(labels[LabelManagedBy])
	switch {
	case by == "" || strings.EqualFold(by, Bastion):
		return Manager{}, false
	case strings.EqualFold(by, Helm):
		source := ""
		if release := annotations[AnnotationHelmRelease]; release != "" {
			source = "release " + qualified(annotations[AnnotationHelmNamespace], release)
		}
		return Manager{Helm, source}, true
	}
	return Manager{Name: by}, true
}

// argoApp is the application of a tracking id,
// "<app>:<group>/<kind>:<namespace>/<name>"; "" when id is not one. An app
// in another namespace than Argo CD's is written "<namespace>_<app>".
func argoApp(id string) string {
	app, rest, ok := strings.Cut(id, ":")
	if !ok || app == "" || !strings.Contains(rest, "/") {
		return ""
	}
	return strings.Replace(app, "_", "/", 1)
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// String names the manager with its source: "Flux (Kustomization
// flux-system/apps)".
func (m Manager) String() string {
	if m.Source == "" {
		return m.Name
	}
	return m.Name + " (" + m.Source + ")"
}

// Refusal is the message of a refused edit or delete of an object of the
// noun ("template"): who manages it and where to change it instead.
func (m Manager) Refusal(noun string) string {
	where := "change it where " + m.Name + " keeps it"
	switch m.Name {
	case Flux, ArgoCD:
		where = "change it in its Git repository"
	case Helm:
		where = "change it in its chart or release values"
	}
	return "This " + noun + " is managed by " + m.String() + "; " + where +
		" (an edit here would be reverted at the next sync)."
}
