package treasury

import (
	"math/big"
	"sort"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// MaxReleases is how often a deposit is batched again after its batch moved nothing: past it
// the sweep stays Pending, stranded, for an operator to look at (its address, its key path).
const MaxReleases = 3

// Stranded reports whether sw waits for an operator: the sweeper batches it no more.
func Stranded(sw *payoutv1.Sweep) bool {
	return sw.Status.State == payoutv1.SweepPending && len(sw.Status.ReleasedBatches) >= MaxReleases
}

// Summary is where one token's v1 deposits on one network are, in base units: Swept into the
// treasury (what receipts moved), Pending (due, waiting for a batch or in one), Held (at their
// addresses, not due: their transfer has not ended, or they are owed to their sender), and
// Stranded (due, but batches of them moved nothing MaxReleases times, or a write-off was
// refused).
type Summary struct {
	Network                         payoutv1.Network
	Token                           payoutv1.Token
	Swept, Pending, Held, Stranded  *big.Int
	SweptCount, PendingCount, Count int
}

// Summarize sorts deposits by where their tokens are, per network and token, in a stable order.
func Summarize(deposits []payoutv1.Deposit, sweeps []payoutv1.Sweep) []Summary {
	type key struct {
		n payoutv1.Network
		t payoutv1.Token
	}
	byName := map[string]*payoutv1.Sweep{}
	for i := range sweeps {
		byName[sweeps[i].Namespace+"/"+sweeps[i].Name] = &sweeps[i]
	}
	rows := map[key]*Summary{}
	row := func(n payoutv1.Network, t payoutv1.Token) *Summary {
		k := key{n, t}
		if rows[k] == nil {
			rows[k] = &Summary{Network: n, Token: t, Swept: new(big.Int), Pending: new(big.Int), Held: new(big.Int), Stranded: new(big.Int)}
		}
		return rows[k]
	}
	for i := range deposits {
		d := &deposits[i]
		units, ok := new(big.Int).SetString(d.Spec.Amount, 10)
		if !ok {
			continue
		}
		r := row(d.Spec.Network, d.Spec.Token)
		r.Count++
		sw := byName[d.Namespace+"/"+d.Name]
		switch {
		case sw == nil || sw.Status.State == "":
			r.Held.Add(r.Held, units)
		case sw.Status.State == payoutv1.SweepConfirmed:
			moved, ok := new(big.Int).SetString(sw.Status.Moved, 10)
			if !ok {
				moved = units
			}
			r.Swept.Add(r.Swept, moved)
			r.SweptCount++
		case sw.Status.State == payoutv1.SweepRefused || Stranded(sw):
			r.Stranded.Add(r.Stranded, units)
		default:
			r.Pending.Add(r.Pending, units)
			r.PendingCount++
		}
	}
	out := make([]Summary, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Network != out[j].Network {
			return out[i].Network < out[j].Network
		}
		return out[i].Token < out[j].Token
	})
	return out
}
