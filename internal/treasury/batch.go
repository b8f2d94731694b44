package treasury

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// Policy is when a batch goes, per network and token: once the due amount reaches Threshold,
// or the oldest due deposit has waited MaxAge, whichever comes first; at most MaxItems
// deposits per batch.
type Policy struct {
	// Threshold in token base units; nil or zero sweeps every due deposit at once.
	Threshold *big.Int
	MaxAge    time.Duration
	MaxItems  int
}

// Schedule picks the next batch among pending, the Pending sweeps of one network and token:
// the oldest first (by the time each became due, its creation), up to MaxItems, when the
// policy says a batch goes now. When none goes, wait is how long until the oldest reaches
// MaxAge (zero when nothing is pending).
func Schedule(pending []payoutv1.Sweep, now time.Time, p Policy) (batch []payoutv1.Sweep, wait time.Duration) {
	if len(pending) == 0 {
		return nil, 0
	}
	sorted := append([]payoutv1.Sweep(nil), pending...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].CreationTimestamp.Time, sorted[j].CreationTimestamp.Time
		if !a.Equal(b) {
			return a.Before(b)
		}
		return sorted[i].Namespace+"/"+sorted[i].Name < sorted[j].Namespace+"/"+sorted[j].Name
	})
	total := new(big.Int)
	for i := range sorted {
		if a, ok := Amount(&sorted[i]); ok {
			total.Add(total, a)
		}
	}
	age := now.Sub(sorted[0].CreationTimestamp.Time)
	full := p.Threshold == nil || total.Cmp(p.Threshold) >= 0
	if !full && age < p.MaxAge {
		return nil, p.MaxAge - age
	}
	n := p.MaxItems
	if n <= 0 || n > payoutv1.MaxSweepBatch {
		n = payoutv1.MaxSweepBatch
	}
	if len(sorted) < n {
		n = len(sorted)
	}
	return sorted[:n], 0
}

// NewBatch is the SweepBatch of sweeps (one network and token) to the treasury address to. Its
// name is fixed by its deposits and how often each was released before, so a sweeper that
// crashed after creating it and before marking its sweeps creates the same batch again (and
// finds it), while a batch of the same deposits after a revert gets a new name.
func NewBatch(sweeps []payoutv1.Sweep, to string) *payoutv1.SweepBatch {
	keys := make([]string, len(sweeps))
	items := make([]payoutv1.SweepItem, len(sweeps))
	for i := range sweeps {
		sw := &sweeps[i]
		keys[i] = sw.Namespace + "/" + sw.Name + "#" + strconv.Itoa(len(sw.Status.ReleasedBatches))
		items[i] = payoutv1.SweepItem{Namespace: sw.Namespace, Name: sw.Name, Address: sw.Spec.Address, Path: sw.Spec.Path, Amount: sw.Spec.Amount}
	}
	sort.Strings(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	network, token := sweeps[0].Spec.Network, sweeps[0].Spec.Token
	return &payoutv1.SweepBatch{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%s", network, token, hex.EncodeToString(sum[:8])),
			Finalizers: []string{payoutv1.MoneyFinalizer}},
		Spec: payoutv1.SweepBatchSpec{Network: network, Token: token, To: strings.ToLower(to), Items: items},
	}
}

// Action is what the sweeper does next for a batch.
type Action int

const (
	// ActionNone: nothing more (its sweeps are settled).
	ActionNone Action = iota
	// ActionMark: mark every sweep of the batch Batched with it, then record it Pending.
	ActionMark
	// ActionSign: assign a nonce, sign, persist the signed transaction (Signed).
	ActionSign
	// ActionWatch: look up the persisted transaction's receipt; while there is none, broadcast
	// the persisted bytes again.
	ActionWatch
	// ActionSettle: write the outcome (Confirmed, or released after a revert) into its sweeps.
	ActionSettle
)

// Next is the action a batch's status calls for.
func Next(st payoutv1.SweepBatchStatus) Action {
	switch st.State {
	case "":
		return ActionMark
	case payoutv1.SweepBatchPending:
		return ActionSign
	case payoutv1.SweepBatchSigned, payoutv1.SweepBatchBroadcast:
		return ActionWatch
	}
	return ActionSettle
}

