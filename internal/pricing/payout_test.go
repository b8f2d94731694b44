package pricing

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TestPayoutTargetTable pins the payout of the transfer fixtures' quote (25.00 USD, transfer fee
// 0.50, no service fee, 0.88022588 EUR per USD) for the amounts rule 6 allows, and of a quote
// with every fee.
func TestPayoutTargetTable(t *testing.T) {
	eur := payoutv1.QuoteSnapshot{SourceAmount: "25.00", ServiceFeePercent: "0", TargetCurrency: "EUR",
		USDToTargetRate: "0.88022588", TargetAmount: "21.56", TransferFee: "0.50"}
	charge := payoutv1.Decimal("2.00")
	all := payoutv1.QuoteSnapshot{SourceAmount: "50.00", ProviderCharge: &charge, ServiceFeePercent: "1.0",
		TargetCurrency: "KWD", USDToTargetRate: "0.30512", TargetAmount: "14.386", TransferFee: "0.35"}
	cases := []struct {
		name   string
		q      payoutv1.QuoteSnapshot
		amount payoutv1.USDAmount
		want   payoutv1.Decimal
	}{
		// 24.50 × 0.88022588 = 21.565534..., the quote's own figure
		{"the quoted amount", eur, "25.00", "21.56"},
		// 24.49 × 0.88022588 = 21.556731...: a cent less in pays 0.01 EUR less out
		{"a cent less", eur, "24.99", "21.55"},
		// 24.51 × 0.88022588 = 21.574336...
		{"a cent more", eur, "25.01", "21.57"},
		// service fee 1% of 50.00 = 0.50; 49.99 - 2.00 - 0.50 - 0.35 = 47.14; × 0.30512 = 14.3833568
		{"every fee, three decimals", all, "49.99", "14.383"},
		{"whole-unit amount text", eur, "25", "21.56"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PayoutTarget(c.q, c.amount)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("PayoutTarget(%s) = %s, want %s", c.amount, got, c.want)
			}
		})
	}
}

func TestPayoutTargetRefuses(t *testing.T) {
	eur := payoutv1.QuoteSnapshot{SourceAmount: "25.00", ServiceFeePercent: "0", TargetCurrency: "EUR",
		USDToTargetRate: "0.88022588", TargetAmount: "21.56", TransferFee: "0.50"}
	bad := func(mod func(*payoutv1.QuoteSnapshot)) payoutv1.QuoteSnapshot { q := eur; mod(&q); return q }
	for name, c := range map[string]struct {
		q      payoutv1.QuoteSnapshot
		amount payoutv1.USDAmount
		want   string
	}{
		"two cents less":     {eur, "24.98", "not within 0.01"},
		"two cents more":     {eur, "25.02", "not within 0.01"},
		"unknown currency":   {bad(func(q *payoutv1.QuoteSnapshot) { q.TargetCurrency = "BGN" }), "25.00", "not supported"},
		"unreadable rate":    {bad(func(q *payoutv1.QuoteSnapshot) { q.USDToTargetRate = "" }), "25.00", "usdToTargetRate"},
		"unreadable amount":  {eur, "lots", "amount"},
		"unreadable charge":  {bad(func(q *payoutv1.QuoteSnapshot) { c := payoutv1.Decimal("x"); q.ProviderCharge = &c }), "25.00", "providerCharge"},
		"unreadable percent": {bad(func(q *payoutv1.QuoteSnapshot) { q.ServiceFeePercent = "1,5" }), "25.00", "serviceFeePercent"},
	} {
		if got, err := PayoutTarget(c.q, c.amount); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: PayoutTarget = %q, %v; want an error about %q", name, got, err, c.want)
		}
	}
}

// TestPayoutTargetProperties prices random quotes with Price (random amounts, currencies, fees,
// both fee structures, e-mail recipients, the real and random rate tables and tariffs) and checks
// PayoutTarget on each as a transfer stores it: the quoted amount is paid the quoted target
// exactly, and a cent less or more is paid the exact conversion of the quote's net moved by that
// cent, truncated, never more than a cent's worth away from the quote.
func TestPayoutTargetProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20261130, 9))
	snapshot := snapshotTable(t)
	var rates *RateTable
	moved := 0
	for i := range propertyIterations {
		rates = propertyRates(t, r, i, snapshot, rates)
		in, _ := randomQuoteInput(r, rates)
		q := mustPrice(t, in)
		snap := q.Snapshot()

		got, err := PayoutTarget(snap, snap.SourceAmount)
		if err != nil || got != snap.TargetAmount {
			t.Fatalf("%+v: the quoted amount %s is paid %q (%v), the quote says %s", in, snap.SourceAmount, got, err, snap.TargetAmount)
		}

		minor, _ := MinorUnits(in.TargetCurrency)
		ulp := decimal.New(1, -minor)
		for _, delta := range []decimal.Decimal{cent.Neg(), cent} {
			amount := q.SourceAmount.Add(delta)
			if amount.LessThan(MinAmount) || amount.GreaterThan(MaxAmount) {
				continue
			}
			got, err := PayoutTarget(snap, payoutv1.USDAmount(amount.StringFixed(2)))
			if err != nil {
				t.Fatalf("%+v: amount %s: %v", in, amount, err)
			}
			paid := decimal.RequireFromString(string(got))
			exact := decimal.Max(decimal.Zero, q.NetAmount.Add(delta).Mul(q.UsdToTargetRate))
			if paid.IsNegative() || !paid.Equal(paid.Truncate(minor)) || paid.GreaterThan(exact) || !paid.GreaterThan(exact.Sub(ulp)) {
				t.Fatalf("%+v: amount %s is paid %s, the exact conversion of its net is %s", in, amount, paid, exact)
			}
			bound := q.UsdToTargetRate.Mul(cent).Add(ulp) // a cent converted, plus the truncation
			if paid.Sub(q.Quote.TargetAmount).Abs().GreaterThan(bound) {
				t.Fatalf("%+v: amount %s is paid %s, more than a cent's worth from the quoted %s", in, amount, paid, q.Quote.TargetAmount)
			}
			if delta.IsNegative() && paid.GreaterThan(q.Quote.TargetAmount) || delta.IsPositive() && paid.LessThan(q.Quote.TargetAmount) {
				t.Fatalf("%+v: amount %s is paid %s against the quoted %s: less in must never pay more out", in, amount, paid, q.Quote.TargetAmount)
			}
			if !paid.Equal(q.Quote.TargetAmount) {
				moved++
			}
		}
	}
	// Guard against a generator whose quotes never move with the amount.
	if moved < propertyIterations/2 {
		t.Errorf("only %d payouts differ from their quote by a cent in: the generator misses the case", moved)
	}
}
