package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
)

// APIKey reasons of the Ready condition.
const (
	APIKeyActiveReason         = "Active"
	APIKeyRevokedReason        = "Revoked"
	APIKeyAccountMissingReason = "AccountMissing"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys/status,verbs=get;update;patch

// apiKeyObserver records when a key was revoked and whether it can authenticate.
func apiKeyObserver(c client.Reader, clk clock.PassiveClock) func(context.Context, *payoutv1.APIKey) (readiness, error) {
	return func(ctx context.Context, key *payoutv1.APIKey) (readiness, error) {
		if key.Spec.Revoked {
			if key.Status.RevokedAt == nil {
				now := metav1.NewTime(clk.Now())
				key.Status.RevokedAt = &now
			}
			return readiness{false, APIKeyRevokedReason, "the key was revoked; it never authenticates again"}, nil
		}
		err := c.Get(ctx, client.ObjectKey{Name: key.Spec.Account}, &payoutv1.PayoutAccount{})
		if apierrors.IsNotFound(err) {
			return readiness{false, APIKeyAccountMissingReason, "account " + key.Spec.Account + " does not exist"}, nil
		}
		if err != nil {
			return readiness{}, err
		}
		return readiness{true, APIKeyActiveReason, "the key authenticates as account " + key.Spec.Account}, nil
	}
}

// SetupAPIKeyController reports on each key whether it can authenticate. The facade decides
// from the spec and the account, not from this condition; it is for operators.
func SetupAPIKeyController(mgr ctrl.Manager, clk clock.PassiveClock) error {
	c := mgr.GetClient()
	r := &statusReconciler[payoutv1.APIKey, *payoutv1.APIKey]{Client: c, observe: apiKeyObserver(c, clk)}
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.APIKey{}).
		Watches(&payoutv1.PayoutAccount{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			keys := &payoutv1.APIKeyList{}
			if err := c.List(ctx, keys, client.MatchingFields{index.APIKeyAccount: o.GetName()}); err != nil {
				return nil
			}
			reqs := make([]reconcile.Request, 0, len(keys.Items))
			for _, k := range keys.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&k)})
			}
			return reqs
		})).
		Named("apikey").
		Complete(r)
}
