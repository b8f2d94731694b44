package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/chain/refund"
)

// Refund reasons of the Ready condition and events.
const (
	RefundAcceptedReason  = "Accepted"
	RefundRefusedReason   = "Refused"
	RefundSignedReason    = "Signed"
	RefundBroadcastReason = "Broadcast"
	RefundConfirmedReason = "Confirmed"
	// RefundNoWalletReason: no refund wallet is configured; the refund waits.
	RefundNoWalletReason = "NoRefundWallet"
	// RefundNotSignedReason: the wallet cannot pay now (tokens, gas) or the node failed; retried.
	RefundNotSignedReason = "NotSigned"
	// RefundBroadcastFailedReason: the node did not take the signed transaction; the same bytes
	// are sent again.
	RefundBroadcastFailedReason = "BroadcastFailed"
	// RefundRevertedReason: the transaction reverted at depth (nothing moved); a new one is signed.
	RefundRevertedReason = "Reverted"
)

// RefundReconciler sends refunds on Base (Refund objects, made by `kubectl payout refund`). It
// loads, asks package refund what to do, does it, and persists; the money-moving steps are two
// passes, so that the signed transaction is stored before it is broadcast. It runs one
// reconcile at a time (one worker, leader-only like every controller), which serialises nonce
// assignment: the nonce comes from the chain's pending nonce and every other Refund's recorded
// nonce, both read fresh (APIReader), never from a cache that may not hold the last one yet.
//
// It never writes a Transfer: the transfer controller reads the Refund's Confirmed status and
// sets the transfer refunded.
type RefundReconciler struct {
	// Client reads Transfers from the cache and writes Refund status.
	Client client.Client
	// APIReader reads Refunds from the API server: a stale Refund could be signed twice.
	APIReader client.Reader
	// Wallet is the refund wallet; nil when none is configured (refunds wait, saying so).
	Wallet   refund.Wallet
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// PollInterval between receipt lookups while a transaction is on its way. Default 2s.
	PollInterval time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *RefundReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rf := &payoutv1.Refund{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, rf); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch refund.Next(rf.Status) {
	case refund.ActionAdmit:
		return r.admit(ctx, rf)
	case refund.ActionSign:
		return r.sign(ctx, rf)
	case refund.ActionWatch:
		return r.watch(ctx, rf)
	}
	return ctrl.Result{}, nil
}

// admit checks the transfer and records what is to be sent, or refuses.
func (r *RefundReconciler) admit(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	var t *payoutv1.Transfer
	tr := &payoutv1.Transfer{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: rf.Namespace, Name: rf.Spec.Transfer}, tr); err == nil {
		t = tr
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	from := ""
	if r.Wallet != nil {
		from = r.Wallet.Address()
	}
	st := refund.Admit(rf, t, from)
	if st.State == payoutv1.RefundRefused {
		return ctrl.Result{}, r.write(ctx, rf, st, corev1.EventTypeWarning, RefundRefusedReason)
	}
	return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, st, corev1.EventTypeNormal, RefundAcceptedReason)
}

// sign assigns the nonce, signs, and persists the signed transaction; it broadcasts nothing.
func (r *RefundReconciler) sign(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	if r.Wallet == nil {
		st := rf.Status
		st.Message = "no refund wallet is configured (chain configuration refund.key); the refund waits"
		return ctrl.Result{RequeueAfter: time.Minute}, r.write(ctx, rf, st, corev1.EventTypeWarning, RefundNoWalletReason)
	}
	amount, err := refund.Amount(rf.Status)
	if err != nil {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	nonce, err := r.nextNonce(ctx, rf)
	if err == nil {
		var signed *evm.Signed
		if signed, err = r.Wallet.SignTransfer(ctx, rf.Status.To, amount, nonce); err == nil {
			st := refund.Signed(rf.Status, r.Wallet.Address(), nonce, signed)
			// persisted with an optimistic lock: a refund changed meanwhile is not signed over
			return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, st, corev1.EventTypeNormal, RefundSignedReason)
		}
	}
	if werr := r.write(ctx, rf, refund.SignFailed(rf.Status, err), corev1.EventTypeWarning, RefundNotSignedReason); werr != nil {
		return ctrl.Result{}, werr
	}
	// the error requeues with the controller's backoff; the nonce is taken again next time
	return ctrl.Result{}, err
}

