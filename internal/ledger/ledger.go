package ledger

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TokenDecimals is the precision of every token the service takes (transfer.TokenDecimals).
const TokenDecimals = 6

// Invariant names a rule the ledger checks; a Failure says which one does not hold.
type Invariant string

const (
	// CreditedArrived: every log a transfer credits arrived (a deposit record shows it), and
	// the credits of one log add up to no more than it holds. Failing: a transfer counts money
	// the chain never brought.
	CreditedArrived Invariant = "CreditedArrived"
	// SweptArrived: no deposit address was swept of more than it received. Failing: a deposit
	// the ledger does not know of, or a sweep counted twice.
	SweptArrived Invariant = "SweptArrived"
	// RefundOwed: every refund sends back exactly what was owed (the stray deposit, its excess,
	// or the deposit its transfer credited), once. Failing: money sent back that nobody owed.
	RefundOwed Invariant = "RefundOwed"
	// PayoutFunded: every payout the provider took is backed by deposits its transfer credited,
	// at least the amount the customer was asked to send, and that deposit was not also
	// refunded while the payout stands. Failing: fiat paid out of nothing, or paid twice.
	PayoutFunded Invariant = "PayoutFunded"
	// PaidAsQuoted: the provider pays what the quote promised for the amount, to the currency's
	// minor unit. Failing: the recipient got more or less than the customer was told.
	PaidAsQuoted Invariant = "PaidAsQuoted"
	// ChainAgrees: each deposit address holds on chain what the ledger says it holds.
	// Failing: tokens moved that no fact records (a key used outside the service, a missed
	// deposit or sweep).
	ChainAgrees Invariant = "ChainAgrees"
)

// Invariants are every invariant, in the order they are checked (for metrics: each has a series).
var Invariants = []Invariant{CreditedArrived, SweptArrived, RefundOwed, PayoutFunded, PaidAsQuoted, ChainAgrees}

// Failure is an invariant that does not hold, and where.
type Failure struct {
	Invariant Invariant
	// Subject is what it is about: a transfer id, a deposit address, a refund.
	Subject string
	Message string
}

// Report is the ledger of [Since, Until): the flows within it and the balances at both ends.
type Report struct {
	Since, Until time.Time
	// Tokens are the lines per network and token, sorted.
	Tokens []TokenLine
	// Fiat are the lines per payout currency, sorted.
	Fiat []FiatLine
	// Failures are the invariants that do not hold; none when the ledger balances.
	Failures []Failure
}

// Balanced reports whether every invariant holds.
func (r *Report) Balanced() bool { return len(r.Failures) == 0 }

// TokenLine is one network and token, in base units. At the deposit addresses
// Opening + Received = Swept + Closing, and Received = Credited + Overpaid + Stray.
type TokenLine struct {
	Network, Token string
	// Opening and Closing are what the deposit addresses hold at Since and at Until.
	Opening, Closing *big.Int
	// Received is every log that arrived at a deposit address in the period: Credited (counted
	// toward a transfer's amount), Overpaid (the excess of the log that reached it) and Stray
	// (a log that pays no transfer: another wallet, token or network, after the amount or the
	// transfer's end; refundable).
	Received, Credited, Overpaid, Stray *big.Int
	// Swept to the treasury in the period.
	Swept *big.Int
	// Refunded is what the refund wallet sent back in this network and token in the period.
	Refunded *big.Int
	// Direct is v2 deposits, sent to the platform address (nothing to sweep).
	Direct *big.Int
	// OnChain is the chain's balances of the deposit addresses at Until, added up; nil when the
	// chain was not read.
	OnChain *big.Int
}

// FiatLine is one payout currency. Payouts counted by when their intent was recorded.
type FiatLine struct {
	Currency string
	// Payouts the provider took, Pending without its answer yet, Rejected by it.
	Payouts, Pending, Rejected int
	// Quoted is what the quotes promised for the payouts taken, Paid what the provider says it
	// pays, in the currency; Returned what recipients' banks sent back of it.
	Quoted, Paid, Returned decimal.Decimal
	// AmountUSD is what the customers sent for the payouts taken, FeesUSD the fees charged out
	// of it.
	AmountUSD, FeesUSD decimal.Decimal
}

