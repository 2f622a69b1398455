package v1alpha1

import corev1 "k8s.io/api/core/v1"

// TaskPodSettings say where a task's pod runs and with what: a Project
// sets them for all its templates, a Template may override them. They
// are stored as written; the task controller merges them (a template's
// field that is set replaces the project's, resources entry by entry over
// the manager's defaults), refuses a runner image or a service account
// the cluster admin did not allow, and the Job launcher puts the result
// in the Job's pod spec (docs/features.md, "Where a task runs").
type TaskPodSettings struct {
	// NodeSelector restricts the pod to nodes with these labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pod run on nodes with matching taints.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Resources are the runner container's requests and limits; each one
	// set replaces the manager's default for that resource.
	// +optional
	Resources *TaskPodResources `json:"resources,omitempty"`

	// RunnerImage is the name of a runner image from the list the cluster
	// admin set (--runner-images, the chart's tasks.runnerImages); empty
	// is the manager's image for the template's app.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	RunnerImage string `json:"runnerImage,omitempty"`

	// ServiceAccountName is the pod's ServiceAccount in the project's
	// namespace, one of the names the cluster admin allowed
	// (--task-service-accounts, the chart's tasks.serviceAccounts; none
	// by default). Empty: the runner gets no Kubernetes credentials.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// TaskPodResources are a runner container's requests and limits.
type TaskPodResources struct {
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Limits corev1.ResourceList `json:"limits,omitempty"`
}
