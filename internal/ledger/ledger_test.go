package ledger

import (
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func day(n int) time.Time { return t0.AddDate(0, 0, n) }

func n(v int64) *big.Int { return big.NewInt(v) }

const (
	addrA = "0xAAAA000000000000000000000000000000000001"
	addrB = "0xBBBB000000000000000000000000000000000002"
)

func deposit(tx string, addr, transfer string, units int64, at time.Time) Deposit {
	return Deposit{Log: LogOf("base", tx, 0), Token: "usdc", Address: addr, Transfer: transfer, Units: n(units), At: at}
}

func credit(tx, transfer string, units int64) Credit {
	return Credit{Log: LogOf("base", tx, 0), Transfer: transfer, Units: n(units), At: day(2)}
}

func paid(transfer, amount, quoted, got string) Payout {
	return Payout{Transfer: transfer, Currency: "EUR", State: payoutv1.PayoutCompleted, AmountUSD: decimal.RequireFromString(amount),
		FeesUSD: decimal.RequireFromString("1.50"), Quoted: decimal.RequireFromString(quoted), Paid: decimal.RequireFromString(got), At: day(2)}
}

// balanced is a month of one network: transfer t1 paid exactly (100 USDC), t2 overpaid by 5
// and paid, a stray of 7 from another wallet refunded, t1's address swept; the chain agrees.
func balanced() Facts {
	stray := LogOf("base", "0xs1", 0)
	return Facts{
		Deposits: []Deposit{
			deposit("0xd1", addrA, "t1", 100_000_000, day(1)),
			deposit("0xd2", addrB, "t2", 105_000_000, day(2)),
			deposit("0xs1", addrB, "t2", 7_000_000, day(3)),
		},
		Credits: []Credit{credit("0xd1", "t1", 100_000_000), credit("0xd2", "t2", 100_000_000)},
		Refunds: []Refund{{Name: "t2-strayref", Transfer: "t2", Deposit: &stray, Network: "base", Token: "usdc", Units: n(7_000_000),
			TxHash: "0xr1", ConfirmedAt: day(4)}},
		Sweeps:  []Sweep{{Network: "base", Token: "usdc", Address: addrA, Units: n(100_000_000), TxHash: "0xw1", ConfirmedAt: day(5)}},
		Payouts: []Payout{paid("t1", "100.00", "91.27", "91.27"), paid("t2", "100.00", "91.27", "91.27")},
		Balances: map[Address]*big.Int{
			{Network: "base", Token: "usdc", Address: addrA}: n(0),
			{Network: "base", Token: "usdc", Address: addrB}: n(112_000_000),
		},
	}
}

func TestBuild(t *testing.T) {
	cases := map[string]struct {
		facts        func(f *Facts)
		since, until time.Time
		line         *TokenLine // base/usdc, when checked
		fails        []Invariant
	}{
		"balances": {
			line: &TokenLine{Network: "base", Token: "usdc", Opening: n(0), Received: n(212_000_000), Credited: n(200_000_000),
				Overpaid: n(5_000_000), Stray: n(7_000_000), Swept: n(100_000_000), Closing: n(112_000_000), Refunded: n(7_000_000),
				Direct: n(0), OnChain: n(112_000_000)},
		},
		"a period reads its opening balance from what came before": {
			since: day(2), until: day(5),
			facts: func(f *Facts) {
				f.Balances = nil // the chain's balances are today's, not the period's end's
			},
			line: &TokenLine{Network: "base", Token: "usdc", Opening: n(100_000_000), Received: n(112_000_000), Credited: n(100_000_000),
				Overpaid: n(5_000_000), Stray: n(7_000_000), Swept: n(0), Closing: n(212_000_000), Refunded: n(7_000_000), Direct: n(0)},
		},
		"a missing cent: the provider pays a cent less than the quote": {
			facts: func(f *Facts) { f.Payouts[1].Paid = decimal.RequireFromString("91.26") },
			fails: []Invariant{PaidAsQuoted},
		},
		"a deposit address holds one base unit less on chain": {
			facts: func(f *Facts) {
				f.Balances[Address{Network: "base", Token: "usdc", Address: addrB}] = n(111_999_999)
			},
			fails: []Invariant{ChainAgrees},
		},
		"tokens at an address the ledger has never seen": {
			facts: func(f *Facts) {
				f.Balances[Address{Network: "base", Token: "usdc", Address: "0xcccc000000000000000000000000000000000003"}] = n(1)
			},
			fails: []Invariant{ChainAgrees},
		},
		"a network whose balances were not read is not compared": {
			facts: func(f *Facts) {
				f.Deposits = append(f.Deposits, Deposit{Log: LogOf("tron", "0xt1", 0), Token: "usdt", Address: "TXYZ", Transfer: "t4",
					Units: n(5), At: day(2)})
				f.ChainNetworks = map[string]bool{"base": true}
			},
		},
		"EVM addresses compare in any case": {
			facts: func(f *Facts) {
				delete(f.Balances, Address{Network: "base", Token: "usdc", Address: addrB})
				f.Balances[Address{Network: "base", Token: "usdc", Address: "0xbbbb000000000000000000000000000000000002"}] = n(112_000_000)
			},
		},
		"a sweep of more than the address received": {
			facts: func(f *Facts) {
				f.Sweeps = append(f.Sweeps, Sweep{Network: "base", Token: "usdc", Address: addrA, Units: n(1), TxHash: "0xw2", ConfirmedAt: day(6)})
				f.Balances = nil
			},
			fails: []Invariant{SweptArrived},
		},
		"a credit of a log no deposit shows": {
			facts: func(f *Facts) { f.Credits = append(f.Credits, credit("0xghost", "t3", 1)) },
			fails: []Invariant{CreditedArrived},
		},
		"a credit of a log no deposit shows, in another period": {
			since: day(3), until: day(30),
			facts: func(f *Facts) {
				f.Credits = append(f.Credits, credit("0xghost", "t3", 1))
				f.Payouts = nil
			},
		},
		"credits of more than the log brought": {
			facts: func(f *Facts) { f.Credits[1].Units = n(105_000_001) },
			fails: []Invariant{CreditedArrived},
		},
		"a stray refunded for more than it brought": {
			facts: func(f *Facts) { f.Refunds[0].Units = n(7_000_001) },
			fails: []Invariant{RefundOwed},
		},
		"the excess of an overpayment refunded": {
			facts: func(f *Facts) {
				ex := LogOf("base", "0xd2", 0)
				f.Refunds = append(f.Refunds, Refund{Name: "t2-excess", Transfer: "t2", Deposit: &ex, Network: "base", Token: "usdc",
					Units: n(5_000_000), TxHash: "0xr2", ConfirmedAt: day(4)})
			},
			line: &TokenLine{Network: "base", Token: "usdc", Opening: n(0), Received: n(212_000_000), Credited: n(200_000_000),
				Overpaid: n(5_000_000), Stray: n(7_000_000), Swept: n(100_000_000), Closing: n(112_000_000), Refunded: n(12_000_000),
				Direct: n(0), OnChain: n(112_000_000)},
		},
		"a payout whose deposit was also refunded": {
			facts: func(f *Facts) {
				f.Refunds = append(f.Refunds, Refund{Name: "t1", Transfer: "t1", Network: "base", Token: "usdc", Units: n(100_000_000),
					TxHash: "0xr3", ConfirmedAt: day(4)})
			},
			fails: []Invariant{PayoutFunded},
		},
		"a payout of more than its transfer credited": {
			facts: func(f *Facts) { f.Payouts[0].AmountUSD = decimal.RequireFromString("100.01") },
			fails: []Invariant{PayoutFunded},
		},
		"a rejected payout pays nothing and owes no quote": {
			facts: func(f *Facts) {
				f.Payouts[1].State, f.Payouts[1].Paid = payoutv1.PayoutRejected, decimal.Zero
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := balanced()
			if tc.facts != nil {
				tc.facts(&f)
			}
			until := tc.until
			if until.IsZero() {
				until = day(30)
			}
			r := Build(f, tc.since, until)
			var got []Invariant
			for _, fl := range r.Failures {
				got = append(got, fl.Invariant)
				t.Logf("%s %s: %s", fl.Invariant, fl.Subject, fl.Message)
			}
			if !reflect.DeepEqual(got, tc.fails) {
				t.Errorf("failures %v, want %v", got, tc.fails)
			}
			if r.Balanced() != (len(tc.fails) == 0) {
				t.Errorf("Balanced() = %v with failures %v", r.Balanced(), got)
			}
			for _, l := range r.Tokens {
				if sum := new(big.Int).Add(l.Opening, l.Received); sum.Cmp(new(big.Int).Add(l.Swept, l.Closing)) != 0 {
					t.Errorf("%s %s: opening %s + received %s != swept %s + closing %s", l.Network, l.Token, l.Opening, l.Received, l.Swept, l.Closing)
				}
				if sum := new(big.Int).Add(l.Credited, l.Overpaid); sum.Add(sum, l.Stray).Cmp(l.Received) != 0 {
					t.Errorf("%s %s: credited + overpaid + stray != received %s", l.Network, l.Token, l.Received)
				}
			}
			if tc.line != nil {
				if len(r.Tokens) != 1 || !reflect.DeepEqual(r.Tokens[0], *tc.line) {
					t.Errorf("lines %+v, want %+v", r.Tokens, *tc.line)
				}
			}
		})
	}
}

func TestBuildFiat(t *testing.T) {
	f := balanced()
	f.Payouts = append(f.Payouts,
		Payout{Transfer: "t9", Currency: "GBP", State: payoutv1.PayoutRequested, AmountUSD: decimal.RequireFromString("10"), At: day(3)},
		Payout{Transfer: "t8", Currency: "EUR", State: payoutv1.PayoutCompleted, Returned: true, AmountUSD: decimal.RequireFromString("0"),
			Quoted: decimal.RequireFromString("5.00"), Paid: decimal.RequireFromString("5.00"), At: day(3)},
		Payout{Transfer: "t7", Currency: "EUR", State: payoutv1.PayoutCompleted, At: day(40)}, // after the period
	)
	r := Build(f, time.Time{}, day(30))
	want := []FiatLine{
		{Currency: "EUR", Payouts: 3, Quoted: decimal.RequireFromString("187.54"), Paid: decimal.RequireFromString("187.54"),
			Returned: decimal.RequireFromString("5"), AmountUSD: decimal.RequireFromString("200"), FeesUSD: decimal.RequireFromString("3")},
		{Currency: "GBP", Pending: 1},
	}
	if len(r.Fiat) != len(want) {
		t.Fatalf("fiat lines %+v, want %+v", r.Fiat, want)
	}
	for i, w := range want {
		g := r.Fiat[i]
		if g.Currency != w.Currency || g.Payouts != w.Payouts || g.Pending != w.Pending || g.Rejected != w.Rejected ||
			!g.Quoted.Equal(w.Quoted) || !g.Paid.Equal(w.Paid) || !g.Returned.Equal(w.Returned) ||
			!g.AmountUSD.Equal(w.AmountUSD) || !g.FeesUSD.Equal(w.FeesUSD) {
			t.Errorf("fiat line %d: %+v, want %+v", i, g, w)
		}
	}
	if !r.Balanced() {
		t.Errorf("failures: %+v", r.Failures)
	}
}