// Build counts facts into the ledger of [since, until) (a zero since: from the first fact) and
// checks its invariants: the balances' at until, the others' on the facts of the period (an
// earlier period's report checked its own). Facts at or after until are left out, so that a
// report of a past period reads the same later.
func Build(f Facts, since, until time.Time) *Report {
	b := &builder{r: &Report{Since: since, Until: until}, since: since, until: until,
		lines: map[[2]string]*TokenLine{}, fiat: map[string]*FiatLine{}, addrs: map[Address]*held{}}
	b.deposits(f)
	b.sweeps(f.Sweeps)
	b.balances(f.Balances, f.ChainNetworks)
	b.refunds(f.Refunds)
	b.payouts(f.Payouts)
	return b.report()
}

type builder struct {
	r            *Report
	since, until time.Time
	lines        map[[2]string]*TokenLine
	fiat         map[string]*FiatLine
	addrs        map[Address]*held

	logs     map[Log]*Deposit
	credited map[Log]*big.Int    // by log, every credit up to until
	byTx     map[string]*big.Int // credited units by transfer
	refunded map[string]bool     // transfers whose credited deposit was refunded
}

// held is one deposit address: what arrived and left before since and before until.
type held struct{ openIn, openOut, in, out *big.Int }

func (b *builder) before(t time.Time) bool { return !b.since.IsZero() && t.Before(b.since) }
func (b *builder) within(t time.Time) bool { return !b.before(t) && t.Before(b.until) }

func (b *builder) line(network, token string) *TokenLine {
	k := [2]string{network, token}
	if l := b.lines[k]; l != nil {
		return l
	}
	l := &TokenLine{Network: network, Token: token}
	for _, p := range []**big.Int{&l.Opening, &l.Closing, &l.Received, &l.Credited, &l.Overpaid, &l.Stray, &l.Swept, &l.Refunded, &l.Direct} {
		*p = new(big.Int)
	}
	b.lines[k] = l
	return l
}

func (b *builder) addr(a Address) *held {
	if h := b.addrs[a]; h != nil {
		return h
	}
	h := &held{new(big.Int), new(big.Int), new(big.Int), new(big.Int)}
	b.addrs[a] = h
	return h
}

func (b *builder) fail(inv Invariant, subject, format string, args ...any) {
	b.r.Failures = append(b.r.Failures, Failure{Invariant: inv, Subject: subject, Message: fmt.Sprintf(format, args...)})
}

// deposits counts the logs that arrived before until, split by what their transfers credited.
func (b *builder) deposits(f Facts) {
	b.logs, b.credited, b.byTx = map[Log]*Deposit{}, map[Log]*big.Int{}, map[string]*big.Int{}
	for i := range f.Deposits {
		d := &f.Deposits[i]
		if d.At.Before(b.until) && b.logs[d.Log] == nil {
			b.logs[d.Log] = d
		}
	}
	for _, c := range f.Credits {
		d := b.logs[c.Log]
		if d == nil {
			if !b.within(c.At) {
				continue // another period's to check
			}
			b.fail(CreditedArrived, c.Transfer, "transfer %s credits %s base units of log %s:%d on %s, which no deposit before %s shows",
				c.Transfer, c.Units, c.TxHash, c.Index, c.Network, b.until.Format(time.RFC3339))
			continue
		}
		add(b.credited, c.Log, c.Units)
		add(b.byTx, c.Transfer, c.Units)
	}
	for _, d := range sortedDeposits(b.logs) {
		l := b.line(d.Network, d.Token)
		credited := orZero(b.credited[d.Log])
		if credited.Cmp(d.Units) > 0 && !b.before(d.At) {
			b.fail(CreditedArrived, d.Transfer, "log %s:%d on %s brought %s base units, and its transfers credit %s",
				d.TxHash, d.Index, d.Network, d.Units, credited)
		}
		if d.Direct {
			if b.within(d.At) {
				l.Direct.Add(l.Direct, d.Units)
			}
			continue
		}
		h := b.addr(AddressKey(d.Network, d.Token, d.Address))
		h.in.Add(h.in, d.Units)
		if b.before(d.At) {
			h.openIn.Add(h.openIn, d.Units)
			continue
		}
		l.Received.Add(l.Received, d.Units)
		switch c := minInt(credited, d.Units); {
		case c.Sign() == 0:
			l.Stray.Add(l.Stray, d.Units)
		default:
			l.Credited.Add(l.Credited, c)
			l.Overpaid.Add(l.Overpaid, new(big.Int).Sub(d.Units, c))
		}
	}
}

