package transfer

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// A v2 deposit goes to one platform address per network, shared by every account, and the hash
// a caller confirms is what says which transfer it pays. The hash is a claim, not a proof: a
// transaction pays a v2 transfer only when, at depth, it sends the transfer's amount of its token
// to the platform address, from the transfer's wallet when one is declared, from a wallet not
// bound to another account, and in a block after the one the network had reached when the
// transfer was created (so a transaction seen on chain cannot be taken by a transfer made after
// it: blocks are compared, not clocks). A hash that fails any of these fails the transfer and is
// released, so that a squatter's confirmation cannot keep the owner from confirming it. A hash
// that is never found is looked up less and less often, and after the match timeout the transfer
// fails (DepositNotFound) and releases it too.

// observeTx judges a v2 transfer's confirmed transaction. Facts seen before depth are
// provisional: a reorg can take them back; at depth they are final.
func observeTx(d *decision) {
	t := d.t
	if t.Spec.Method != payoutv1.TransferV2 || t.Spec.TxHash == "" {
		return
	}
	if d.st.TxMatch == nil {
		d.st.TxMatch = &payoutv1.TxMatch{RecordedAt: d.now()}
	}
	tx := d.in.Tx
	if tx == nil || !NeedsTx(t) {
		return
	}
	if !tx.Found {
		if d.st.Deposit != nil && d.st.Deposit.ConfirmedAt == nil {
			d.st.Deposit = nil
			d.note(ReasonDepositReorged, "transaction %s is no longer on chain; waiting for it again", t.Spec.TxHash)
			d.event(corev1.EventTypeWarning, ReasonDepositReorged, "transaction %s left the chain before depth", t.Spec.TxHash)
		}
		if d.st.Deposit == nil && d.in.MatchTimeout > 0 && d.in.Now.Sub(d.st.TxMatch.RecordedAt.Time) >= d.in.MatchTimeout {
			d.notFound = true
		}
		return
	}
	if tx.Reverted {
		if tx.Required > 0 && tx.Confirmations >= tx.Required {
			d.mismatch = "transaction " + t.Spec.TxHash + " reverted: it moved no funds"
		}
		return
	}
	v2 := payoutv1.NormalizeWallet(d.in.V2Address)
	var ours, other int = -1, -1
	for i, tt := range tx.Transfers {
		if payoutv1.NormalizeWallet(tt.To) != v2 || tt.Amount == nil || tt.Amount.Sign() <= 0 {
			continue
		}
		if tt.Token == t.Spec.SourceToken && ours < 0 {
			ours = i
		} else if other < 0 {
			other = i
		}
	}
	pick := ours
	if pick < 0 {
		pick = other
	}
	if pick < 0 {
		if tx.AtDepth() {
			d.mismatch = fmt.Sprintf("transaction %s sends no %s to the platform address %s", t.Spec.TxHash, t.Spec.SourceToken, d.in.V2Address)
		}
		return
	}
	tt := tx.Transfers[pick]
	wasSeen := d.st.Deposit != nil
	bt := metav1.NewTime(tx.BlockTime)
	facts := &payoutv1.DepositFacts{
		Network: t.Spec.SourceNetwork, Token: tt.Token, TxHash: t.Spec.TxHash, LogIndex: tt.LogIndex,
		From: tt.From, Amount: tt.Amount.String(), BlockNumber: tx.BlockNumber, BlockHash: tx.BlockHash,
		BlockTime: &bt, Confirmations: tx.Confirmations, SeenAt: d.now(),
	}
	if wasSeen {
		facts.SeenAt = d.st.Deposit.SeenAt
	}
	if tx.AtDepth() {
		now := d.now()
		facts.ConfirmedAt = &now
	}
	d.st.Deposit = facts
	d.mismatch = txMismatch(d, tt, tx)
	if !tx.AtDepth() {
		d.mismatch = "" // judged at depth only: before it, a reorg may replace the transaction
		if !wasSeen {
			d.note(ReasonDepositSeen, "transaction %s found in block %d (%d of %d confirmations)", t.Spec.TxHash, tx.BlockNumber, tx.Confirmations, tx.Required)
		}
		return
	}
	switch {
	case d.mismatch != "":
		// stopBeforePayout fails the transfer; releaseHash gives the hash back
	case d.ended():
		d.event(corev1.EventTypeWarning, ReasonDepositAfterEnd, "%s %s arrived in %s after the transfer failed; `kubectl payout refund %s` sends it back",
			TokenAmount(facts.Amount), tt.Token, t.Spec.TxHash, t.Name)
		d.note(ReasonDepositAfterEnd, "deposit %s arrived after the transfer failed", t.Spec.TxHash)
	default:
		d.note(ReasonDepositConfirmed, "%s %s arrived in %s (block %d)", TokenAmount(facts.Amount), tt.Token, t.Spec.TxHash, tx.BlockNumber)
	}
}

