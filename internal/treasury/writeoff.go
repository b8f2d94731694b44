package treasury

import (
	"errors"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/refusal"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// ErrNotWritable: the deposit cannot be written off (it is not a stray of an ended transfer, or
// a refund of it is in flight or done). The error text says which, for a person.
var ErrNotWritable = errors.New("deposit cannot be written off")

// WriteOff is the Sweep that records an operator's decision (by, why) not to refund the stray
// deposit dep, so that the treasury takes it (`kubectl payout stray write-off`), or why it is
// refused. Only a stray part is written off: a deposit t counts nothing of, or the excess of the
// one that reached its amount, once t has ended (what is stray is settled then); or a deposit
// recorded in OrphanNamespace, owed whole (t may be nil there). deps are t's Deposits, rf the
// Refund of dep's stray part (StrayRefundName; nil when there is none). A refund in flight or
// done refuses it: the sender is paid back, or being paid, and the deposit is the treasury's
// anyway once that refund is confirmed. A refused refund decides nothing.
//
// The refund side keeps the converse (refund.WrittenOff): once this Sweep exists, a refund of
// the deposit is refused.
func WriteOff(t *payoutv1.Transfer, deps []payoutv1.Deposit, dep *payoutv1.Deposit, rf *payoutv1.Refund, by, why string) (*payoutv1.Sweep, error) {
	ref := refOf(dep)
	if dep.Namespace != payoutv1.OrphanNamespace {
		switch {
		case t == nil:
			return nil, refusal.New(ErrNotWritable, "deposit %s: its transfer %s does not exist in %s", dep.Name, dep.Spec.Transfer, dep.Namespace)
		case t.Spec.Method != payoutv1.TransferV1:
			return nil, refusal.New(ErrNotWritable, "deposit %s is not the deposit of a v1 transfer", dep.Name)
		case !transfer.Ended(t):
			return nil, refusal.New(ErrNotWritable, "deposit %s: transfer %s has not ended; what of its deposits is stray is settled once it has", dep.Name, t.Name)
		case strayRefunded(t, ref):
			return nil, refusal.New(ErrNotWritable, "the stray deposit %s of transfer %s was refunded: it is not written off", dep.Name, t.Name)
		}
		stray := false
		for _, s := range transfer.SortDeposits(t, deps).Strays {
			if sameRef(s.Ref, ref) && s.Units.IsPositive() {
				stray = true
			}
		}
		if !stray {
			return nil, refusal.New(ErrNotWritable, "deposit %s is credited to transfer %s, not a stray: only a stray deposit is written off (a failed transfer's deposit is refunded: kubectl payout refund %s)",
				dep.Name, t.Name, t.Name)
		}
	}
	if rf != nil {
		switch rf.Status.State {
		case payoutv1.RefundRefused:
		case payoutv1.RefundConfirmed:
			return nil, refusal.New(ErrNotWritable, "the stray deposit %s was refunded (refund %s/%s, transaction %s): it is not written off", dep.Name, rf.Namespace, rf.Name, rf.Status.TxHash)
		default:
			return nil, refusal.New(ErrNotWritable, "a refund of the stray deposit %s is in flight (refund %s/%s): it is not written off", dep.Name, rf.Namespace, rf.Name)
		}
	}
	sw := Intent(t, dep, payoutv1.SweepWrittenOff)
	sw.Spec.WriteOff = &payoutv1.WriteOff{By: by, Why: why}
	return sw, nil
}
