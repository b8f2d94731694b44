// Package treasury is the one home of the sweeper's decisions: which deposits are the
// platform's to move to the treasury (Due, AdmitWriteOff), when a batch of them goes (Schedule),
// and the steps of a batch's one transaction (Next, Signed, Settle). They are pure functions of
// stored facts and what the chain said, for the sweeper (internal/sweeper) to load, apply and
// persist.
//
// # What is due
//
// A deposit is swept only once nothing about it can still be owed to anyone, read from the
// transfer's stored facts: its transfer has ended, and every part of the deposit is settled.
// The part credited to the transfer is settled when the payout completed and was not returned
// by the bank, or when a refund of the transfer's deposit is confirmed (the refund wallet sent
// the sender their money, so the tokens at the deposit address replace it). A stray part is
// settled when its refund is confirmed, or when an operator wrote it off (an explicit, audited
// Sweep with reason WrittenOff, `kubectl payout stray write-off`).
//
// A deposit is not swept while its transfer is still paying out, though the payout is fiat and
// the tokens could move without touching it: a payout the provider rejects, or a bank that
// returns it, makes the deposit owed back to its sender, and until the transfer has ended the
// deposit address holding exactly the deposits still in play is what the ledger and an operator
// recovering by hand read. Sweeping later costs nothing but the time the tokens wait.
//
// A refund in flight (a Refund of the deposit not yet Confirmed or Refused) holds its deposit:
// the sweeper never races a refund of the same deposit.
//
// # Orphans
//
// A deposit recorded in payoutv1.OrphanNamespace arrived after its transfer's account was
// deleted: no payout can ever use it, so it is owed whole to its sender (transfer.OrphanOwed),
// exactly as a stray deposit is, and becomes the platform's the same two ways: its refund (a
// Refund in OrphanNamespace) is confirmed, or an operator wrote it off (WriteOff). Its transfer
// need not exist; its key path is the one its address was issued under, from the transfer id
// (depositkey.Path), and the sweeper signs only for a key that derives the deposit's address.
// Sweeping it on any other fact would take money its sender may still claim, and leaving it for
// ever would hold the platform's tokens once it is refunded.
package treasury

import (
	"fmt"
	"math/big"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Verdict is what Judge says of one deposit.
type Verdict struct {
	// Due: the deposit is the platform's to sweep, for Reason.
	Due    bool
	Reason payoutv1.SweepReason
	// Why it is not due (for people), when it is not.
	Why string
	// Owed: a part of the deposit is owed back to its sender and no write-off can change that
	// (the transfer's own credited deposit).
	Owed bool
}

// Judge says whether deposit dep of transfer t is the platform's to sweep. deps are all of t's
// deposits (the ledger sorts each log into credited and stray parts by all of them), refunds
// the Refunds labelled with t, and writtenOff whether an operator wrote off dep's stray part.
func Judge(t *payoutv1.Transfer, deps []payoutv1.Deposit, refunds []payoutv1.Refund, dep *payoutv1.Deposit, writtenOff bool) Verdict {
	if dep.Namespace == payoutv1.OrphanNamespace {
		return judgeOrphan(dep, refunds, writtenOff)
	}
	if t == nil {
		return Verdict{Why: "its transfer does not exist (an orphaned deposit waits for an operator)"}
	}
	if t.Spec.Method != payoutv1.TransferV1 {
		return Verdict{Why: "it is not the deposit of a v1 transfer"}
	}
	if !transfer.Ended(t) {
		return Verdict{Why: fmt.Sprintf("transfer %s has not ended", t.Name)}
	}
	ref := refOf(dep)
	ledger := transfer.SortDeposits(t, deps)
	credited, stray := false, false
	for _, c := range ledger.Credited {
		if c.Deposit != nil && refOf(c.Deposit) == ref && c.Units.IsPositive() {
			credited = true
		}
	}
	for _, s := range ledger.Strays {
		if sameRef(s.Ref, ref) && s.Units.IsPositive() {
			stray = true
		}
	}
	if !credited && !stray {
		return Verdict{Why: "it moves nothing"}
	}
	// a refund of this deposit in flight holds it, whatever else is true
	for i := range refunds {
		rf := &refunds[i]
		if !refundOf(rf, t, ref, credited, stray) {
			continue
		}
		if s := rf.Status.State; s != payoutv1.RefundConfirmed && s != payoutv1.RefundRefused {
			return Verdict{Why: fmt.Sprintf("refund %s of it is in flight", rf.Name)}
		}
	}
	reason := payoutv1.SweepPaidOut
	st := &t.Status
	if credited {
		switch {
		case st.Refund != nil:
			reason = payoutv1.SweepRefunded
		case st.Payout != nil && st.Payout.State == payoutv1.PayoutCompleted && st.Payout.Returned == nil:
		default:
			return Verdict{Why: fmt.Sprintf("transfer %s owes its deposit back until it is refunded", t.Name), Owed: true}
		}
	}
	if stray {
		switch {
		case strayRefunded(t, ref):
			reason = payoutv1.SweepRefunded
		case writtenOff:
			reason = payoutv1.SweepWrittenOff
		default:
			return Verdict{Why: "its stray part is owed back until it is refunded or written off"}
		}
	}
	return Verdict{Due: true, Reason: reason}
}

// judgeOrphan is Judge of a deposit recorded in OrphanNamespace (see Orphans): due once its
// refund is confirmed or it is written off, never while a refund of it is in flight.
func judgeOrphan(dep *payoutv1.Deposit, refunds []payoutv1.Refund, writtenOff bool) Verdict {
	if a, ok := new(big.Int).SetString(dep.Spec.Amount, 10); !ok || a.Sign() <= 0 {
		return Verdict{Why: "it moves nothing"}
	}
	ref := refOf(dep)
	refunded := false
	for i := range refunds {
		rf := &refunds[i]
		if rf.Namespace != dep.Namespace || rf.Spec.Transfer != dep.Spec.Transfer || rf.Spec.Deposit == nil || !sameRef(*rf.Spec.Deposit, ref) {
			continue
		}
		switch rf.Status.State {
		case payoutv1.RefundConfirmed:
			refunded = true
		case payoutv1.RefundRefused:
		default:
			return Verdict{Why: fmt.Sprintf("refund %s of it is in flight", rf.Name)}
		}
	}
	switch {
	case refunded:
		return Verdict{Due: true, Reason: payoutv1.SweepRefunded}
	case writtenOff:
		return Verdict{Due: true, Reason: payoutv1.SweepWrittenOff}
	}
	return Verdict{Why: "it arrived after its transfer's account was deleted: it is owed to its sender until it is refunded or written off"}
}

// Intent is the Sweep the sweeper creates for a due deposit: named and placed as the Deposit,
// so that the API server's atomic create is the one intent per deposit. t is nil for a deposit
// in OrphanNamespace, whose key path follows from its transfer id.
func Intent(t *payoutv1.Transfer, dep *payoutv1.Deposit, reason payoutv1.SweepReason) *payoutv1.Sweep {
	path := ""
	if t != nil {
		path = t.Spec.DepositPath
	} else {
		path, _ = depositkey.Path(dep.Spec.Transfer) // the Deposit's schema holds a valid id
	}
	return &payoutv1.Sweep{
		ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name,
			Labels: map[string]string{payoutv1.DepositTransferLabel: dep.Spec.Transfer}},
		Spec: payoutv1.SweepSpec{
			Transfer: dep.Spec.Transfer, Network: dep.Spec.Network, Token: dep.Spec.Token,
			Address: strings.ToLower(dep.Spec.To), Path: path, Amount: dep.Spec.Amount,
			DepositTxHash: strings.ToLower(dep.Spec.TxHash), DepositLogIndex: dep.Spec.LogIndex, Reason: reason,
		},
	}
}