// Open reports whether a batch still holds its network's gas wallet: it may yet send a
// transaction (or has one on its way).
func Open(b *payoutv1.SweepBatch) bool {
	s := b.Status.State
	return s != payoutv1.SweepBatchConfirmed && s != payoutv1.SweepBatchReverted
}

// Signed is the batch's status once its transaction is signed: persisted before any broadcast.
func Signed(st payoutv1.SweepBatchStatus, from string, nonce uint64, raw []byte, hash string) payoutv1.SweepBatchStatus {
	st.State, st.From, st.Nonce = payoutv1.SweepBatchSigned, strings.ToLower(from), ptr.To(int64(nonce))
	st.SignedTx, st.TxHash = "0x"+hex.EncodeToString(raw), strings.ToLower(hash)
	st.Message = fmt.Sprintf("signed with nonce %d; broadcasting", nonce)
	return st
}

// Broadcast is the status once the node accepted the transaction.
func Broadcast(st payoutv1.SweepBatchStatus) payoutv1.SweepBatchStatus {
	if st.State == payoutv1.SweepBatchSigned {
		st.State = payoutv1.SweepBatchBroadcast
		st.Message = "broadcast; waiting for depth"
	}
	return st
}

// Observed is the status after a receipt lookup: Confirmed or Reverted once the receipt is at
// depth, otherwise unchanged but for the block. An obs that found no receipt changes nothing (the
// sweeper broadcasts the same bytes again).
func Observed(st payoutv1.SweepBatchStatus, obs *chain.TxObservation, gasUsed int64, now time.Time) payoutv1.SweepBatchStatus {
	if obs == nil || !obs.Found {
		return st
	}
	st.BlockNumber = obs.BlockNumber
	if obs.Required <= 0 || obs.Confirmations < obs.Required {
		return st
	}
	st.GasUsed, st.ConfirmedAt = gasUsed, ptr.To(metav1.NewTime(now))
	if obs.Reverted {
		st.State = payoutv1.SweepBatchReverted
		st.Message = fmt.Sprintf("the transaction %s reverted at depth (block %d): nothing moved; its deposits are batched again", st.TxHash, st.BlockNumber)
		return st
	}
	st.State = payoutv1.SweepBatchConfirmed
	st.Message = fmt.Sprintf("at depth in block %d", st.BlockNumber)
	return st
}

// Settle is what a settled batch b writes into one of its sweeps: Confirmed with the batch's
// transaction, or Pending again with the batch released when it reverted. A sweep that already
// moved on (another batch, or already settled) is left as it is: ok is false.
func Settle(sw payoutv1.SweepStatus, b *payoutv1.SweepBatch) (payoutv1.SweepStatus, bool) {
	if sw.State != payoutv1.SweepBatched || sw.Batch != b.Name {
		return sw, false
	}
	switch b.Status.State {
	case payoutv1.SweepBatchConfirmed:
		sw.State, sw.To, sw.TxHash, sw.BlockNumber, sw.ConfirmedAt = payoutv1.SweepConfirmed, b.Spec.To, b.Status.TxHash, b.Status.BlockNumber, b.Status.ConfirmedAt
		sw.Message = fmt.Sprintf("swept to %s in %s", b.Spec.To, b.Status.TxHash)
		return sw, true
	case payoutv1.SweepBatchReverted:
		return Release(sw, b.Name, "its batch's transaction reverted"), true
	}
	return sw, false
}

// Release is a Batched sweep back to Pending, with its batch listed as one that moved nothing.
func Release(sw payoutv1.SweepStatus, batch, why string) payoutv1.SweepStatus {
	sw.State, sw.Batch = payoutv1.SweepPending, ""
	sw.ReleasedBatches = append(append([]string(nil), sw.ReleasedBatches...), batch)
	sw.Message = truncate(fmt.Sprintf("released from batch %s: %s; waiting for the next batch", batch, why))
	return sw
}

// Mark is a Pending sweep taken into batch b.
func Mark(sw payoutv1.SweepStatus, b string) payoutv1.SweepStatus {
	sw.State, sw.Batch = payoutv1.SweepBatched, b
	sw.Message = "in batch " + b
	return sw
}
