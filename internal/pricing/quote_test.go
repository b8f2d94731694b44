package pricing

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// TestPriceTable pins exact quotes on the embedded snapshot and the default tariff. The expected
// figures were computed independently (Python decimal, ROUND_HALF_UP for fees, ROUND_DOWN for
// the target) and a few by hand, noted in the comments.
func TestPriceTable(t *testing.T) {
	cases := []struct {
		name              string
		amount, cur, pct  string
		fixed             string
		v2, email         bool
		wantPct           string
		wantSvc           string
		wantFx, wantPay   string // "" = null breakdown
		wantFee           string
		wantProvider      string // "" = absent
		wantFixed         string // "" = absent
		wantTarget        string
		wantDeliveryHours int
	}{
		// By hand: FX 0.35% of 100 = 0.35, payout 0.25, fee 0.60; 99.40 × 0.88022588 = 87.4944...
		{"EUR 100", "100.00", "EUR", "0", "0", false, false, "0", "0", "0.35", "0.25", "0.60", "", "", "87.49", 24},
		{"EUR smallest amount, fees exceed it", "0.01", "EUR", "0", "0", false, false, "0", "0", "0", "0.25", "0.25", "", "", "0", 24},
		{"EUR largest amount", "1000000", "EUR", "1.5", "0", false, false, "1.5", "15000", "3500", "0.25", "3500.25", "", "", "863941.48", 24},
		{"JPY, 0 decimals", "25.00", "JPY", "1.5", "0", false, false, "1.5", "0.38", "0.10", "0.60", "0.70", "", "", "3766", 24},
		{"KWD, 3 decimals", "1234.56", "KWD", "0.75", "0", false, false, "0.75", "9.26", "7.41", "0.80", "8.21", "", "", "375.730", 24},
		{"BHD smallest amount", "0.01", "BHD", "0", "0", false, false, "0", "0", "0", "0.80", "0.80", "", "", "0", 24},
		{"USD, no FX", "25.00", "USD", "0", "0", false, false, "0", "0", "0", "0.50", "0.50", "", "", "24.50", 24},
		{"GBP instant", "40.00", "GBP", "0", "0", false, false, "0", "0", "0.14", "0.25", "0.39", "", "", "29.92", 1},
		{"GBP e-mail recipient", "40.00", "GBP", "0", "0", false, true, "0", "0", "", "", "0", "", "", "30.21", 1},
		{"ALL SWIFT with provider charge and fixed fee", "50.00", "ALL", "1.0", "0.99", false, false, "1.0", "0.50", "0.50", "1.00", "1.50", "2.00", "0.99", "3726.76", 5 * 24},
		{"ALL v2 offloader", "50.00", "ALL", "1.0", "0.99", true, false, "1.20", "0.60", "0.50", "1.00", "1.50", "", "0", "3880.69", 5 * 24},
		{"EUR v2 offloader, spec example", "30.00", "EUR", "1.5", "0", true, false, "1.7", "0.51", "0.11", "0.25", "0.36", "", "0", "25.64", 24},
		{"EUR plain, spec example", "30.00", "EUR", "1.5", "0", false, false, "1.5", "0.45", "0.11", "0.25", "0.36", "", "", "25.69", 24},
		{"CNY with a payout percentage", "333.33", "CNY", "0.333", "0", false, false, "0.333", "1.11", "2.33", "2.17", "4.50", "", "", "2198.27", 24},
		{"VND near the top", "999999.99", "VND", "2.5", "0", false, false, "2.5", "25000", "9000", "0.40", "9000.40", "", "", "25065533297", 1},
		{"KRW top", "1000000", "KRW", "0", "0", false, false, "0", "0", "6000", "0.60", "6000.60", "", "", "1350038705", 1},
		// By hand: service 1.5% of 1.00 = 0.015, exactly half a cent, rounds up to 0.02.
		{"half cent rounds up", "1.00", "EUR", "1.5", "0", false, false, "1.5", "0.02", "0", "0.25", "0.25", "", "", "0.64", 24},
		{"PHP, fee endpoint example", "20.00", "PHP", "1.5", "0", false, false, "1.5", "0.30", "0.14", "0.30", "0.44", "", "", "1204.08", 1},
		{"OMR, 3 decimals", "7.77", "OMR", "0.1", "0", false, false, "0.1", "0.01", "0.04", "0.80", "0.84", "", "", "2.663", 24},
		{"TND, 3 decimals", "12.34", "TND", "2", "0", false, false, "2", "0.25", "0.14", "0.80", "0.94", "", "", "33.107", 2 * 24},
		{"CLP small", "2.00", "CLP", "0", "0", false, false, "0", "0", "0.02", "0.50", "0.52", "", "", "1432", 24},
		// Running-total rounding: service 0.5% of 0.59 = 0.00295 (0.00), FX 0.35% = 0.002065;
		// their sum 0.005015 rounds to 0.01, so the FX fee shows 0.01 where rounding it alone
		// would give 0.00. The total deducted is the exact total rounded once.
		{"running total rounding", "0.59", "EUR", "0.5", "0", false, false, "0.5", "0", "0.01", "0.25", "0.26", "", "", "0.29", 24},
	}
	rates := snapshotTable(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := Price(QuoteInput{
				SourceAmount: dec(t, c.amount), TargetCurrency: c.cur,
				ServiceFeePercent: dec(t, c.pct), ServiceFeeFixed: dec(t, c.fixed),
				V2Offloader: c.v2, EmailRecipient: c.email, Rates: rates, Now: wednesday,
			})
			if err != nil {
				t.Fatal(err)
			}
			check := func(field string, got decimal.Decimal, want string) {
				if !got.Equal(dec(t, want)) {
					t.Errorf("%s = %s, want %s", field, got, want)
				}
			}
			check("sourceAmount", q.SourceAmount, c.amount)
			check("serviceFeePercent", q.ServiceFeePercent, c.wantPct)
			check("service fee amount", q.ServiceFeeAmount, c.wantSvc)
			check("transferFee", q.Quote.TransferFee, c.wantFee)
			check("targetAmount", q.Quote.TargetAmount, c.wantTarget)
			rate, _ := rates.Rate(c.cur)
			check("usdToTargetRate", q.UsdToTargetRate, rate.String())
			if !decEqualPtr(q.Quote.FeeFxAmount, c.wantFx) || !decEqualPtr(q.Quote.FeePayoutAmount, c.wantPay) {
				t.Errorf("feeFxAmount %s feePayoutAmount %s, want %q %q", fmtPtr(q.Quote.FeeFxAmount), fmtPtr(q.Quote.FeePayoutAmount), c.wantFx, c.wantPay)
			}
			if corridor, _ := DefaultTariff().Corridor(c.cur); !decEqualPtr(q.Quote.FeeFxPercent, map[bool]string{false: corridor.FXPercent.String(), true: ""}[c.email]) {
				t.Errorf("feeFxPercent %s, want the corridor's %s (null for e-mail)", fmtPtr(q.Quote.FeeFxPercent), corridor.FXPercent)
			}
			if !decEqualPtr(q.ProviderCharge, c.wantProvider) {
				t.Errorf("providerCharge %s, want %q", fmtPtr(q.ProviderCharge), c.wantProvider)
			}
			if !decEqualPtr(q.ServiceFeeFixed, c.wantFixed) {
				t.Errorf("serviceFeeFixed %s, want %q", fmtPtr(q.ServiceFeeFixed), c.wantFixed)
			}
			if q.TargetCurrency != c.cur {
				t.Errorf("targetCurrency %q", q.TargetCurrency)
			}
			if want := wednesday.Add(time.Duration(c.wantDeliveryHours) * time.Hour); !q.Quote.EstimatedDelivery.Equal(want) {
				t.Errorf("estimatedDelivery %s, want %s", q.Quote.EstimatedDelivery, want)
			}
			if !q.RatesAsOf.Equal(rates.AsOf) || q.RatesSource != rates.Source || q.Rail == "" {
				t.Errorf("audit fields: AsOf %s Source %q Rail %q", q.RatesAsOf, q.RatesSource, q.Rail)
			}
		})
	}
}

