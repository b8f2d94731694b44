package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/refund"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// How often a held refund's destination is screened again, and a destination the service
// could not screen is asked about again.
const (
	heldRecheck     = time.Hour
	unscreenedRetry = 30 * time.Second
	pausedRetry     = 30 * time.Second
)

// RefundReconciler sends refunds (Refund objects, made by `kubectl payout refund`): a failed
// transfer's deposit in USDC on Base, a stray deposit on its own network where the refund wallet
// can pay there. It loads, asks package refund what to do, does it, and persists; the
// money-moving steps are two passes, so that the signed transaction is stored before it is
// broadcast. Before signing it screens the destination (fail closed: a blocked address is held,
// an unanswered screening waits). It runs one reconcile at a time (one worker, leader-only like
// every controller), which serialises nonce assignment: the nonce comes from the chain's pending
// nonce and every other Refund's recorded nonce on that network, both read fresh (APIReader),
// never from a cache that may not hold the last one yet.
//
// What a Refund may send is what the transfer owes under its name (transfer.OwedOf), computed
// from the transfer and its Deposit objects read past the cache. A v2 transfer that released its
// hash owes its observed deposit only once it holds the hash again: the controller claims it
// (the API server's atomic create) and refuses when another transfer holds it.
//
// It never writes a Transfer: the transfer controller reads the Refund's Confirmed status and
// sets the transfer refunded (or lists the stray deposit's refund).
//
// Every Refund carries payoutv1.MoneyFinalizer (admin.RequestRefund creates it so; this
// controller adds it to one made otherwise, but to a refused one), and this controller is the one
// that removes it, only from a Refund being deleted, and only when refund.Release allows: nothing
// was signed, or it was refused, or its transaction is confirmed and its transfer records it. A
// deleted Signed or Broadcast refund goes on to Confirmed meanwhile, so that a new request for
// the same money meets the existing object (AlreadyExists) instead of signing a second
// transaction. The finalizer costs no write in a refund's life: it is in the create, and removed
// only on a deletion.
//
// A Refund in OrphanNamespace refunds a deposit recorded there after its transfer's account was
// deleted (transfer.OrphanOwed): its transfer need not exist.
type RefundReconciler struct {
	// Client reads Transfers from the cache and writes Refund status.
	Client client.Client
	// APIReader reads Refunds and Deposits from the API server: a stale Refund could be signed
	// twice, a stale list of deposits refund the wrong amount.
	APIReader client.Reader
	// Wallets are the refund wallets; nil when none is configured (refunds wait, saying so).
	Wallets refund.Wallets
	// Screener screens every destination before anything is signed to it.
	Screener walletscreen.Screener
	// Provider is asked by reference before a transfer's deposit is refunded: a payout it holds
	// for the transfer means the money went out (a status restored from before it), and nothing
	// is refunded.
	Provider fiat.Provider
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// PollInterval between receipt lookups while a transaction is on its way. Default 2s.
	PollInterval time.Duration
	// Gate says whether money may move: while it says no, nothing is signed (a refund the chain
	// shows sent is still adopted). nil: always.
	Gate Gate
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *RefundReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rf := &payoutv1.Refund{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, rf); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch {
	case !rf.DeletionTimestamp.IsZero():
		if res, done, err := r.finalize(ctx, rf); done || err != nil {
			return res, err
		}
		// Signed or Broadcast: its transaction may be on its way, and goes on to Confirmed
	case !controllerutil.ContainsFinalizer(rf, payoutv1.MoneyFinalizer) && rf.Status.State != payoutv1.RefundRefused:
		// a Refund made without it (by hand, or before it existed), under the read version
		before := rf.DeepCopy()
		controllerutil.AddFinalizer(rf, payoutv1.MoneyFinalizer)
		if err := r.Client.Patch(ctx, rf, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
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

// finalize decides on a Refund being deleted (refund.Release): it removes the finalizer when the
// refund may go; it reports done=false when the refund must go on (its transaction may be on
// its way), and waits for a confirmed refund's transfer to record it. The first pass after the
// deletion says why it stays, in status.message and an event.
func (r *RefundReconciler) finalize(ctx context.Context, rf *payoutv1.Refund) (res ctrl.Result, done bool, err error) {
	if !controllerutil.ContainsFinalizer(rf, payoutv1.MoneyFinalizer) {
		return ctrl.Result{}, true, nil
	}
	var t *payoutv1.Transfer
	if rf.Status.State == payoutv1.RefundConfirmed && rf.Namespace != payoutv1.OrphanNamespace {
		// read past the cache: the transfer's record of the refund must be seen, not assumed
		tr := &payoutv1.Transfer{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: rf.Namespace, Name: rf.Spec.Transfer}, tr); {
		case err == nil:
			t = tr
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, true, err
		}
	}
	ok, why := refund.Release(rf, t)
	if ok {
		before := rf.DeepCopy()
		controllerutil.RemoveFinalizer(rf, payoutv1.MoneyFinalizer)
		if err := r.Client.Patch(ctx, rf, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, true, client.IgnoreNotFound(err)
		}
		if r.Recorder != nil {
			r.Recorder.Eventf(rf, nil, corev1.EventTypeNormal, refund.ReasonReleased, "Delete", "the refund is deleted: %s", why)
		}
		return ctrl.Result{}, true, nil
	}
	if rf.Status.ObservedGeneration != rf.Generation {
		// the deletion bumped the generation: the first pass since says why the refund stays
		if err := r.write(ctx, rf, refund.DeletionWaits(rf.Status, why), corev1.EventTypeWarning, refund.ReasonDeletionWaits); err != nil {
			return ctrl.Result{}, true, err
		}
	}
	switch {
	case rf.Status.State != payoutv1.RefundConfirmed:
		return ctrl.Result{}, false, nil
	case rf.Namespace == payoutv1.OrphanNamespace:
		return ctrl.Result{}, true, nil // nothing else will record it
	}
	return ctrl.Result{RequeueAfter: r.poll()}, true, nil
}

// admit checks what the transfer owes under the refund's name and records what is to be sent,
// or refuses.
func (r *RefundReconciler) admit(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	if rf.Namespace == payoutv1.OrphanNamespace {
		// a deposit recorded after its account was deleted: owed whole, whatever the transfer
		deps := &payoutv1.DepositList{}
		if err := r.APIReader.List(ctx, deps, client.InNamespace(rf.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: rf.Spec.Transfer}); err != nil {
			return ctrl.Result{}, err
		}
		owed, off, err := r.unwritten(ctx, rf, transfer.OrphanOwed(rf.Spec.Transfer, deps.Items))
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.admitted(ctx, rf, refund.Admit(rf, nil, owed, r.wallets(), off))
	}
	var t *payoutv1.Transfer
	tr := &payoutv1.Transfer{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: rf.Namespace, Name: rf.Spec.Transfer}, tr); err == nil {
		t = tr
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	var owed []transfer.Owed
	var why error
	if t != nil {
		deps := &payoutv1.DepositList{}
		if err := r.APIReader.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}); err != nil {
			return ctrl.Result{}, err
		}
		reclaimed, err := r.reclaim(ctx, rf, t)
		if err != nil {
			return ctrl.Result{}, err
		}
		owed, why = transfer.OwedOf(t, deps.Items, reclaimed), refund.Refundable(t)
		if transfer.Released(t) && !reclaimed && rf.Spec.Deposit == nil {
			why = fmt.Errorf("transfer %s released its transaction hash %s, and another transfer holds it now: that transaction pays the other transfer", t.Name, t.Spec.TxHash)
		}
		if rf.Spec.Deposit == nil {
			paid, err := r.paidOut(ctx, t)
			if err != nil {
				return ctrl.Result{}, err
			}
			if paid != "" {
				owed, why = nil, errors.New(paid)
			}
		}
	}
	owed, off, err := r.unwritten(ctx, rf, owed)
	if err != nil {
		return ctrl.Result{}, err
	}
	if off != nil {
		why = off
	}
	return r.admitted(ctx, rf, refund.Admit(rf, t, owed, r.wallets(), why))
}

