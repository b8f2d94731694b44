package transfer

import (
	"strings"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Hold is why money keeps an ended transfer in the cluster: it may leave (to the archive, or with
// its account's namespace) only once its senders are owed nothing and no refund of it is on its
// way, since its objects are the record of both.
type Hold string

const (
	// HoldMoneyOwed: the transfer owes a sender money that no confirmed refund has sent back
	// (OwedOf: a failed transfer's deposit, or a stray deposit, refunded once each by `kubectl
	// payout refund`), or a failed transfer's deposit is still on its way to depth. A refund
	// that was refused leaves its item owed.
	HoldMoneyOwed Hold = "MoneyOwed"
	// HoldRefundInFlight: a refund was asked for and has not reached an end (or is confirmed
	// and not yet recorded by the transfer).
	HoldRefundInFlight Hold = "RefundInFlight"
	// HoldDepositUnrecorded: a Deposit object of the transfer is not in its status yet (the
	// transfer controller has not seen it): what it owes is not known yet.
	HoldDepositUnrecorded Hold = "DepositUnrecorded"
)

// MoneyHeld says what holds an ended transfer t (Phase is terminal) in the cluster, "" when
// nothing does; deps are its Deposit objects, refunds its Refund objects, hashHeld whether it
// holds the claim on its v2 hash (OwedOf). The archiver and the account controller both ask it.
func MoneyHeld(t *payoutv1.Transfer, deps []payoutv1.Deposit, refunds []payoutv1.Refund, hashHeld bool) Hold {
	st := &t.Status
	if DepositArriving(t) {
		return HoldMoneyOwed // it will be owed
	}
	if h := owedHold(t, deps, refunds, hashHeld); h != "" {
		return h
	}
	switch {
	case !depositsRecorded(st, deps):
		return HoldDepositUnrecorded
	case refundInFlight(t, refunds):
		return HoldRefundInFlight
	}
	return ""
}

// DepositArriving reports whether t failed, unrefunded, while a deposit of its own is on its
// way to depth: once confirmed it is owed.
func DepositArriving(t *payoutv1.Transfer) bool {
	st := &t.Status
	return st.Refund == nil && st.Failure != nil && st.Deposit != nil && st.Deposit.ConfirmedAt == nil && !Released(t)
}

// owedHold says why money the transfer owes holds it: HoldMoneyOwed while an owed item has no
// refund that reached depth, HoldRefundInFlight while its refund is on its way; "" when nothing
// is owed.
func owedHold(t *payoutv1.Transfer, deps []payoutv1.Deposit, refunds []payoutv1.Refund, hashHeld bool) Hold {
	byName := map[string]*payoutv1.Refund{}
	for i := range refunds {
		byName[refunds[i].Name] = &refunds[i]
	}
	hold := Hold("")
	for _, o := range OwedOf(t, deps, hashHeld) {
		rf := byName[o.Name]
		switch {
		case rf == nil || rf.Status.State == payoutv1.RefundRefused:
			return HoldMoneyOwed
		case rf.Status.State != payoutv1.RefundConfirmed:
			hold = HoldRefundInFlight
		}
	}
	return hold
}

// refundInFlight reports whether a refund of the transfer was asked for and has not reached an
// end (Confirmed and copied into the transfer, or Refused).
func refundInFlight(t *payoutv1.Transfer, refunds []payoutv1.Refund) bool {
	for i := range refunds {
		rf := &refunds[i]
		switch rf.Status.State {
		case payoutv1.RefundRefused:
		case payoutv1.RefundConfirmed:
			if rf.Spec.Deposit == nil && t.Status.Refund == nil && OwesDeposit(t) {
				return true // not copied into the transfer yet
			}
		default:
			return true
		}
	}
	return false
}

// depositsRecorded reports whether every Deposit object of the transfer is in its status: as
// its deposit (or a part of it) or as a stray one. A transfer whose stray list is full lists no
// more (the Deposit objects are the record, and what is owed is read from them).
func depositsRecorded(st *payoutv1.TransferStatus, deps []payoutv1.Deposit) bool {
	if len(st.StrayDeposits) >= payoutv1.MaxStrays {
		return true
	}
	for i := range deps {
		d := &deps[i].Spec
		if d.Amount == "0" || credited(st.Deposit, d) {
			continue
		}
		found := false
		for _, s := range st.StrayDeposits {
			if strings.EqualFold(s.TxHash, d.TxHash) && s.LogIndex == d.LogIndex {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// credited reports whether the deposit log d is the transfer's deposit or one of its parts.
func credited(dep *payoutv1.DepositFacts, d *payoutv1.DepositSpec) bool {
	if dep == nil {
		return false
	}
	if strings.EqualFold(dep.TxHash, d.TxHash) && dep.LogIndex == d.LogIndex {
		return true
	}
	for _, p := range dep.Parts {
		if strings.EqualFold(p.TxHash, d.TxHash) && p.LogIndex == d.LogIndex {
			return true
		}
	}
	return false
}
