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
// deposit addresses per batch.
type Policy struct {
	// Threshold in token base units; nil or zero sweeps every due deposit at once.
	Threshold *big.Int
	MaxAge    time.Duration
	MaxItems  int
}

// Schedule picks the next batch among pending, the Pending sweeps of one network and token:
// the oldest first (by the time each became due, its creation), up to MaxItems, when the
// policy says a batch goes now. MaxItems counts deposit addresses: the sweeps of one address
// go together. When none goes, wait is how long until the oldest reaches
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
	// whole addresses, by their oldest due deposit: the mechanism empties an address at once
	taken := map[string]bool{}
	for i := range sorted {
		if k := addressKey(&sorted[i]); !taken[k] && len(taken) < n {
			taken[k] = true
		}
	}
	for i := range sorted {
		if taken[addressKey(&sorted[i])] {
			batch = append(batch, sorted[i])
		}
	}
	return batch, 0
}

// Ready keeps the pending sweeps whose deposit address can go in a batch: the mechanism moves
// an address's whole balance, so an address goes only once every deposit recorded there (deps,
// the Deposits of the network) has a Pending sweep. A deposit still owed at the same address
// holds the others.
func Ready(pending []payoutv1.Sweep, deps []payoutv1.Deposit) []payoutv1.Sweep {
	recorded, due := map[string]int{}, map[string]int{}
	for i := range deps {
		recorded[deps[i].Namespace+"/"+strings.ToLower(deps[i].Spec.To)]++
	}
	for i := range pending {
		due[addressKey(&pending[i])]++
	}
	var out []payoutv1.Sweep
	for i := range pending {
		if k := addressKey(&pending[i]); due[k] >= recorded[k] {
			out = append(out, pending[i])
		}
	}
	return out
}

func addressKey(sw *payoutv1.Sweep) string {
	return sw.Namespace + "/" + strings.ToLower(sw.Spec.Address)
}