// unwritten is owed without rf's stray deposit when an operator wrote it off (refund.Unwritten),
// read past the cache: a write-off stored before this admission is seen, so that a refund and a
// write-off of the same deposit are never both admitted. off says why it was dropped.
func (r *RefundReconciler) unwritten(ctx context.Context, rf *payoutv1.Refund, owed []transfer.Owed) (kept []transfer.Owed, off error, err error) {
	if rf.Spec.Deposit == nil {
		return owed, nil, nil
	}
	ref := rf.Spec.Deposit
	name := payoutv1.DepositName(ref.Network, ref.TxHash, ref.LogIndex)
	sw := &payoutv1.Sweep{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: rf.Namespace, Name: name}, sw); apierrors.IsNotFound(err) {
		return owed, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	kept, off = refund.Unwritten(owed, map[string]*payoutv1.Sweep{name: sw})
	return kept, off, nil
}

// admitted records the admission's status st.
func (r *RefundReconciler) admitted(ctx context.Context, rf *payoutv1.Refund, st payoutv1.RefundStatus) (ctrl.Result, error) {
	if st.State == payoutv1.RefundRefused {
		return ctrl.Result{}, r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonRefused)
	}
	return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, st, corev1.EventTypeNormal, refund.ReasonAccepted)
}

// paidOut asks the provider by reference whether it holds a payout of t that was not rejected,
// and says so ("" when not): the provider is the ledger of record of payouts, and a transfer whose
// money went out is never refunded. No answer is an error: nothing is refunded without one.
func (r *RefundReconciler) paidOut(ctx context.Context, t *payoutv1.Transfer) (string, error) {
	if r.Provider == nil {
		return "", errors.New("no payout provider to ask whether the transfer was paid")
	}
	p, err := r.Provider.Find(ctx, t.Name, t.CreationTimestamp.Time)
	if err != nil {
		return "", fmt.Errorf("asking the provider about payout %s before refunding it: %w", t.Name, err)
	}
	if p == nil || p.State == fiat.StateRejected {
		return "", nil
	}
	return fmt.Sprintf("the provider holds payout %s (%s) of transfer %s: its money went out, so its deposit is not refunded", p.ProviderID, p.State, t.Name), nil
}