func (r *RefundReconciler) nextNonce(ctx context.Context, rf *payoutv1.Refund) (uint64, error) {
	pending, err := r.Wallet.PendingNonce(ctx)
	if err != nil {
		return 0, err
	}
	all := &payoutv1.RefundList{}
	if err := r.APIReader.List(ctx, all); err != nil {
		return 0, fmt.Errorf("listing refunds for the nonce: %w", err)
	}
	return refund.NextNonce(pending, all.Items, rf), nil
}

// watch follows the persisted transaction: its receipt when mined, else a broadcast of the same
// bytes.
func (r *RefundReconciler) watch(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	if r.Wallet == nil {
		st := rf.Status
		st.Message = "no refund wallet is configured; the signed transaction " + st.TxHash + " waits to be broadcast"
		return ctrl.Result{RequeueAfter: time.Minute}, r.write(ctx, rf, st, corev1.EventTypeWarning, RefundNoWalletReason)
	}
	raw, err := refund.SignedBytes(rf.Status)
	if err != nil {
		// never re-sign over a transaction that may be on its way: an operator must look
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("refund %s: %w", rf.Name, err))
	}
	obs, err := r.Wallet.Receipt(ctx, rf.Status.TxHash)
	if err != nil {
		return ctrl.Result{}, err
	}
	if receipt := refund.ReceiptOf(obs); receipt.Found {
		st := refund.Observed(rf.Status, receipt, r.Clock.Now())
		reason, kind := RefundBroadcastReason, corev1.EventTypeNormal
		switch st.State {
		case payoutv1.RefundConfirmed:
			reason = RefundConfirmedReason
		case payoutv1.RefundPending:
			reason, kind = RefundRevertedReason, corev1.EventTypeWarning
		}
		if err := r.write(ctx, rf, st, kind, reason); err != nil {
			return ctrl.Result{}, err
		}
		if st.State == payoutv1.RefundConfirmed {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	berr := r.Wallet.Broadcast(ctx, raw)
	st := refund.Broadcasted(rf.Status, berr)
	if berr != nil {
		if err := r.write(ctx, rf, st, corev1.EventTypeWarning, RefundBroadcastFailedReason); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, berr
	}
	return ctrl.Result{RequeueAfter: r.poll()}, r.write(ctx, rf, st, corev1.EventTypeNormal, RefundBroadcastReason)
}

func (r *RefundReconciler) poll() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return 2 * time.Second
}

// write persists st (with the Ready condition) when it changed, and emits an event on a change
// of state, or of a warning's message (not on each new confirmation count).
func (r *RefundReconciler) write(ctx context.Context, rf *payoutv1.Refund, st payoutv1.RefundStatus, kind, reason string) error {
	before := rf.DeepCopy()
	changed := st.State != rf.Status.State || (kind == corev1.EventTypeWarning && st.Message != rf.Status.Message)
	rf.Status = st
	setReady(rf, readyStatus(st.State == payoutv1.RefundConfirmed), reason, st.Message)
	if err := patchStatus(ctx, r.Client, before, rf); err != nil {
		return err
	}
	if changed && r.Recorder != nil {
		r.Recorder.Eventf(rf, nil, kind, reason, "Refund", "%s", st.Message)
	}
	return nil
}

// SetupWithManager registers the controller: one worker (nonce assignment is serial), retries
// backing off from 1s to 2m (a wallet short of funds is retried, not hammered), and only new
// Refunds (or spec changes, which CEL forbids) as events: the controller requeues itself.
func (r *RefundReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.Refund{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 1,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 2*time.Minute),
		}).
		Named("refund").Complete(r)
}