func TestPriceEmailRecipientKeepsOtherFees(t *testing.T) {
	rates := snapshotTable(t)
	in := QuoteInput{SourceAmount: dec(t, "40.00"), TargetCurrency: "ALL", ServiceFeePercent: dec(t, "1.5"),
		ServiceFeeFixed: dec(t, "0.50"), Rates: rates, Now: wednesday}
	normal, err := Price(in)
	if err != nil {
		t.Fatal(err)
	}
	in.EmailRecipient = true
	email, err := Price(in)
	if err != nil {
		t.Fatal(err)
	}
	if !email.Quote.TransferFee.IsZero() || email.Quote.FeeFxPercent != nil || email.Quote.FeeFxAmount != nil || email.Quote.FeePayoutAmount != nil {
		t.Errorf("e-mail quote has transfer fee %s and breakdown %s %s %s", email.Quote.TransferFee,
			fmtPtr(email.Quote.FeeFxPercent), fmtPtr(email.Quote.FeeFxAmount), fmtPtr(email.Quote.FeePayoutAmount))
	}
	if !email.ServiceFeeAmount.Equal(normal.ServiceFeeAmount) || !email.ServiceFeePercent.Equal(normal.ServiceFeePercent) ||
		!decEqualPtr(email.ProviderCharge, normal.ProviderCharge.String()) || !decEqualPtr(email.ServiceFeeFixed, "0.50") {
		t.Errorf("e-mail quote changed other fees: %+v vs %+v", email, normal)
	}
	// The difference in delivered amount is exactly the transfer fee, converted.
	rate, _ := rates.Rate("ALL")
	wantGain := normal.Quote.TransferFee.Mul(rate)
	gain := email.Quote.TargetAmount.Sub(normal.Quote.TargetAmount)
	if gain.Sub(wantGain).Abs().GreaterThan(dec(t, "0.01")) {
		t.Errorf("e-mail recipient receives %s ALL more, want about %s (the transfer fee)", gain, wantGain)
	}
}

