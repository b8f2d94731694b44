package pricing

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/shopspring/decimal"
)

// CorridorFees is the service's own tariff for paying out in one currency: what the service
// charges its customers, set by the business, not a copy of any bank's or provider's price list.
// Percentages are of the USD source amount (1.5 means 1.5%); fixed amounts are USD.
type CorridorFees struct {
	// Rail is the payout rail the delivery estimate assumes, for support and logs.
	Rail string
	// FXPercent is the conversion fee (quote field feeFxPercent).
	FXPercent decimal.Decimal
	// PayoutFixed and PayoutPercent make up the payout fee (quote field feePayoutAmount).
	PayoutFixed   decimal.Decimal
	PayoutPercent decimal.Decimal
	// ProviderCharge is a fixed USD charge passed on for corridors whose payout involves a
	// correspondent bank (SWIFT); zero elsewhere (quote field providerCharge, absent when zero).
	ProviderCharge decimal.Decimal
	// DeliveryBusinessDays is the usual settlement time in business days (Monday to Friday,
	// UTC, no holiday calendar). Zero means an instant rail that runs every day.
	DeliveryBusinessDays int
}

// instantLead is the delivery estimate for instant rails: they settle in seconds when all goes
// well, and the estimate leaves room for the deposit to be detected and the payout screened.
const instantLead = time.Hour

// EstimatedDelivery is when a payout quoted at now should reach the recipient.
func (c CorridorFees) EstimatedDelivery(now time.Time) time.Time {
	t := now.UTC()
	if c.DeliveryBusinessDays == 0 {
		return t.Add(instantLead)
	}
	for n := c.DeliveryBusinessDays; n > 0; {
		t = t.AddDate(0, 0, 1)
		if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n--
		}
	}
	return t
}

// Tariff maps a currency code to its corridor fees.
//
// Choice made for the fee breakdown of spec §2.4: every supported currency has a schedule, so
// feeFxPercent, feeFxAmount and feePayoutAmount are null only for e-mail recipients. A currency
// missing from a tariff is not quoted (Price returns an internal error): quoting it without fees
// would give money away, and inventing fees would misstate them.
type Tariff map[string]CorridorFees

// Corridor returns the fees for code.
func (t Tariff) Corridor(code string) (CorridorFees, bool) {
	c, ok := t[code]
	return c, ok
}

