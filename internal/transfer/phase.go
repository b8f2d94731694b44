package transfer

import (
	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Phase derives the public status of a transfer (spec 3.1) from its facts. It is computed last,
// after every decision, and nothing decides on it: the order below is the whole story of a
// transfer read backwards, the newest fact first.
//
// v2 ordering (spec 3.2 leaves it open): awaiting_deposit (no hash yet) → pending_match (a hash
// is recorded, its transaction not found yet) → deposit_sent (found on chain, not yet at
// depth) → processing (at depth; converting) → transfer_created → completed.
func Phase(t *payoutv1.Transfer) payoutv1.TransferPhase {
	st := &t.Status
	switch {
	case st.Refund != nil && st.Failure != nil:
		// refunded is reached from failed only (spec 3.2); a completed transfer whose payout the
		// recipient's bank returned stays completed (terminal, spec 3.1) when its deposit is
		// refunded: status.payout.returned and status.refund say what happened
		return payoutv1.PhaseRefunded
	case st.Failure != nil:
		return payoutv1.PhaseFailed
	case st.Payout != nil && st.Payout.State == payoutv1.PayoutCompleted:
		return payoutv1.PhaseCompleted
	case st.Payout != nil && st.Payout.State == payoutv1.PayoutAccepted:
		return payoutv1.PhaseTransferCreated
	case st.Deposit != nil && st.Deposit.ConfirmedAt != nil:
		return payoutv1.PhaseProcessing
	case t.Spec.Method == payoutv1.TransferV1:
		return payoutv1.PhaseReadyToProcess
	case st.Deposit != nil:
		return payoutv1.PhaseDepositSent
	case t.Spec.TxHash != "":
		return payoutv1.PhasePendingMatch
	}
	return payoutv1.PhaseAwaitingDeposit
}

// Ended reports whether t reached a terminal status (spec 3.1): it failed (and may have been
// refunded since), or its payout completed (a deposit refunded after the recipient's bank
// returned the payout leaves it completed). Nothing moves an ended transfer on by itself; the
// archive and an account's deletion wait for it.
func Ended(t *payoutv1.Transfer) bool {
	st := &t.Status
	return st.Refund != nil || st.Failure != nil || (st.Payout != nil && st.Payout.State == payoutv1.PayoutCompleted)
}

// EndPhase reports whether Phase gives p to ended transfers only (completed, failed,
// refunded), for a reader that has the phase and not the transfer (a metric's status label).
func EndPhase(p payoutv1.TransferPhase) bool {
	return p == payoutv1.PhaseCompleted || p == payoutv1.PhaseFailed || p == payoutv1.PhaseRefunded
}

// Cancellable reports whether a cancellation request (DELETE of the recipient) recorded now would
// stop t: only before its payout intent is recorded and before it ends. Once the intent is
// recorded the payout may already be at the provider, and a transfer whose money is at the bank
// is never marked failed.
func Cancellable(t *payoutv1.Transfer) bool {
	st := &t.Status
	return t.Spec.Cancellation == nil && st.Payout == nil && st.Failure == nil && st.Refund == nil
}

// LookupPhase is the status a lookup reports (spec 2.5 lists six): the v2 steps before the
// deposit is received read as ready_to_process there, deposit_sent as processing;
// confirm-transfer reports them as they are. The REST lookup and the dashboard's pages both
// report it.
func LookupPhase(t *payoutv1.Transfer) payoutv1.TransferPhase {
	switch p := Phase(t); p {
	case payoutv1.PhaseAwaitingDeposit, payoutv1.PhasePendingMatch:
		return payoutv1.PhaseReadyToProcess
	case payoutv1.PhaseDepositSent:
		return payoutv1.PhaseProcessing
	default:
		return p
	}
}

// StatusLabels are the human texts of the public statuses (spec 2.5 status_label).
var StatusLabels = map[payoutv1.TransferPhase]string{
	payoutv1.PhaseReadyToProcess:  "Waiting for the deposit",
	payoutv1.PhaseAwaitingDeposit: "Waiting for the deposit",
	payoutv1.PhasePendingMatch:    "Matching the deposit",
	payoutv1.PhaseDepositSent:     "Deposit received",
	payoutv1.PhaseProcessing:      "Converting the funds",
	payoutv1.PhaseTransferCreated: "Payout sent to the bank",
	payoutv1.PhaseCompleted:       "Completed",
	payoutv1.PhaseFailed:          "Failed",
	payoutv1.PhaseRefunded:        "Refunded",
}
