// Package v1alpha1 holds the resource model of the payout service: every piece of business state
// is one of these custom resources, and the REST facade only translates the public API into
// operations on them.
//
// +kubebuilder:object:generate=true
// +groupName=payout.stablepay.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind of the service.
	GroupVersion = schema.GroupVersion{Group: "payout.stablepay.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this group to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