// NewBatch is the SweepBatch of sweeps (one network and token) to the treasury address to: one
// item per deposit address, at most MaxSweepBatch. Its name is fixed by its deposits and how
// often each was released before, so a sweeper that crashed after creating it and before
// marking its sweeps creates the same batch again (and finds it), while a batch of the same
// deposits after a revert gets a new name.
func NewBatch(sweeps []payoutv1.Sweep, to string) *payoutv1.SweepBatch {
	keys := make([]string, 0, len(sweeps))
	var items []payoutv1.SweepItem
	at := map[string]int{}
	for i := range sweeps {
		sw := &sweeps[i]
		k := addressKey(sw)
		j, ok := at[k]
		if !ok {
			if len(items) == payoutv1.MaxSweepBatch {
				continue
			}
			j = len(items)
			at[k] = j
			items = append(items, payoutv1.SweepItem{Namespace: sw.Namespace, Address: strings.ToLower(sw.Spec.Address), Path: sw.Spec.Path, Amount: "0"})
		}
		it := &items[j]
		it.Sweeps = append(it.Sweeps, payoutv1.SweepShare{Name: sw.Name, Amount: sw.Spec.Amount})
		sum, _ := new(big.Int).SetString(it.Amount, 10)
		if a, ok := Amount(sw); ok {
			sum.Add(sum, a)
		}
		it.Amount = sum.String()
		keys = append(keys, sw.Namespace+"/"+sw.Name+"#"+strconv.Itoa(len(sw.Status.ReleasedBatches)))
	}
	for i := range items {
		sort.Slice(items[i].Sweeps, func(a, b int) bool { return items[i].Sweeps[a].Name < items[i].Sweeps[b].Name })
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
	return s != payoutv1.SweepBatchConfirmed && s != payoutv1.SweepBatchReverted && s != payoutv1.SweepBatchExpired
}

// Expired is the status once the chain says the signed transaction can never be included (why):
// nothing moved, and its sweeps are released for a new batch, signed anew.
func Expired(st payoutv1.SweepBatchStatus, why string, now time.Time) payoutv1.SweepBatchStatus {
	st.State, st.ConfirmedAt = payoutv1.SweepBatchExpired, ptr.To(metav1.NewTime(now))
	st.Message = truncate(fmt.Sprintf("the transaction %s can never be included (%s): nothing moved; its deposits are batched again", st.TxHash, why))
	return st
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
func Observed(b *payoutv1.SweepBatch, obs *chain.TxObservation, now time.Time) payoutv1.SweepBatchStatus {
	st := b.Status
	if obs == nil || !obs.Found {
		return st
	}
	st.BlockNumber = obs.BlockNumber
	if obs.Required <= 0 || obs.Confirmations < obs.Required {
		return st
	}
	st.ConfirmedAt = ptr.To(metav1.NewTime(now))
	if obs.Reverted {
		st.State = payoutv1.SweepBatchReverted
		st.Message = fmt.Sprintf("the transaction %s reverted at depth (block %d): nothing moved; its deposits are batched again", st.TxHash, st.BlockNumber)
		return st
	}
	st.State = payoutv1.SweepBatchConfirmed
	st.Moved = moved(b, obs)
	st.Message = fmt.Sprintf("at depth in block %d: moved %d of %d deposit addresses", st.BlockNumber, len(st.Moved), len(b.Spec.Items))
	return st
}

// moved is what obs's token Transfer events carried from each of b's addresses to its treasury,
// in b's token: a fact of the receipt, not of the batch's expectations.
func moved(b *payoutv1.SweepBatch, obs *chain.TxObservation) []payoutv1.SweepMoved {
	sums := map[string]*big.Int{}
	for _, tr := range obs.Transfers {
		from, to := strings.ToLower(tr.From), strings.ToLower(tr.To)
		if tr.Token != b.Spec.Token || to != b.Spec.To || tr.Amount == nil {
			continue
		}
		if sums[from] == nil {
			sums[from] = new(big.Int)
		}
		sums[from].Add(sums[from], tr.Amount)
	}
	var out []payoutv1.SweepMoved
	for _, it := range b.Spec.Items {
		if m := sums[it.Address]; m != nil && m.Sign() > 0 {
			out = append(out, payoutv1.SweepMoved{Address: it.Address, Amount: m.String()})
		}
	}
	return out
}

// Settle is what a settled batch b writes into its sweep sw: Confirmed with the batch's
// transaction and the base units it moved for the deposit, or Pending again with the batch
// released when the transaction reverted or moved nothing from the deposit's address (its
// authorization did not apply; the tokens are still there). The sweeps of an address share
// what the receipt moved in name order, each up to its amount, the first also taking what the
// address held beyond their sum. A sweep that already moved on (another batch, or already
// settled) is left as it is: ok is false.
func Settle(sw *payoutv1.Sweep, b *payoutv1.SweepBatch) (payoutv1.SweepStatus, bool) {
	st := sw.Status
	if st.State != payoutv1.SweepBatched || st.Batch != b.Name {
		return st, false
	}
	switch b.Status.State {
	case payoutv1.SweepBatchConfirmed:
		share, ok := shareOf(sw, b)
		if !ok {
			return Release(st, b.Name, "its batch's transaction moved nothing from "+sw.Spec.Address), true
		}
		st.State, st.To, st.TxHash, st.BlockNumber, st.ConfirmedAt = payoutv1.SweepConfirmed, b.Spec.To, b.Status.TxHash, b.Status.BlockNumber, b.Status.ConfirmedAt
		st.Moved = share.String()
		st.Message = fmt.Sprintf("swept %s base units to %s in %s", st.Moved, b.Spec.To, b.Status.TxHash)
		if a, _ := Amount(sw); share.Cmp(a) != 0 {
			st.Message += fmt.Sprintf(" (its deposit was %s)", sw.Spec.Amount)
		}
		return st, true
	case payoutv1.SweepBatchReverted:
		return Release(st, b.Name, "its batch's transaction reverted"), true
	case payoutv1.SweepBatchExpired:
		return Release(st, b.Name, "its batch's transaction expired unincluded"), true
	}
	return st, false
}

// shareOf is sw's part of what b moved from its address; ok is false when b moved nothing there.
func shareOf(sw *payoutv1.Sweep, b *payoutv1.SweepBatch) (*big.Int, bool) {
	addr := strings.ToLower(sw.Spec.Address)
	left := new(big.Int)
	for _, m := range b.Status.Moved {
		if m.Address == addr {
			left.SetString(m.Amount, 10)
		}
	}
	if left.Sign() <= 0 {
		return nil, false
	}
	for _, it := range b.Spec.Items {
		if it.Namespace != sw.Namespace || it.Address != addr {
			continue
		}
		expected, _ := new(big.Int).SetString(it.Amount, 10)
		extra := new(big.Int).Sub(left, expected)
		for i, s := range it.Sweeps {
			share, ok := new(big.Int).SetString(s.Amount, 10)
			if !ok {
				share = new(big.Int)
			}
			if share.Cmp(left) > 0 {
				share.Set(left)
			}
			if i == 0 && extra.Sign() > 0 {
				share.Add(share, extra)
			}
			left.Sub(left, share)
			if s.Name == sw.Name {
				return share, share.Sign() > 0
			}
		}
	}
	return nil, false
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
