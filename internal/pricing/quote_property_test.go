package pricing

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// propertyIterations inputs are drawn per run; the seed is fixed so a failure reproduces.
const propertyIterations = 20000

var cent = decimal.New(1, -2)

// randomCents draws a USD amount in 0.01..1000000, spread over the magnitudes: uniform draws
// alone would almost never test small amounts, where fees dominate and rounding bites.
func randomCents(r *rand.Rand) decimal.Decimal {
	switch r.IntN(6) {
	case 0:
		return decimal.New(1+r.Int64N(500), -2) // 0.01..5.00: fees near or above the amount
	case 1:
		return decimal.New([]int64{1, 2, 99, 100, 101, 9999999, 99999999, 100000000}[r.IntN(8)], -2)
	default:
		digits := 1 + r.IntN(8) // 1..8 digits of cents, i.e. up to 999999.99
		return decimal.New(1+r.Int64N(pow10(digits)-1), -2)
	}
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// randomPercent draws 0 a quarter of the time, else 0.001..maxThousandths/1000 with up to three
// decimals.
func randomPercent(r *rand.Rand, maxThousandths int64) decimal.Decimal {
	if r.IntN(4) == 0 {
		return decimal.Zero
	}
	return decimal.New(1+r.Int64N(maxThousandths), -3)
}

func randomCorridor(r *rand.Rand) CorridorFees {
	return CorridorFees{
		Rail:                 "random",
		FXPercent:            randomPercent(r, 3000),
		PayoutFixed:          decimal.New(r.Int64N(301), -2),
		PayoutPercent:        randomPercent(r, 1000),
		ProviderCharge:       decimal.New(r.Int64N(4)*75, -2),
		DeliveryBusinessDays: r.IntN(5),
	}
}

// randomRates builds a table with rates from about 0.1 to 30000 carrying 8 decimals.
func randomRates(t *testing.T, r *rand.Rand) *RateTable {
	m := make(map[string]decimal.Decimal)
	for _, c := range Currencies() {
		m[c] = decimal.New(10_000_000+r.Int64N(3_000_000_000_000), -8)
	}
	m["USD"] = decimal.New(1, 0)
	tab, err := NewRateTable(m, wednesday, "random")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// propertyRates is the rate table of iteration i of a property test, given the one before: the
// snapshot, replaced by a fresh random table for every other thousand iterations.
func propertyRates(t *testing.T, r *rand.Rand, i int, snapshot, rates *RateTable) *RateTable {
	switch {
	case i%2000 == 1000:
		return randomRates(t, r)
	case i%1000 == 0:
		return snapshot
	}
	return rates
}

// randomQuoteInput draws the input of a quote priced with rates: an amount, a currency, an
// account fee, either fee structure, sometimes an e-mail recipient, a fixed fee half the time and
// a random tariff half the time. It returns the corridor the quote is priced with.
func randomQuoteInput(r *rand.Rand, rates *RateTable) (QuoteInput, CorridorFees) {
	codes := Currencies()
	cur := codes[r.IntN(len(codes))]
	in := QuoteInput{
		SourceAmount:      randomCents(r),
		TargetCurrency:    cur,
		ServiceFeePercent: randomPercent(r, 5000),
		V2Offloader:       r.IntN(3) == 0,
		EmailRecipient:    r.IntN(4) == 0,
		Rates:             rates,
		Now:               wednesday.Add(time.Duration(r.Int64N(int64(14 * 24 * time.Hour)))),
	}
	if r.IntN(2) == 0 {
		in.ServiceFeeFixed = decimal.New(r.Int64N(500), -2)
	}
	corridor := defaultTariff[cur]
	if r.IntN(2) == 0 {
		corridor = randomCorridor(r)
		in.Tariff = Tariff{cur: corridor}
	}
	return in, corridor
}

// TestPriceProperties checks every invariant of Price on random inputs: random amounts, all
// currencies, random account fees, both flags, the real and random rate tables, the default and
// random tariffs.
func TestPriceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20260929, 81))
	snapshot := snapshotTable(t)
	var rates *RateTable
	checked, delivered := 0, 0
	for i := range propertyIterations {
		rates = propertyRates(t, r, i, snapshot, rates)
		in, corridor := randomQuoteInput(r, rates)
		q := mustPrice(t, in)
		checkQuoteInvariants(t, in, corridor, q)
		checked++
		if q.Quote.TargetAmount.IsPositive() {
			delivered++
		}

		// One more cent never delivers less.
		if next := in.SourceAmount.Add(cent); next.LessThanOrEqual(MaxAmount) {
			in2 := in
			in2.SourceAmount = next
			if q2 := mustPrice(t, in2); q2.Quote.TargetAmount.LessThan(q.Quote.TargetAmount) {
				t.Errorf("%+v: %s USD delivers %s, one cent more delivers %s", in, in.SourceAmount, q.Quote.TargetAmount, q2.Quote.TargetAmount)
			}
		}
		// An e-mail recipient never receives less than a bank recipient.
		if !in.EmailRecipient {
			in3 := in
			in3.EmailRecipient = true
			if q3 := mustPrice(t, in3); q3.Quote.TargetAmount.LessThan(q.Quote.TargetAmount) {
				t.Errorf("%+v: e-mail recipient gets %s, bank recipient %s", in, q3.Quote.TargetAmount, q.Quote.TargetAmount)
			}
		}
		if t.Failed() {
			t.Fatalf("stopping after the first failing input (iteration %d)", i)
		}
	}
	// Guard against a generator that never reaches one side of the zero-target boundary.
	if delivered < checked/2 || delivered == checked {
		t.Errorf("%d of %d quotes deliver something: the generator does not cover both cases", delivered, checked)
	}
}