// txMismatch says why the token transfer tt of tx does not pay the transfer, or "".
func txMismatch(d *decision, tt chain.TokenTransfer, tx *chain.TxObservation) string {
	t := d.t
	hash := t.Spec.TxHash
	switch {
	case t.Spec.HeadAtCreation > 0 && tx.BlockNumber <= t.Spec.HeadAtCreation:
		return fmt.Sprintf("transaction %s was mined in block %d, not after block %d that %s had reached when the transfer was created: it was sent before the transfer existed",
			hash, tx.BlockNumber, t.Spec.HeadAtCreation, t.Spec.SourceNetwork)
	case tt.Token != t.Spec.SourceToken:
		return fmt.Sprintf("transaction %s sends %s, not %s", hash, tt.Token, t.Spec.SourceToken)
	case baseUnits(tt.Amount.String()).Cmp(expectedUnits(t)) != 0:
		return fmt.Sprintf("transaction %s sends %s %s, not the transfer's %s", hash, TokenAmount(tt.Amount.String()), tt.Token, t.Spec.Amount)
	case t.Spec.WalletAddress != "" && !chain.SameSender(tt.From, t.Spec.WalletAddress):
		return fmt.Sprintf("transaction %s is sent from %s, not from the transfer's wallet %s", hash, tt.From, t.Spec.WalletAddress)
	}
	if holder := d.in.WalletBindings[chain.SenderKey(tt.From)]; holder != "" && holder != t.Namespace {
		return fmt.Sprintf("transaction %s is sent from %s, a wallet bound to another account", hash, tt.From)
	}
	return ""
}

// releaseHash gives back the claim on a v2 hash that does not pay the transfer. It is asked for
// on every pass while the hash is released (the claim is deleted only while this transfer holds
// it), except once a refund of the transfer was requested: the refund tool claims the hash back
// for it, and that claim must stay.
func releaseHash(d *decision) {
	if d.t.Spec.Method != payoutv1.TransferV2 || d.t.Spec.TxHash == "" || d.st.TxMatch == nil {
		return
	}
	if (d.mismatch != "" || d.notFound) && d.st.TxMatch.ReleasedAt == nil && d.st.Payout == nil {
		now := d.now()
		d.st.TxMatch.ReleasedAt = &now
		why := "it was not found on chain in time"
		if d.mismatch != "" {
			why = "it does not pay this transfer"
		}
		d.event(corev1.EventTypeNormal, ReasonHashReleased, "transaction hash %s is released (%s): the transfer it pays may confirm it", d.t.Spec.TxHash, why)
		if d.ended() && d.noteReason == "" {
			d.note(ReasonHashReleased, "transaction hash %s is released: %s", d.t.Spec.TxHash, why)
		}
	}
	if d.st.TxMatch.ReleasedAt != nil && d.in.Refund == nil {
		d.out.Actions = append(d.out.Actions, Action{Kind: ActReleaseHash})
	}
}

// matchTimeoutIn is how long until an unfound hash times out, or 0 when it does not apply.
func (d *decision) matchTimeoutIn() time.Duration {
	m := d.st.TxMatch
	if d.in.MatchTimeout <= 0 || m == nil || m.ReleasedAt != nil || d.st.Deposit != nil {
		return 0
	}
	return max(m.RecordedAt.Add(d.in.MatchTimeout).Sub(d.in.Now), time.Second)
}
