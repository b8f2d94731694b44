package refund

import (
	"errors"
	"strings"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/refusal"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Kinds of refusal of a refund a caller may branch on, matched with errors.Is. The error text
// itself is written for a person and names the transfer.
var (
	// ErrNotRefundable: the transfer is not a failed transfer whose deposit arrived.
	ErrNotRefundable = errors.New("transfer cannot be refunded")
	// ErrAlreadyRequested: a refund of the transfer was requested (or sent) before; repeating
	// the request changes nothing.
	ErrAlreadyRequested = errors.New("refund already requested")
	// ErrWrittenOff: an operator wrote the stray deposit off (kubectl payout stray write-off):
	// its tokens go to the treasury, and it is not refunded.
	ErrWrittenOff = errors.New("stray deposit written off")
)

// refuse is a refusal of kind (errors.Is) whose text is the formatted message.
func refuse(kind error, format string, args ...any) error {
	return refusal.New(kind, format, args...)
}

// Requestable says why an operator's request to refund t records nothing, or nil when it may
// record a Refund for each item of owed (transfer.OwedOf of t) and orphanOwed (its deposits
// recorded after its account was deleted, transfer.OrphanOwed), both without what an operator
// wrote off (Unwritten; writtenOff is its refusal, nil when it dropped nothing). reclaimable: no
// transfer but t holds the claim on t's v2 hash, so that a released hash may be taken back.
func Requestable(t *payoutv1.Transfer, owed, orphanOwed []transfer.Owed, reclaimable bool, writtenOff error) error {
	nothing := len(owed) == 0 && len(orphanOwed) == 0
	switch {
	case nothing && writtenOff != nil:
		return writtenOff
	case nothing && transfer.Released(t) && !reclaimable && t.Status.Refund == nil:
		return refuse(ErrNotRefundable, "transfer %s released its transaction hash %s, and another transfer holds it now: that transaction pays the other transfer, and this one owes nothing",
			t.Name, t.Spec.TxHash)
	case nothing && t.Status.Refund == nil && straysRefunded(t):
		// its strays' refunds are recorded: owed no more (OwedOf), whether or not their Refund
		// objects are still there
		return refuse(ErrAlreadyRequested, "the refunds of everything transfer %s owes were already requested and sent; each is sent once (kubectl payout describe transfer %s lists them)",
			t.Name, t.Name)
	case nothing:
		if err := Refundable(t); err != nil {
			return err
		}
		return refuse(ErrNotRefundable, "transfer %s owes nothing", t.Name)
	}
	for _, o := range owed {
		if o.Deposit == nil {
			return Refundable(t)
		}
	}
	return nil
}

// straysRefunded reports whether t records the refund of a stray deposit.
func straysRefunded(t *payoutv1.Transfer) bool {
	for _, sd := range t.Status.StrayDeposits {
		if sd.Refund != nil {
			return true
		}
	}
	return false
}

// Refundable says why the deposit of t may not be refunded, or nil when it may: only a failed
// transfer (or one whose completed payout the recipient's bank returned) whose deposit arrived
// from an address the refund wallet can send to has its deposit to send back (its stray
// deposits are owed whatever its status: transfer.OwedOf).
func Refundable(t *payoutv1.Transfer) error {
	switch {
	case t.Status.Refund != nil:
		return refuse(ErrAlreadyRequested, "transfer %s is already refunded (transaction %s)", t.Name, t.Status.Refund.TxHash)
	case !transfer.OwesDeposit(t):
		return refuse(ErrNotRefundable, "transfer %s %s: only a failed transfer whose deposit arrived can be refunded",
			t.Name, phaseText(t.Status.Phase))
	case t.Status.Deposit == nil || t.Status.Deposit.ConfirmedAt == nil:
		return refuse(ErrNotRefundable, "transfer %s failed before its deposit arrived: there is nothing to send back", t.Name)
	}
	if _, ok := chain.RefundAddressOnBase(t.Status.Deposit.From); !ok {
		return refuse(ErrNotRefundable, "transfer %s: the deposit's sender %q has no address on Base, where refunds are sent from (a Solana sender is refunded on Solana, which the refund wallet does not sign for)",
			t.Name, t.Status.Deposit.From)
	}
	return nil
}

func phaseText(p payoutv1.TransferPhase) string {
	if p == "" {
		return "has no status yet"
	}
	return "is " + string(p)
}

// WrittenOff says why the stray deposit ref may not be refunded, or nil when it may: sw is the
// Sweep of its deposit (named after its Deposit, in its namespace; nil when there is none). A
// Sweep with reason WrittenOff is an operator's decision that the treasury keeps the tokens:
// refunding them as well would pay the sender back from the refund wallet while the treasury
// keeps what they sent. It holds from its creation, before the sweeper admits it; a write-off
// the sweeper refused decides nothing. A transfer's own deposit (ref nil) is never written off.
// The refund tool (admin.RequestRefund, through Unwritten) and the refund controller, before it
// admits a Refund, decide on this one rule.
func WrittenOff(ref *payoutv1.DepositRef, sw *payoutv1.Sweep) error {
	if ref == nil || sw == nil || sw.Spec.Reason != payoutv1.SweepWrittenOff || sw.Status.State == payoutv1.SweepRefused ||
		sw.Spec.Network != ref.Network || !strings.EqualFold(sw.Spec.DepositTxHash, ref.TxHash) || sw.Spec.DepositLogIndex != ref.LogIndex {
		return nil
	}
	by, why := "an operator", ""
	if w := sw.Spec.WriteOff; w != nil {
		by, why = w.By, ": "+w.Why
	}
	return refuse(ErrWrittenOff, "the stray deposit %s (log %d) on %s of transfer %s was written off by %s%s; its tokens go to the treasury, and it is not refunded (kubectl get sweep -n %s %s)",
		ref.TxHash, ref.LogIndex, ref.Network, sw.Spec.Transfer, by, why, sw.Namespace, sw.Name)
}

// Unwritten is owed without the stray deposits an operator wrote off (WrittenOff): sweeps are
// the Sweeps of owed's stray deposits, by the name of their Deposit (payoutv1.DepositName). err
// says why the first dropped one is not refunded; nil when none was dropped.
func Unwritten(owed []transfer.Owed, sweeps map[string]*payoutv1.Sweep) (out []transfer.Owed, err error) {
	for _, o := range owed {
		if o.Deposit != nil {
			if off := WrittenOff(o.Deposit, sweeps[payoutv1.DepositName(o.Deposit.Network, o.Deposit.TxHash, o.Deposit.LogIndex)]); off != nil {
				if err == nil {
					err = off
				}
				continue
			}
		}
		out = append(out, o)
	}
	return out, err
}
