package cmd

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// newScheme knows the core Kubernetes types and Bastion's.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(bastionv1.AddToScheme(s))
	return s
}
