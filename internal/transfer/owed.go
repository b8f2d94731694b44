package transfer

import (
	"fmt"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Owed is money a transfer holds that belongs to a sender: the deposit of a failed transfer (or
// of one whose payout the recipient's bank returned), or a stray deposit of any transfer. Each is refunded at most once, by a Refund whose name is
// fixed by what it refunds (Name), so that the API server's atomic create is the guarantee.
type Owed struct {
	// Name of the Refund that sends it back: the transfer id for its deposit, StrayRefundName
	// for a stray deposit.
	Name string
	// Deposit is the stray deposit; nil for the transfer's deposit.
	Deposit *payoutv1.DepositRef
	// Network and Token it arrived in, From whom, and Units (token base units).
	Network payoutv1.Network
	Token   payoutv1.Token
	From    string
	Units   string
	// Reason says why it is owed.
	Reason string
}

// What reports what the owed money is, for people.
func (o Owed) What() string {
	if o.Deposit == nil {
		return fmt.Sprintf("the deposit of %s %s on %s from %s", TokenAmount(o.Units), o.Token, o.Network, o.From)
	}
	return fmt.Sprintf("the stray deposit of %s %s on %s from %s (%s, log %d)", TokenAmount(o.Units), o.Token, o.Network, o.From, o.Deposit.TxHash, o.Deposit.LogIndex)
}

// OwesDeposit reports whether t's deposit belongs to its sender again: t failed, or the
// recipient's bank returned its completed payout (the money never stayed with the recipient).
// Whether any is left to refund is OwedOf's question (the deposit arrived, no refund yet).
func OwesDeposit(t *payoutv1.Transfer) bool {
	st := &t.Status
	return st.Failure != nil || (st.Payout != nil && st.Payout.Returned != nil)
}

// OwedOf lists what t owes, from its stored status and its Deposit objects (deps): the deposit
// credited to it when it failed (or its completed payout was returned) and was not refunded,
// then every stray deposit (SortDeposits),
// refunded or not (a stray's Refund object says whether it was). reclaimed reports, for a v2
// transfer whose hash was released (its transaction did not pay it), whether the transfer holds
// the hash's claim again: only then is its observed deposit its to refund, since otherwise
// another transfer may be paid by that transaction. The refund tool, the refund controller and
// the archiver all decide on this one list.
func OwedOf(t *payoutv1.Transfer, deps []payoutv1.Deposit, reclaimed bool) []Owed {
	var out []Owed
	st := &t.Status
	if dep := st.Deposit; OwesDeposit(t) && st.Refund == nil && dep != nil && dep.ConfirmedAt != nil &&
		baseUnits(dep.Amount).IsPositive() && (!Released(t) || reclaimed) {
		reason := "the transfer failed: " + st.ErrorText()
		if st.Failure == nil {
			reason = "the recipient's bank returned the payout: " + st.Payout.Returned.Message
		}
		out = append(out, Owed{Name: t.Name, Network: dep.Network, Token: dep.Token, From: dep.From, Units: dep.Amount,
			Reason: reason})
	}
	for _, s := range SortDeposits(t, deps).Strays {
		ref := s.Ref
		out = append(out, Owed{Name: payoutv1.StrayRefundName(t.Name, ref), Deposit: &ref, Network: ref.Network, Token: s.Token,
			From: s.From, Units: s.Units.String(), Reason: s.Reason})
	}
	return out
}
