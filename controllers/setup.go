package controllers

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the reconcilers.
type Options struct {
	// ManagerNamespace is the manager's own namespace (global id counters,
	// user password Secrets).
	ManagerNamespace string
}

// Setup registers every reconciler and cache index with the manager. The
// manager command, `bastion dev` and the envtest suites all call it, so they
// run the same set.
func Setup(mgr ctrl.Manager, opts Options) error {
	if err := (&ProjectReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return nil
}