// Validate checks every corridor: percentages in [0, 100) whose sum stays below 100, fixed
// amounts non-negative whole cents, delivery days non-negative, and only supported currencies.
func (t Tariff) Validate() error {
	var errs []error
	for code, c := range t {
		if !Supported(code) {
			errs = append(errs, fmt.Errorf("%s: not a supported currency", code))
		}
		errs = append(errs,
			checkPercent(code+" FX percent", c.FXPercent),
			checkPercent(code+" payout percent", c.PayoutPercent),
			checkPercent(code+" total percent", c.FXPercent.Add(c.PayoutPercent)),
			checkCents(code+" payout fixed fee", c.PayoutFixed),
			checkCents(code+" provider charge", c.ProviderCharge))
		if c.DeliveryBusinessDays < 0 {
			errs = append(errs, fmt.Errorf("%s: negative delivery days", code))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pricing: invalid tariff: %w", err)
	}
	return nil
}

// DefaultTariff returns a copy of the built-in tariff, which covers every supported currency.
func DefaultTariff() Tariff { return maps.Clone(defaultTariff) }

// defaultTariff is the service tariff. Principles, so that changes stay consistent:
//   - FX fee by liquidity of the currency: 0 for USD, 0.35-0.50% for the majors, 0.6-1.0% for
//     liquid emerging markets, 1.2-2.0% for thin or controlled markets.
//   - Payout fee: a fixed USD amount near the rail's real cost (instant and domestic rails
//     0.20-0.60, slower local clearing up to 1.00); CNY alone has a percentage part, for the
//     extra compliance work per payment.
//   - Provider charge only where the payout goes over SWIFT through a correspondent bank.
//   - Delivery: 0 for instant 24/7 rails, else the usual business days of the rail.
var defaultTariff = buildTariff([]tariffRow{
	// code, rail, FX %, payout fixed USD, payout %, provider charge USD, business days
	{"USD", "ACH", "0", "0.50", "0", "0", 1},
	{"EUR", "SEPA credit transfer", "0.35", "0.25", "0", "0", 1},
	{"GBP", "Faster Payments", "0.35", "0.25", "0", "0", 0},
	{"CHF", "SIC", "0.40", "0.50", "0", "0", 1},
	{"CAD", "EFT", "0.40", "0.50", "0", "0", 1},
	{"AUD", "NPP", "0.40", "0.35", "0", "0", 0},
	{"NZD", "local bank transfer", "0.45", "0.50", "0", "0", 1},
	{"JPY", "Zengin", "0.40", "0.60", "0", "0", 1},
	{"SEK", "Bankgirot", "0.40", "0.40", "0", "0", 1},
	{"NOK", "local bank transfer", "0.40", "0.40", "0", "0", 1},
	{"DKK", "local bank transfer", "0.40", "0.40", "0", "0", 1},
	{"PLN", "Express Elixir", "0.45", "0.30", "0", "0", 0},
	{"CZK", "local bank transfer", "0.45", "0.40", "0", "0", 1},
	{"HUF", "HCT Instant", "0.50", "0.40", "0", "0", 0},
	{"RON", "local bank transfer", "0.50", "0.40", "0", "0", 1},
	{"ISK", "local bank transfer", "0.60", "0.80", "0", "0", 1},
	{"BAM", "local bank transfer", "0.80", "1.00", "0", "0", 2},
	{"RSD", "local bank transfer", "0.80", "1.00", "0", "0", 2},
	{"ALL", "SWIFT", "1.00", "1.00", "0", "2.00", 3},
	{"GEL", "local bank transfer", "0.80", "1.00", "0", "0", 1},
	{"TRY", "FAST", "0.90", "0.40", "0", "0", 0},
	{"UAH", "local bank transfer", "1.20", "0.50", "0", "0", 1},
	{"SGD", "FAST", "0.40", "0.30", "0", "0", 0},
	{"HKD", "FPS", "0.40", "0.30", "0", "0", 0},
	{"ILS", "Zahav", "0.50", "0.60", "0", "0", 1},
	{"AED", "UAEFTS", "0.50", "0.60", "0", "0", 1},
	{"SAR", "SARIE", "0.50", "0.60", "0", "0", 1},
	{"QAR", "local bank transfer", "0.60", "0.80", "0", "0", 1},
	{"BHD", "local bank transfer", "0.60", "0.80", "0", "0", 1},
	{"KWD", "local bank transfer", "0.60", "0.80", "0", "0", 1},
	{"OMR", "local bank transfer", "0.60", "0.80", "0", "0", 1},
	{"INR", "IMPS", "0.60", "0.20", "0", "0", 0},
	{"PKR", "Raast", "0.90", "0.40", "0", "0", 0},
	{"BDT", "BEFTN", "1.20", "0.40", "0", "0", 1},
	{"NPR", "local bank transfer", "1.20", "0.60", "0", "0", 1},
	{"LKR", "CEFTS", "1.00", "0.60", "0", "0", 1},
	{"CNY", "CNAPS", "0.70", "1.50", "0.20", "0", 1},
	{"KRW", "local bank transfer", "0.60", "0.60", "0", "0", 0},
	{"MYR", "DuitNow", "0.60", "0.30", "0", "0", 0},
	{"THB", "PromptPay", "0.60", "0.30", "0", "0", 0},
	{"IDR", "BI-FAST", "0.70", "0.30", "0", "0", 0},
	{"PHP", "InstaPay", "0.70", "0.30", "0", "0", 0},
	{"VND", "NAPAS 247", "0.90", "0.40", "0", "0", 0},
	{"KHR", "SWIFT", "1.50", "1.00", "0", "2.00", 2},
	{"LAK", "SWIFT", "2.00", "1.00", "0", "3.00", 3},
	{"MNT", "SWIFT", "1.50", "1.00", "0", "3.00", 3},
	{"MOP", "local bank transfer", "0.80", "1.00", "0", "0", 2},
	{"KGS", "SWIFT", "1.50", "1.00", "0", "3.00", 3},
	{"MXN", "SPEI", "0.50", "0.30", "0", "0", 0},
	{"BRL", "PIX", "0.60", "0.30", "0", "0", 0},
	{"ARS", "local bank transfer", "2.00", "0.50", "0", "0", 1},
	{"CLP", "local bank transfer", "0.80", "0.50", "0", "0", 1},
	{"COP", "ACH Colombia", "0.90", "0.60", "0", "0", 1},
	{"PEN", "CCE", "0.90", "0.60", "0", "0", 1},
	{"UYU", "local bank transfer", "1.00", "0.80", "0", "0", 1},
	{"PYG", "local bank transfer", "1.20", "0.80", "0", "0", 2},
	{"BOB", "ACH", "1.20", "0.80", "0", "0", 2},
	{"CRC", "SINPE", "0.90", "0.60", "0", "0", 0},
	{"DOP", "ACH", "1.00", "0.80", "0", "0", 1},
	{"GTQ", "ACH", "1.00", "0.80", "0", "0", 1},
	{"HNL", "ACH", "1.20", "0.80", "0", "0", 2},
	{"NIO", "SWIFT", "1.50", "1.00", "0", "1.50", 2},
	{"SRD", "SWIFT", "2.00", "1.00", "0", "3.00", 3},
	{"BMD", "SWIFT", "0.20", "1.00", "0", "3.00", 2},
	{"ZAR", "EFT", "0.70", "0.50", "0", "0", 1},
	{"NAD", "EFT", "0.90", "0.80", "0", "0", 2},
	{"BWP", "SWIFT", "1.20", "0.80", "0", "1.50", 2},
	{"KES", "PesaLink", "1.00", "0.40", "0", "0", 0},
	{"TZS", "local bank transfer", "1.50", "0.60", "0", "0", 1},
	{"UGX", "local bank transfer", "1.50", "0.60", "0", "0", 1},
	{"RWF", "local bank transfer", "1.50", "0.60", "0", "0", 1},
	{"GHS", "GhIPSS", "1.20", "0.50", "0", "0", 0},
	{"NGN", "NIP", "1.20", "0.40", "0", "0", 0},
	{"GMD", "SWIFT", "2.00", "1.00", "0", "3.00", 3},
	{"GNF", "SWIFT", "2.00", "1.00", "0", "3.00", 3},
	{"CVE", "SWIFT", "1.00", "1.00", "0", "3.00", 3},
	{"SCR", "SWIFT", "1.50", "1.00", "0", "3.00", 3},
	{"MUR", "local bank transfer", "1.00", "0.80", "0", "0", 1},
	{"MAD", "local bank transfer", "1.00", "0.80", "0", "0", 1},
	{"TND", "local bank transfer", "1.20", "0.80", "0", "0", 2},
	{"EGP", "local bank transfer", "1.50", "0.60", "0", "0", 1},
})

// tariffRow keeps the table above readable: amounts as decimal text, parsed once at start.
type tariffRow struct {
	code, rail                                      string
	fxPercent, payoutFixed, payoutPercent, provider string
	days                                            int
}

// buildTariff parses rows; malformed text or a duplicate row is a programming error caught by
// the package's tests, so it panics at start rather than pricing with a broken tariff.
func buildTariff(rows []tariffRow) Tariff {
	t := make(Tariff, len(rows))
	for _, r := range rows {
		if _, dup := t[r.code]; dup {
			panic("pricing: duplicate tariff row " + r.code)
		}
		t[r.code] = CorridorFees{
			Rail:                 r.rail,
			FXPercent:            decimal.RequireFromString(r.fxPercent),
			PayoutFixed:          decimal.RequireFromString(r.payoutFixed),
			PayoutPercent:        decimal.RequireFromString(r.payoutPercent),
			ProviderCharge:       decimal.RequireFromString(r.provider),
			DeliveryBusinessDays: r.days,
		}
	}
	return t
}

// maxPercent bounds every fee percentage from above, exclusively: a fee of 100% or more of the
// source amount leaves nothing to convert.
var maxPercent = decimal.New(100, 0)

// CheckServiceFeePercent is the allowed range of an account's configured service fee
// percentage: 0 <= p < 100 (1.5 means 1.5%). Configuration enforces it (the PayoutAccount
// schema and internal/admin), so that every fee and quote request of the account can be
// priced; the v2 fee structure's 20 basis points on top may pass 100 and then only make the
// target amount 0.
func CheckServiceFeePercent(p decimal.Decimal) error {
	return checkPercent("the service fee percent", p)
}

// checkPercent refuses a percentage outside [0, 100). Fee percentages come from configuration,
// so the error is internal, not the caller's to fix.
func checkPercent(what string, p decimal.Decimal) error {
	if p.IsNegative() || p.GreaterThanOrEqual(maxPercent) {
		return fmt.Errorf("%s is %s, want 0 <= p < 100", what, p)
	}
	return nil
}

// checkCents refuses a negative USD amount or one finer than a cent.
func checkCents(what string, d decimal.Decimal) error {
	if d.IsNegative() || !d.Equal(d.Truncate(usdMinorUnits)) {
		return fmt.Errorf("%s is %s, want a non-negative amount in whole cents", what, d)
	}
	return nil
}