// reclaim takes back the claim on the hash of a v2 transfer that released it, for the refund of
// its deposit: it reports whether the transfer holds the hash (so that no other transfer can be
// paid by that transaction while it is refunded). Any other refund needs no claim.
func (r *RefundReconciler) reclaim(ctx context.Context, rf *payoutv1.Refund, t *payoutv1.Transfer) (bool, error) {
	if rf.Spec.Deposit != nil || !transfer.Released(t) {
		return false, nil
	}
	holder := payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
	held, err := takeClaim(ctx, r.Client, r.APIReader, payoutv1.NewClaim(payoutv1.ClaimTxHash, t.Spec.TxHash, holder))
	return err == nil && held == holder, client.IgnoreNotFound(err)
}

func (r *RefundReconciler) wallets() refund.Wallets {
	if r.Wallets == nil {
		return refund.Single(nil)
	}
	return r.Wallets
}

// sign screens the destination, assigns the nonce, signs, and persists the signed transaction;
// it broadcasts nothing.
func (r *RefundReconciler) sign(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	w, ok := r.wallets().For(networkOf(rf.Status), tokenOf(rf.Status))
	if !ok {
		st := rf.Status
		st.Message = fmt.Sprintf("no refund wallet can send %s on %s (chain configuration refund.key); the refund waits", tokenOf(rf.Status), networkOf(rf.Status))
		return ctrl.Result{RequeueAfter: time.Minute}, r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonNoWallet)
	}
	all := &payoutv1.RefundList{}
	if err := r.APIReader.List(ctx, all); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing refunds: %w", err)
	}
	if st, adopted, err := r.adopt(ctx, rf, w, all.Items); err != nil || adopted {
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonAdopted)
	}
	if moves, why := moneyMoves(ctx, r.Gate); !moves {
		st := rf.Status
		st.Message = why
		return ctrl.Result{RequeueAfter: pausedRetry}, r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonPaused)
	}
	if res, done, err := r.screen(ctx, rf); done || err != nil {
		return res, err
	}
	if res, done, err := r.checkReverted(ctx, rf, w); done || err != nil {
		return res, err
	}
	amount, err := refund.Amount(rf.Status)
	if err != nil {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	nonce, err := r.nextNonce(ctx, rf, w, all.Items)
	if err == nil {
		var signed *evm.Signed
		if signed, err = w.SignTransfer(ctx, rf.Status.To, amount, nonce); err == nil {
			st := refund.Signed(rf.Status, w.Address(), nonce, signed)
			// persisted with an optimistic lock: a refund changed meanwhile is not signed over
			return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, st, corev1.EventTypeNormal, refund.ReasonSigned)
		}
	}
	if werr := r.write(ctx, rf, refund.SignFailed(rf.Status, err), corev1.EventTypeWarning, refund.ReasonNotSigned); werr != nil {
		return ctrl.Result{}, werr
	}
	// the error requeues with the controller's backoff; the nonce is taken again next time
	return ctrl.Result{}, err
}

