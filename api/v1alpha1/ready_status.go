package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ReadyStatus is what every kind's status holds, as flux's kinds do: the
// Ready condition among its conditions, and the generation of the spec the
// status describes. The controllers set both in one place through it.
// +kubebuilder:object:generate=false
type ReadyStatus interface {
	// StatusConditions points at status.conditions; StatusObservedGeneration
	// at status.observedGeneration.
	StatusConditions() *[]metav1.Condition
	StatusObservedGeneration() *int64
}

func (in *Project) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Project) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *User) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *User) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Template) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Template) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Inventory) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Inventory) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Repository) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Repository) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Environment) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Environment) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *View) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *View) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Integration) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Integration) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *IntegrationAlias) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *IntegrationAlias) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }

func (in *Schedule) StatusConditions() *[]metav1.Condition { return &in.Status.Conditions }
func (in *Schedule) StatusObservedGeneration() *int64      { return &in.Status.ObservedGeneration }