func mustPrice(t *testing.T, in QuoteInput) *QuoteResult {
	t.Helper()
	q, err := Price(in)
	if err != nil {
		t.Fatalf("Price(%+v): %v", in, err)
	}
	return q
}

func checkQuoteInvariants(t *testing.T, in QuoteInput, corridor CorridorFees, q *QuoteResult) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s %s (pct %s fixed %s v2 %v email %v): "+format,
			append([]any{in.SourceAmount, in.TargetCurrency, in.ServiceFeePercent, in.ServiceFeeFixed, in.V2Offloader, in.EmailRecipient}, args...)...)
	}
	s := in.SourceAmount
	wholeCents := func(d decimal.Decimal) bool { return !d.IsNegative() && d.Equal(d.Truncate(2)) }

	if !q.SourceAmount.Equal(s) || q.TargetCurrency != in.TargetCurrency {
		fail("echo: sourceAmount %s targetCurrency %s", q.SourceAmount, q.TargetCurrency)
	}
	if rate, _ := in.Rates.Rate(in.TargetCurrency); !q.UsdToTargetRate.Equal(rate) {
		fail("usdToTargetRate %s, table %s", q.UsdToTargetRate, rate)
	}

	// Service fee percent and the v2 fee structure.
	wantPct := in.ServiceFeePercent
	if in.V2Offloader {
		wantPct = wantPct.Add(decimal.RequireFromString("0.2"))
	}
	if !q.ServiceFeePercent.Equal(wantPct) {
		fail("serviceFeePercent %s, want %s", q.ServiceFeePercent, wantPct)
	}
	provider := decimal.Zero
	switch {
	case in.V2Offloader:
		if q.ProviderCharge != nil || q.ServiceFeeFixed == nil || !q.ServiceFeeFixed.IsZero() {
			fail("v2: providerCharge %s serviceFeeFixed %s, want absent and 0", fmtPtr(q.ProviderCharge), fmtPtr(q.ServiceFeeFixed))
		}
	default:
		if corridor.ProviderCharge.IsZero() != (q.ProviderCharge == nil) ||
			q.ProviderCharge != nil && !q.ProviderCharge.Equal(corridor.ProviderCharge) {
			fail("providerCharge %s, corridor %s", fmtPtr(q.ProviderCharge), corridor.ProviderCharge)
		}
		if q.ProviderCharge != nil {
			provider = *q.ProviderCharge
		}
		if in.ServiceFeeFixed.IsZero() != (q.ServiceFeeFixed == nil) ||
			q.ServiceFeeFixed != nil && !q.ServiceFeeFixed.Equal(in.ServiceFeeFixed) {
			fail("serviceFeeFixed %s, configured %s", fmtPtr(q.ServiceFeeFixed), in.ServiceFeeFixed)
		}
	}

	// Service fee: the exact value rounded half-up, the same as the fee endpoint's.
	exactSvc := s.Mul(wantPct).Div(decimal.New(100, 0))
	if !wholeCents(q.ServiceFeeAmount) || q.ServiceFeeAmount.Sub(exactSvc).Abs().GreaterThan(decimal.New(5, -3)) {
		fail("service fee %s, exact %s", q.ServiceFeeAmount, exactSvc)
	}
	if pf, err := PlatformFee(s, wantPct); err != nil || !pf.Equal(q.ServiceFeeAmount) {
		fail("service fee %s, PlatformFee %s (%v)", q.ServiceFeeAmount, pf, err)
	}

	// Transfer fee and its breakdown.
	b := q.Quote
	nulls := 0
	for _, p := range []*decimal.Decimal{b.FeeFxPercent, b.FeeFxAmount, b.FeePayoutAmount} {
		if p == nil {
			nulls++
		}
	}
	exactFX := s.Mul(corridor.FXPercent).Div(decimal.New(100, 0))
	exactPayout := corridor.PayoutFixed.Add(s.Mul(corridor.PayoutPercent).Div(decimal.New(100, 0)))
	if in.EmailRecipient {
		if nulls != 3 || !b.TransferFee.IsZero() {
			fail("e-mail: transferFee %s, breakdown nulls %d, want 0 and 3", b.TransferFee, nulls)
		}
		exactFX, exactPayout = decimal.Zero, decimal.Zero
	} else {
		if nulls != 0 {
			fail("breakdown has %d nulls, want none", nulls)
		} else {
			if !b.FeeFxAmount.Add(*b.FeePayoutAmount).Equal(b.TransferFee) {
				fail("feeFxAmount %s + feePayoutAmount %s != transferFee %s", b.FeeFxAmount, b.FeePayoutAmount, b.TransferFee)
			}
			if !b.FeeFxPercent.Equal(corridor.FXPercent) {
				fail("feeFxPercent %s, corridor %s", b.FeeFxPercent, corridor.FXPercent)
			}
			if !wholeCents(*b.FeeFxAmount) || !wholeCents(*b.FeePayoutAmount) ||
				!b.FeeFxAmount.Sub(exactFX).Abs().LessThan(cent) || !b.FeePayoutAmount.Sub(exactPayout).Abs().LessThan(cent) {
				fail("fx %s (exact %s) payout %s (exact %s): not whole cents within a cent", b.FeeFxAmount, exactFX, b.FeePayoutAmount, exactPayout)
			}
		}
	}

	// Everything deducted is the exact total rounded once, plus the provider charge.
	deducted := provider.Add(q.ServiceFeeAmount).Add(b.TransferFee)
	if want := provider.Add(exactSvc.Add(exactFX).Add(exactPayout).Round(2)); !deducted.Equal(want) {
		fail("deductions %s, want %s", deducted, want)
	}
	net := s.Sub(deducted)
	if !q.NetAmount.Equal(net) {
		fail("NetAmount %s, want %s", q.NetAmount, net)
	}

	// Target amount: the net converted, truncated to the currency's minor units.
	minor, _ := MinorUnits(in.TargetCurrency)
	ta := b.TargetAmount
	if ta.IsNegative() || !ta.Equal(ta.Truncate(minor)) {
		fail("targetAmount %s is negative or finer than %d decimals", ta, minor)
	}
	exactTarget := decimal.Max(decimal.Zero, net.Mul(q.UsdToTargetRate))
	if ta.GreaterThan(exactTarget) || !ta.GreaterThan(exactTarget.Sub(decimal.New(1, -minor))) {
		fail("targetAmount %s, exact conversion of the net %s", ta, exactTarget)
	}
	if ceiling := s.Mul(q.UsdToTargetRate).Mul(decimal.RequireFromString("1.01")).Add(cent); ta.GreaterThan(ceiling) {
		fail("targetAmount %s above the conformance ceiling %s", ta, ceiling)
	}
	if (q.CheckDeliverable("amount") == nil) != ta.IsPositive() {
		fail("CheckDeliverable disagrees with targetAmount %s", ta)
	}

	// Delivery estimate: not before the quote, at most a week for the corridors in use.
	if d := b.EstimatedDelivery.Sub(in.Now); d <= 0 || d > 7*24*time.Hour || b.EstimatedDelivery.Location() != time.UTC {
		fail("estimatedDelivery %s for a quote at %s", b.EstimatedDelivery, in.Now)
	}
}
