// Package tenancy maps accounts to their namespaces. Every business object of an account lives
// in the account's namespace; the namespace is owned by the PayoutAccount, so it is the
// tenancy boundary for RBAC, quotas and deletion.
package tenancy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// AccountLabel marks an account's namespace with the account's name.
const AccountLabel = payoutv1.AccountLabel

// Namespace is the namespace object of acct, owned by it.
func Namespace(acct *payoutv1.PayoutAccount) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   payoutv1.AccountNamespace(acct.Name),
		Labels: map[string]string{AccountLabel: acct.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         payoutv1.GroupVersion.String(),
			Kind:               "PayoutAccount",
			Name:               acct.Name,
			UID:                acct.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}},
	}}
}

// EnsureNamespace creates the namespace of acct when it is missing. Both the account controller
// and whoever creates an account call it, so an account is usable as soon as it is stored.
func EnsureNamespace(ctx context.Context, c client.Client, acct *payoutv1.PayoutAccount) error {
	return client.IgnoreAlreadyExists(c.Create(ctx, Namespace(acct)))
}
