package ledger

import (
	"math/big"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Objects are the stored objects the facts come from, live or archived alike: a transfer
// archived with its Deposit objects and its Refund reads as it did in the API server. The first
// of two copies of one object (a transfer archived and not yet deleted) is taken, so the caller
// lists the live ones first.
type Objects struct {
	Transfers []payoutv1.Transfer
	Deposits  []payoutv1.Deposit
	Refunds   []payoutv1.Refund
	// Sweeps are the sweeper's records (see gather.Sweeps).
	Sweeps []Sweep
}

// FactsOf reads the ledger's facts from the stored objects:
//   - every Deposit object is a log received at a deposit address (the Deposit objects are the
//     whole record: a transfer's status lists only its newest strays);
//   - a transfer's status.deposit, once confirmed, is its credits (each part, or the deposit);
//     a v2 transfer's is also its deposit, sent to the platform address, unless its hash was
//     released (its transaction pays another transfer, or none);
//   - a Refund at Confirmed is a refund; a transfer's status records the refunds whose Refund
//     object is gone (its deposit's in status.refund, its strays' in status.strayDeposits);
//   - status.payout is the payout, priced by its quote snapshot.
func FactsOf(o Objects) Facts {
	var f Facts
	transfers := map[string]*payoutv1.Transfer{}
	for i := range o.Transfers {
		t := &o.Transfers[i]
		if transfers[t.Name] != nil {
			continue
		}
		transfers[t.Name] = t
		f.Credits = append(f.Credits, credits(t)...)
		if d, ok := direct(t); ok {
			f.Deposits = append(f.Deposits, d)
		}
		if p, ok := payout(t); ok {
			f.Payouts = append(f.Payouts, p)
		}
	}
	seen := map[Log]bool{}
	for i := range o.Deposits {
		d := &o.Deposits[i].Spec
		l := LogOf(string(d.Network), d.TxHash, d.LogIndex)
		if seen[l] {
			continue
		}
		seen[l] = true
		f.Deposits = append(f.Deposits, Deposit{Log: l, Token: string(d.Token), Address: d.To, Transfer: d.Transfer,
			Units: units(d.Amount), At: d.BlockTime.Time})
	}
	refunded := map[string]bool{}
	for i := range o.Refunds {
		rf := &o.Refunds[i]
		if rf.Status.State != payoutv1.RefundConfirmed || refunded[rf.Name] {
			continue
		}
		refunded[rf.Name] = true
		r := Refund{Name: rf.Name, Transfer: rf.Spec.Transfer, Network: string(rf.Status.Network), Token: string(rf.Status.Token),
			Units: units(rf.Status.Amount), TxHash: rf.Status.TxHash, ConfirmedAt: timeOf(rf.Status.ConfirmedAt)}
		if d := rf.Spec.Deposit; d != nil {
			l := LogOf(string(d.Network), d.TxHash, d.LogIndex)
			r.Deposit = &l
		}
		f.Refunds = append(f.Refunds, r)
	}
	for _, name := range sortedKeys(transfers) {
		f.Refunds = append(f.Refunds, recordedRefunds(transfers[name], refunded)...)
	}
	f.Sweeps = o.Sweeps
	return f
}

// credits are what t counted toward its amount.
func credits(t *payoutv1.Transfer) []Credit {
	dep := t.Status.Deposit
	if dep == nil || dep.ConfirmedAt == nil || (t.Spec.Method == payoutv1.TransferV2 && transfer.Released(t)) {
		return nil
	}
	at := dep.ConfirmedAt.Time
	if len(dep.Parts) == 0 {
		return []Credit{{Log: LogOf(string(dep.Network), dep.TxHash, dep.LogIndex), Transfer: t.Name, Units: units(dep.Amount), At: at}}
	}
	out := make([]Credit, 0, len(dep.Parts))
	for _, p := range dep.Parts {
		out = append(out, Credit{Log: LogOf(string(dep.Network), p.TxHash, p.LogIndex), Transfer: t.Name, Units: units(p.Amount), At: at})
	}
	return out
}

// direct is a v2 transfer's deposit, sent to the platform address (no Deposit object records it).
func direct(t *payoutv1.Transfer) (Deposit, bool) {
	dep := t.Status.Deposit
	if t.Spec.Method != payoutv1.TransferV2 || dep == nil || dep.ConfirmedAt == nil || transfer.Released(t) {
		return Deposit{}, false
	}
	at := dep.ConfirmedAt.Time
	if dep.BlockTime != nil {
		at = dep.BlockTime.Time
	}
	return Deposit{Log: LogOf(string(dep.Network), dep.TxHash, dep.LogIndex), Token: string(dep.Token), Address: t.Spec.DepositAddress,
		Transfer: t.Name, Units: units(dep.Amount), At: at, Direct: true}, true
}

// payout is t's payout as the provider answered it, against what its quote promised.
func payout(t *payoutv1.Transfer) (Payout, bool) {
	p := t.Status.Payout
	if p == nil {
		return Payout{}, false
	}
	q := t.Spec.Quote
	out := Payout{Transfer: t.Name, Currency: string(q.TargetCurrency), State: p.State, Returned: p.Returned != nil,
		AmountUSD: dec(string(t.Spec.Amount)), At: p.RequestedAt.Time}
	// a quote that cannot be read promises nothing: PaidAsQuoted then names the transfer
	if target, err := pricing.PayoutTarget(q, t.Spec.Amount); err == nil {
		out.Quoted = dec(string(target))
	}
	out.FeesUSD, _ = pricing.QuotedFees(q)
	if out.Answered() {
		out.Paid = dec(string(p.TargetAmount))
	}
	return out, true
}

// recordedRefunds are the confirmed refunds t's status records whose Refund object is not among
// the objects (deleted once recorded, or not archived: the archive keeps a transfer's own Refund
// and the status of its strays). A stray's refund sent what the stray's listing says.
func recordedRefunds(t *payoutv1.Transfer, objects map[string]bool) []Refund {
	var out []Refund
	if r := t.Status.Refund; r != nil && !objects[t.Name] {
		var network, token string
		if dep := t.Status.Deposit; dep != nil {
			network, token = string(dep.Network), string(dep.Token)
		}
		out = append(out, Refund{Name: t.Name, Transfer: t.Name, Network: network, Token: token, Units: units(r.Amount),
			TxHash: r.TxHash, ConfirmedAt: r.ConfirmedAt.Time})
	}
	for _, sd := range t.Status.StrayDeposits {
		if sd.Refund == nil {
			continue
		}
		network := sd.Network
		if network == "" {
			network = t.Spec.SourceNetwork
		}
		ref := payoutv1.DepositRef{Network: network, TxHash: sd.TxHash, LogIndex: sd.LogIndex}
		name := payoutv1.StrayRefundName(t.Name, ref)
		if objects[name] {
			continue
		}
		l := LogOf(string(network), sd.TxHash, sd.LogIndex)
		out = append(out, Refund{Name: name, Transfer: t.Name, Deposit: &l, Network: string(sd.Refund.Network), Token: string(sd.Refund.Token),
			Units: units(sd.Amount), TxHash: sd.Refund.TxHash, ConfirmedAt: sd.Refund.ConfirmedAt.Time})
	}
	return out
}

func units(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return new(big.Int)
	}
	return v
}

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