func TestPriceRefusesBadInput(t *testing.T) {
	rates := snapshotTable(t)
	base := func() QuoteInput {
		return QuoteInput{SourceAmount: dec(t, "25"), TargetCurrency: "EUR", Rates: rates, Now: wednesday}
	}
	callerErrors := []struct {
		name  string
		edit  func(*QuoteInput)
		field string
		msg   string
	}{
		{"BGN", func(in *QuoteInput) { in.TargetCurrency = "BGN" }, "targetCurrency", "use EUR for Bulgaria"},
		{"unknown", func(in *QuoteInput) { in.TargetCurrency = "XYZ" }, "targetCurrency", "not supported"},
		{"below range", func(in *QuoteInput) { in.SourceAmount = dec(t, "0.009") }, "sourceAmount", "at most 2 decimal places"},
		{"zero", func(in *QuoteInput) { in.SourceAmount = decimal.Zero }, "sourceAmount", "at least 0.01"},
		{"above range", func(in *QuoteInput) { in.SourceAmount = dec(t, "1000000.01") }, "sourceAmount", "at most 1000000"},
	}
	for _, c := range callerErrors {
		in := base()
		c.edit(&in)
		_, err := Price(in)
		e := wantAPIError(t, err, apierror.Invalid, c.field)
		if !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: message %q, want %q", c.name, e.Message, c.msg)
		}
	}
	configErrors := map[string]func(*QuoteInput){
		"no rates":          func(in *QuoteInput) { in.Rates = nil },
		"no time":           func(in *QuoteInput) { in.Now = time.Time{} },
		"negative percent":  func(in *QuoteInput) { in.ServiceFeePercent = dec(t, "-1") },
		"percent 100":       func(in *QuoteInput) { in.ServiceFeePercent = dec(t, "100") },
		"negative fixed":    func(in *QuoteInput) { in.ServiceFeeFixed = dec(t, "-0.01") },
		"sub-cent fixed":    func(in *QuoteInput) { in.ServiceFeeFixed = dec(t, "0.001") },
		"corridor unpriced": func(in *QuoteInput) { in.Tariff = Tariff{"GBP": defaultTariff["GBP"]} },
	}
	for name, edit := range configErrors {
		in := base()
		edit(&in)
		if _, err := Price(in); err == nil || apierror.CodeOf(err) != apierror.Internal {
			t.Errorf("%s: err %v, want an internal error", name, err)
		}
	}
}