// Admit is the status of a new Sweep: Pending once its deposit is due (v.Due), Refused when it
// never can be by the sweep's reason (a write-off of a deposit its transfer owes back), and
// otherwise unchanged (no state yet), saying why it waits.
func Admit(sw *payoutv1.Sweep, v Verdict) payoutv1.SweepStatus {
	st := sw.Status
	switch {
	case v.Due:
		st.State = payoutv1.SweepPending
		st.Message = fmt.Sprintf("due (%s): %s %s base units from %s on %s", v.Reason, sw.Spec.Amount, sw.Spec.Token, sw.Spec.Address, sw.Spec.Network)
	case v.Owed && sw.Spec.Reason == payoutv1.SweepWrittenOff:
		st.State = payoutv1.SweepRefused
		st.Message = truncate("a write-off is for stray deposits only: " + v.Why)
	default:
		st.Message = truncate("waiting: " + v.Why)
	}
	return st
}

// Amount is a sweep's amount in base units; ok is false when it is not a positive integer.
func Amount(sw *payoutv1.Sweep) (*big.Int, bool) {
	a, ok := new(big.Int).SetString(sw.Spec.Amount, 10)
	return a, ok && a.Sign() > 0
}

func refOf(d *payoutv1.Deposit) payoutv1.DepositRef {
	return payoutv1.DepositRef{Network: d.Spec.Network, TxHash: strings.ToLower(d.Spec.TxHash), LogIndex: d.Spec.LogIndex}
}

func sameRef(a, b payoutv1.DepositRef) bool {
	return a.Network == b.Network && strings.EqualFold(a.TxHash, b.TxHash) && a.LogIndex == b.LogIndex
}

// refundOf reports whether rf refunds a part of the deposit ref of t.
func refundOf(rf *payoutv1.Refund, t *payoutv1.Transfer, ref payoutv1.DepositRef, credited, stray bool) bool {
	if rf.Spec.Transfer != t.Name {
		return false
	}
	if rf.Spec.Deposit == nil {
		return credited
	}
	return stray && sameRef(*rf.Spec.Deposit, ref)
}

// strayRefunded reports whether t's status records a confirmed refund of its stray deposit ref.
func strayRefunded(t *payoutv1.Transfer, ref payoutv1.DepositRef) bool {
	for _, sd := range t.Status.StrayDeposits {
		network := sd.Network
		if network == "" {
			network = t.Spec.SourceNetwork
		}
		if sd.Refund != nil && sameRef(payoutv1.DepositRef{Network: network, TxHash: sd.TxHash, LogIndex: sd.LogIndex}, ref) {
			return true
		}
	}
	return false
}

func truncate(s string) string {
	if len(s) > 512 {
		return s[:509] + "..."
	}
	return s
}
