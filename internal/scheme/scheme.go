// Package scheme is the one runtime.Scheme of the service's programs: the built-in kinds they
// touch (namespaces, events, leases) and the kinds of payout.stablepay.dev.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// New returns a scheme with the built-in kinds and the service's kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := payoutv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