// screen screens the refund's destination before anything is signed to it. done reports that
// the refund must wait (held, or the screening unanswered), with the result to return.
func (r *RefundReconciler) screen(ctx context.Context, rf *payoutv1.Refund) (res ctrl.Result, done bool, err error) {
	if r.Screener == nil {
		err := fmt.Errorf("no wallet-screening service is configured")
		return ctrl.Result{RequeueAfter: unscreenedRetry}, true, r.write(ctx, rf, refund.Unscreened(rf.Status, err), corev1.EventTypeWarning, refund.ReasonUnscreened)
	}
	blocked, serr := r.Screener.Blocked(ctx, rf.Status.To)
	switch {
	case serr != nil:
		return ctrl.Result{RequeueAfter: unscreenedRetry}, true, r.write(ctx, rf, refund.Unscreened(rf.Status, serr), corev1.EventTypeWarning, refund.ReasonUnscreened)
	case blocked:
		return ctrl.Result{RequeueAfter: heldRecheck}, true, r.write(ctx, rf, refund.Held(rf.Status, "the risk service blocks it"), corev1.EventTypeWarning, refund.ReasonHeld)
	case rf.Status.State == payoutv1.RefundHeld:
		// cleared now: Pending again, and signed on the next pass
		return ctrl.Result{RequeueAfter: time.Millisecond}, true, r.write(ctx, rf, refund.Cleared(rf.Status), corev1.EventTypeNormal, refund.ReasonAccepted)
	}
	return ctrl.Result{}, false, nil
}

// checkReverted asks the chain about each transaction the refund lists as reverted before
// another is signed: the list is status, which a hand edit could write to send the money again.
// done reports that nothing may be signed, with the result to return.
func (r *RefundReconciler) checkReverted(ctx context.Context, rf *payoutv1.Refund, w refund.Wallet) (res ctrl.Result, done bool, err error) {
	for _, h := range rf.Status.RevertedTxs {
		obs, err := w.Receipt(ctx, h)
		if err != nil {
			return ctrl.Result{}, true, err
		}
		if why := refund.UnprovenRevert(h, refund.ReceiptOf(obs)); why != "" {
			return ctrl.Result{RequeueAfter: time.Minute}, true, r.write(ctx, rf, refund.RevertUnproven(rf.Status, why), corev1.EventTypeWarning, refund.ReasonRevertUnproven)
		}
	}
	return ctrl.Result{}, false, nil
}

func networkOf(st payoutv1.RefundStatus) payoutv1.Network {
	if st.Network == "" {
		return refund.BaseNetwork
	}
	return st.Network
}

func tokenOf(st payoutv1.RefundStatus) payoutv1.Token {
	if st.Token == "" {
		return refund.BaseToken
	}
	return st.Token
}

func (r *RefundReconciler) nextNonce(ctx context.Context, rf *payoutv1.Refund, w refund.Wallet, all []payoutv1.Refund) (uint64, error) {
	pending, err := w.PendingNonce(ctx)
	if err != nil {
		return 0, err
	}
	return refund.NextNonce(pending, all, rf, w.Network(), w.Address()), nil
}

