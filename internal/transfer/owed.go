package transfer

import (
	"fmt"
	"strconv"
	"strings"

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
	// the deposit is owed unless a payout of it went out and stayed with the recipient (a payout
	// the provider held though the transfer failed: adopted after a restore)
	kept := st.Payout != nil && st.Payout.State != payoutv1.PayoutRejected && st.Payout.Returned == nil
	if dep := st.Deposit; OwesDeposit(t) && !kept && st.Refund == nil && dep != nil && dep.ConfirmedAt != nil &&
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

// sourcePrefix opens a payout's source of funds, as the provider keeps it.
const sourcePrefix = "crypto deposit "

// SourceOfFunds names the deposit that pays t, for the provider to keep with the payout:
// "crypto deposit <network> <tx hash>:<log index>", one tx:log per credited log. After an etcd
// restore the provider's payouts say which transaction paid which transfer (ParseSourceOfFunds),
// and that binding is rebuilt from them. "" when t holds no deposit.
func SourceOfFunds(t *payoutv1.Transfer) string {
	refs := CreditedLogs(t)
	if len(refs) == 0 {
		return ""
	}
	s := sourcePrefix + string(refs[0].Network)
	for _, r := range refs {
		s += fmt.Sprintf(" %s:%d", r.TxHash, r.LogIndex)
	}
	return s
}

// ParseSourceOfFunds reads SourceOfFunds back: the logs that paid a payout; false for any other
// text (a payout made otherwise).
func ParseSourceOfFunds(s string) ([]payoutv1.DepositRef, bool) {
	if !strings.HasPrefix(s, sourcePrefix) {
		return nil, false
	}
	fields := strings.Fields(strings.TrimPrefix(s, sourcePrefix))
	if len(fields) < 2 {
		return nil, false
	}
	network := payoutv1.Network(fields[0])
	var out []payoutv1.DepositRef
	for _, f := range fields[1:] {
		tx, log, ok := strings.Cut(f, ":")
		n, err := strconv.ParseInt(log, 10, 64)
		if !ok || err != nil || tx == "" || n < 0 {
			return nil, false
		}
		out = append(out, payoutv1.DepositRef{Network: network, TxHash: hashKey(tx), LogIndex: n})
	}
	return out, true
}

// CreditedLogs are the logs credited to t: its deposit's parts, or its one deposit log.
func CreditedLogs(t *payoutv1.Transfer) []payoutv1.DepositRef {
	dep := t.Status.Deposit
	if dep == nil || dep.ConfirmedAt == nil {
		return nil
	}
	if len(dep.Parts) == 0 {
		return []payoutv1.DepositRef{{Network: dep.Network, TxHash: hashKey(dep.TxHash), LogIndex: dep.LogIndex}}
	}
	out := make([]payoutv1.DepositRef, len(dep.Parts))
	for i, p := range dep.Parts {
		out[i] = payoutv1.DepositRef{Network: dep.Network, TxHash: hashKey(p.TxHash), LogIndex: p.LogIndex}
	}
	return out
}

// DepositClaimKey is the key of the claim that binds one deposit log to the transfer it pays
// (payoutv1.ClaimDeposit): a v2 transaction at the shared platform address pays one transfer at
// most, whatever the hash claims and the archive say after a restore.
func DepositClaimKey(r payoutv1.DepositRef) string {
	return fmt.Sprintf("%s/%s/%d", r.Network, hashKey(r.TxHash), r.LogIndex)
}

// hashKey is one spelling of a transaction hash: EVM hex in lower case, a Solana signature (case
// matters in base58) as it is.
func hashKey(h string) string { return payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, h) }
