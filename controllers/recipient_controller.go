package controllers

import (
	"context"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Recipient reasons of the Ready condition.
const (
	RecipientActiveReason      = "Active"
	RecipientDeactivatedReason = "Deactivated"
	RecipientReplacedReason    = "Replaced"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients/status,verbs=get;update;patch

// SetupRecipientController derives status.active from the recipient's deactivation.
func SetupRecipientController(mgr ctrl.Manager) error {
	r := &statusReconciler[payoutv1.Recipient, *payoutv1.Recipient]{Client: mgr.GetClient(), observe: observeRecipient}
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Recipient{}).Named("recipient").Complete(r)
}

// observeRecipient derives status.active from the deactivation.
func observeRecipient(_ context.Context, rc *payoutv1.Recipient) (readiness, error) {
	rc.Status.Active = !rc.Spec.Deactivated
	switch {
	case rc.Spec.ReplacedBy != nil:
		return readiness{false, RecipientReplacedReason, "an update replaced it with recipient " + strconv.FormatInt(*rc.Spec.ReplacedBy, 10)}, nil
	case rc.Spec.Deactivated:
		return readiness{false, RecipientDeactivatedReason, "the recipient was deleted; it takes no new transfers"}, nil
	}
	return readiness{true, RecipientActiveReason, "the recipient can take transfers"}, nil
}