// adopt reads the chain for a transfer of the refund's amount from the refund wallet to its
// destination since the refund was requested, which no other refund records: the chain, not the
// Refund object a restore may have taken back, says whether the money went already.
func (r *RefundReconciler) adopt(ctx context.Context, rf *payoutv1.Refund, w refund.Wallet, all []payoutv1.Refund) (payoutv1.RefundStatus, bool, error) {
	// a minute of slack: the request's time is the API server's clock, the block's the chain's
	sent, err := w.SentTo(ctx, rf.Status.To, rf.CreationTimestamp.Add(-time.Minute))
	if err != nil {
		return rf.Status, false, fmt.Errorf("reading the refund wallet's transfers to %s: %w", rf.Status.To, err)
	}
	taken := map[string]bool{}
	for i := range all {
		if o := &all[i]; o.Status.TxHash != "" && (o.Namespace != rf.Namespace || o.Name != rf.Name) {
			taken[strings.ToLower(o.Status.TxHash)] = true
		}
	}
	st, ok := refund.Adopt(rf.Status, sent, taken)
	return st, ok, nil
}

// watch follows the persisted transaction: its receipt when mined, else a broadcast of the same
// bytes.
func (r *RefundReconciler) watch(ctx context.Context, rf *payoutv1.Refund) (ctrl.Result, error) {
	w, ok := r.wallets().For(networkOf(rf.Status), tokenOf(rf.Status))
	if !ok {
		st := rf.Status
		st.Message = fmt.Sprintf("no refund wallet is configured on %s; the signed transaction %s waits to be broadcast", networkOf(rf.Status), st.TxHash)
		return ctrl.Result{RequeueAfter: time.Minute}, r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonNoWallet)
	}
	if refund.Adopted(rf.Status) {
		return r.watchAdopted(ctx, rf, w)
	}
	raw, err := refund.SignedBytes(rf.Status)
	if err != nil {
		// never re-sign over a transaction that may be on its way: an operator must look
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("refund %s: %w", rf.Name, err))
	}
	obs, err := w.Receipt(ctx, rf.Status.TxHash)
	if err != nil {
		return ctrl.Result{}, err
	}
	if receipt := refund.ReceiptOf(obs); receipt.Found {
		st := refund.Observed(rf.Status, receipt, r.Clock.Now())
		reason, kind := refund.ReasonBroadcast, corev1.EventTypeNormal
		switch st.State {
		case payoutv1.RefundConfirmed:
			reason = refund.ReasonConfirmed
		case payoutv1.RefundPending:
			reason, kind = refund.ReasonReverted, corev1.EventTypeWarning
		}
		if err := r.write(ctx, rf, st, kind, reason); err != nil {
			return ctrl.Result{}, err
		}
		if st.State == payoutv1.RefundConfirmed {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	berr := w.Broadcast(ctx, raw)
	st := refund.Broadcasted(rf.Status, berr)
	if berr != nil {
		if err := r.write(ctx, rf, st, corev1.EventTypeWarning, refund.ReasonBroadcastFailed); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, berr
	}
	return ctrl.Result{RequeueAfter: r.poll()}, r.write(ctx, rf, st, corev1.EventTypeNormal, refund.ReasonBroadcast)
}

// watchAdopted follows an adopted transaction to depth; one that left the chain sends the
// refund again (there are no bytes of its own to broadcast).
func (r *RefundReconciler) watchAdopted(ctx context.Context, rf *payoutv1.Refund, w refund.Wallet) (ctrl.Result, error) {
	obs, err := w.Receipt(ctx, rf.Status.TxHash)
	if err != nil {
		return ctrl.Result{}, err
	}
	receipt := refund.ReceiptOf(obs)
	if !receipt.Found {
		return ctrl.Result{RequeueAfter: time.Millisecond}, r.write(ctx, rf, refund.Lost(rf.Status), corev1.EventTypeWarning, refund.ReasonReverted)
	}
	st := refund.Observed(rf.Status, receipt, r.Clock.Now())
	reason := refund.ReasonBroadcast
	if st.State == payoutv1.RefundConfirmed {
		reason = refund.ReasonConfirmed
	}
	if err := r.write(ctx, rf, st, corev1.EventTypeNormal, reason); err != nil || st.State == payoutv1.RefundConfirmed {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.poll()}, nil
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