// sweeps counts what left the deposit addresses for the treasury before until.
func (b *builder) sweeps(sweeps []Sweep) {
	for _, s := range sweeps {
		if !s.ConfirmedAt.Before(b.until) {
			continue
		}
		h := b.addr(AddressKey(s.Network, s.Token, s.Address))
		h.out.Add(h.out, s.Units)
		if b.before(s.ConfirmedAt) {
			h.openOut.Add(h.openOut, s.Units)
			continue
		}
		l := b.line(s.Network, s.Token)
		l.Swept.Add(l.Swept, s.Units)
	}
	for _, a := range sortedAddrs(b.addrs) {
		h := b.addrs[a]
		l := b.line(a.Network, a.Token)
		l.Opening.Add(l.Opening, new(big.Int).Sub(h.openIn, h.openOut))
		l.Closing.Add(l.Closing, new(big.Int).Sub(h.in, h.out))
		if h.out.Cmp(h.in) > 0 {
			b.fail(SweptArrived, a.Address, "%s %s address %s was swept of %s base units and received %s", a.Network, a.Token, a.Address, h.out, h.in)
		}
	}
}

// balances compares what the chain says each deposit address holds with what the ledger says.
func (b *builder) balances(chain map[Address]*big.Int, read map[string]bool) {
	if chain == nil {
		return
	}
	keyed := map[Address]*big.Int{}
	for a, v := range chain {
		keyed[AddressKey(a.Network, a.Token, a.Address)] = v
	}
	all := map[Address]*held{}
	for a, h := range b.addrs {
		if read == nil || read[a.Network] {
			all[a] = h
		}
	}
	for a := range keyed {
		if all[a] == nil {
			all[a] = &held{in: new(big.Int), out: new(big.Int)}
		}
	}
	for _, a := range sortedAddrs(all) {
		l := b.line(a.Network, a.Token)
		if l.OnChain == nil {
			l.OnChain = new(big.Int)
		}
		onChain := orZero(keyed[a])
		l.OnChain.Add(l.OnChain, onChain)
		if want := new(big.Int).Sub(all[a].in, all[a].out); want.Cmp(onChain) != 0 {
			b.fail(ChainAgrees, a.Address, "%s %s address %s holds %s base units on chain; the ledger says %s", a.Network, a.Token, a.Address, onChain, want)
		}
	}
}

// refunds counts what the refund wallet sent back, and checks each against what was owed.
func (b *builder) refunds(refunds []Refund) {
	seen := map[string]bool{}
	b.refunded = map[string]bool{}
	for _, rf := range refunds {
		if !rf.ConfirmedAt.Before(b.until) || seen[rf.Name] {
			continue
		}
		seen[rf.Name] = true
		if b.within(rf.ConfirmedAt) {
			l := b.line(rf.Network, rf.Token)
			l.Refunded.Add(l.Refunded, rf.Units)
		}
		var owed *big.Int
		if rf.Deposit == nil {
			b.refunded[rf.Transfer] = true
			owed = orZero(b.byTx[rf.Transfer])
		} else if d := b.logs[*rf.Deposit]; d != nil {
			owed = new(big.Int).Sub(d.Units, orZero(b.credited[d.Log]))
		} else {
			b.fail(RefundOwed, rf.Name, "refund %s sent back %s base units of log %s:%d on %s, which no deposit shows",
				rf.Name, rf.Units, rf.Deposit.TxHash, rf.Deposit.Index, rf.Deposit.Network)
			continue
		}
		if owed.Cmp(rf.Units) != 0 {
			b.fail(RefundOwed, rf.Name, "refund %s sent back %s base units; %s were owed", rf.Name, rf.Units, owed)
		}
	}
}