func TestCheckDeliverable(t *testing.T) {
	rates := snapshotTable(t)
	for _, c := range []struct{ amount, cur, msg string }{
		{"0.01", "EUR", "0.01 USD leaves nothing to pay out in EUR after fees of 0.25 USD"},
		{"0.25", "EUR", "after fees of 0.25 USD"}, // fees equal the amount
		{"0.26", "JPY", "after fees of 0.60 USD"}, // fees exceed it
	} {
		q, err := Price(QuoteInput{SourceAmount: dec(t, c.amount), TargetCurrency: c.cur, Rates: rates, Now: wednesday})
		if err != nil {
			t.Fatalf("a quote on %s USD must be answered (spec §4.9 range), got %v", c.amount, err)
		}
		if !q.Quote.TargetAmount.IsZero() {
			t.Fatalf("target %s, want 0", q.Quote.TargetAmount)
		}
		e := wantAPIError(t, q.CheckDeliverable("amount"), apierror.Invalid, "amount")
		if !strings.Contains(e.Message, c.msg) {
			t.Errorf("message %q, want %q", e.Message, c.msg)
		}
	}
	// No fees at all, still nothing: 0.01 USD is 0.0088 EUR, below one euro cent.
	q, err := Price(QuoteInput{SourceAmount: dec(t, "0.01"), TargetCurrency: "EUR", Rates: rates, Now: wednesday,
		Tariff: Tariff{"EUR": {Rail: "test"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Quote.TargetAmount.IsZero() || q.CheckDeliverable("amount") == nil {
		t.Errorf("0.01 USD fee-free delivers %s EUR and is deliverable", q.Quote.TargetAmount)
	}
	q, err = Price(QuoteInput{SourceAmount: dec(t, "0.27"), TargetCurrency: "EUR", Rates: rates, Now: wednesday})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckDeliverable("amount"); err != nil || !q.Quote.TargetAmount.Equal(dec(t, "0.01")) {
		t.Errorf("0.27 USD to EUR: target %s, CheckDeliverable %v; want 0.01 and nil", q.Quote.TargetAmount, err)
	}
}

func BenchmarkPrice(b *testing.B) {
	rates := snapshotTable(b)
	in := QuoteInput{SourceAmount: decimal.RequireFromString("1234.56"), TargetCurrency: "EUR",
		ServiceFeePercent: decimal.RequireFromString("1.5"), Rates: rates, Now: wednesday}
	for b.Loop() {
		if _, err := Price(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPriceThreeDecimalsV2(b *testing.B) {
	rates := snapshotTable(b)
	in := QuoteInput{SourceAmount: decimal.RequireFromString("999999.99"), TargetCurrency: "KWD",
		ServiceFeePercent: decimal.RequireFromString("0.333"), V2Offloader: true, Rates: rates, Now: wednesday}
	for b.Loop() {
		if _, err := Price(in); err != nil {
			b.Fatal(err)
		}
	}
}
