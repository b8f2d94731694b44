package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Transfer reasons of the status history and events.
const (
	TransferCreatedReason       = "Created"
	TransferHashConfirmedReason = "HashConfirmed"
)

// TransferReconciler records the public status of transfers. This first cut opens a transfer
// (ready_to_process for v1, awaiting_deposit for v2) and records a v2 confirmation
// (pending_match); deposit detection, conversion and payout drive the later statuses.
type TransferReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers/status,verbs=get;update;patch

func (r *TransferReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &payoutv1.Transfer{}
	if err := r.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	next, reason, message := openingTransition(t)
	if next == "" {
		return ctrl.Result{}, nil
	}
	before := t.DeepCopy()
	t.Status.Phase = next
	now := metav1.NewTime(r.Clock.Now())
	t.Status.UpdatedAt = &now
	t.Status.History = append(t.Status.History, payoutv1.StatusChange{Status: next, At: now, Reason: reason, Message: message})
	setReady(t, readyStatus(next == payoutv1.PhaseCompleted), reason, message)
	if err := patchStatus(ctx, r.Client, before, t); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, reason, "Transition", "%s: %s", next, message)
	return ctrl.Result{}, nil
}

// openingTransition is the status a transfer takes before any deposit is seen: nothing when it
// already has one that needs no change.
func openingTransition(t *payoutv1.Transfer) (payoutv1.TransferPhase, string, string) {
	switch {
	case t.Status.Phase == "" && t.Spec.Method == payoutv1.TransferV1:
		return payoutv1.PhaseReadyToProcess, TransferCreatedReason, "waiting for the deposit at " + t.Spec.DepositAddress
	case t.Spec.Method == payoutv1.TransferV2 && t.Spec.TxHash != "" &&
		(t.Status.Phase == "" || t.Status.Phase == payoutv1.PhaseAwaitingDeposit):
		return payoutv1.PhasePendingMatch, TransferHashConfirmedReason, "deposit transaction " + t.Spec.TxHash + " recorded; matching it"
	case t.Status.Phase == "" && t.Spec.Method == payoutv1.TransferV2:
		return payoutv1.PhaseAwaitingDeposit, TransferCreatedReason, "waiting for the deposit and its transaction hash"
	}
	return "", "", ""
}

// SetupWithManager registers the controller.
func (r *TransferReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Transfer{}).Named("transfer").Complete(r)
}