// payouts counts the fiat side, and checks each payout the provider took.
func (b *builder) payouts(payouts []Payout) {
	for _, p := range payouts {
		if !b.within(p.At) {
			continue
		}
		fl := b.fiat[p.Currency]
		if fl == nil {
			fl = &FiatLine{Currency: p.Currency}
			b.fiat[p.Currency] = fl
		}
		switch {
		case p.State == payoutv1.PayoutRejected:
			fl.Rejected++
			continue
		case !p.Answered():
			fl.Pending++
			continue
		}
		fl.Payouts++
		fl.Quoted, fl.Paid = fl.Quoted.Add(p.Quoted), fl.Paid.Add(p.Paid)
		fl.AmountUSD, fl.FeesUSD = fl.AmountUSD.Add(p.AmountUSD), fl.FeesUSD.Add(p.FeesUSD)
		if p.Returned {
			fl.Returned = fl.Returned.Add(p.Paid)
		}
		if !p.Paid.Equal(p.Quoted) {
			b.fail(PaidAsQuoted, p.Transfer, "the provider pays %s %s for transfer %s; its quote promised %s", p.Paid, p.Currency, p.Transfer, p.Quoted)
		}
		need := p.AmountUSD.Shift(TokenDecimals).Ceil().BigInt()
		if got := orZero(b.byTx[p.Transfer]); got.Cmp(need) < 0 {
			b.fail(PayoutFunded, p.Transfer, "transfer %s was paid out for %s USD and credits %s base units of deposits", p.Transfer, p.AmountUSD, got)
		}
		if !p.Returned && b.refunded[p.Transfer] {
			b.fail(PayoutFunded, p.Transfer, "transfer %s was paid out and its deposit refunded", p.Transfer)
		}
	}
}

func (b *builder) report() *Report {
	for _, l := range b.lines {
		b.r.Tokens = append(b.r.Tokens, *l)
	}
	slices.SortFunc(b.r.Tokens, func(x, y TokenLine) int {
		return cmp.Or(cmp.Compare(x.Network, y.Network), cmp.Compare(x.Token, y.Token))
	})
	for _, l := range b.fiat {
		b.r.Fiat = append(b.r.Fiat, *l)
	}
	slices.SortFunc(b.r.Fiat, func(x, y FiatLine) int { return cmp.Compare(x.Currency, y.Currency) })
	slices.SortStableFunc(b.r.Failures, func(x, y Failure) int {
		return cmp.Or(cmp.Compare(slices.Index(Invariants, x.Invariant), slices.Index(Invariants, y.Invariant)), cmp.Compare(x.Subject, y.Subject))
	})
	return b.r
}

func add[K comparable](m map[K]*big.Int, k K, v *big.Int) {
	if m[k] == nil {
		m[k] = new(big.Int)
	}
	m[k].Add(m[k], v)
}

func orZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

func minInt(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

func sortedDeposits(m map[Log]*Deposit) []*Deposit {
	out := make([]*Deposit, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y *Deposit) int {
		return cmp.Or(cmp.Compare(x.Network, y.Network), cmp.Compare(x.TxHash, y.TxHash), cmp.Compare(x.Index, y.Index))
	})
	return out
}

func sortedAddrs(m map[Address]*held) []Address {
	out := make([]Address, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y Address) int {
		return cmp.Or(cmp.Compare(x.Network, y.Network), cmp.Compare(x.Token, y.Token), cmp.Compare(x.Address, y.Address))
	})
	return out
}
