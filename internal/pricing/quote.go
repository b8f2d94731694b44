package pricing

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// v2OffloaderSurcharge is added to the configured service fee on the v2 fee structure (spec §2.4,
// §8.2: 20 basis points); in exchange the fixed fee and the provider charge are waived.
var v2OffloaderSurcharge = decimal.New(20, -2) // 0.20 percentage points

// QuoteInput is everything a quote depends on. The caller resolves the account settings and the
// request; Price does no I/O.
type QuoteInput struct {
	// SourceAmount in USD, 0.01..1000000 in whole cents (the priced amount of ParseSourceAmount).
	SourceAmount decimal.Decimal
	// TargetCurrency is an upper-case supported code (see ParseCurrency).
	TargetCurrency string
	// ServiceFeePercent and ServiceFeeFixed are the account's configured platform fee; zero
	// when none is configured.
	ServiceFeePercent decimal.Decimal
	ServiceFeeFixed   decimal.Decimal
	// V2Offloader selects the v2 fee structure. The caller sets it only when the account is on
	// that structure and the request asked for v2_offloader=true.
	V2Offloader bool
	// EmailRecipient is recipientType=email_recipient: no transfer fee.
	EmailRecipient bool
	// Rates prices the conversion; Now dates the estimated delivery.
	Rates *RateTable
	Now   time.Time
	// Tariff is the fee schedule; nil means the built-in one.
	Tariff Tariff
}

// QuoteResult carries every field of the spec §2.4 quote except quoteId, which belongs to the
// quote store, plus the figures settlement needs. Optional response fields are pointers: nil
// means absent (providerCharge, serviceFeeFixed) or null (the fee breakdown).
type QuoteResult struct {
	SourceAmount      decimal.Decimal
	ProviderCharge    *decimal.Decimal
	ServiceFeePercent decimal.Decimal
	ServiceFeeFixed   *decimal.Decimal
	TargetCurrency    string
	UsdToTargetRate   decimal.Decimal
	Quote             Settlement

	// ServiceFeeAmount is the USD the service fee percentage deducts.
	ServiceFeeAmount decimal.Decimal
	// NetAmount is the USD left for conversion: SourceAmount minus ProviderCharge,
	// ServiceFeeAmount and TransferFee. Negative when the fees exceed the amount.
	NetAmount decimal.Decimal
	// Rail, RatesAsOf and RatesSource record what the quote was priced with, for audit.
	Rail        string
	RatesAsOf   time.Time
	RatesSource string
}

// Settlement is the "quote" object inside a spec §2.4 quote.
type Settlement struct {
	TargetAmount      decimal.Decimal
	TransferFee       decimal.Decimal
	FeeFxPercent      *decimal.Decimal
	FeeFxAmount       *decimal.Decimal
	FeePayoutAmount   *decimal.Decimal
	EstimatedDelivery time.Time
}

// Price computes a quote. The rules, which the tests check as invariants:
//
// Fees, all in USD and each derived from the source amount S:
//   - service fee: S × serviceFeePercent / 100, where serviceFeePercent is the configured value
//     plus exactly 0.20 for the v2 fee structure;
//   - FX fee: S × FXPercent / 100 of the corridor;
//   - payout fee: PayoutFixed + S × PayoutPercent / 100 of the corridor;
//   - provider charge: the corridor's fixed charge; none on the v2 fee structure;
//   - fixed service fee: the account's configured value, display only and never deducted
//     (spec §2.4); reported as 0 on the v2 fee structure and absent when none is configured.
//
// Rounding: the three percentage-based fees are rounded as a running total, half-up to cents.
// The service fee is its exact value rounded; the FX fee is the rounded sum of the exact service
// and FX fees minus the rounded service fee; the payout fee likewise on the sum of all three. So
// each fee is within a cent of its exact value, feeFxAmount + feePayoutAmount == transferFee
// exactly, the service fee equals PlatformFee for the same amount and percentage, and the total
// deducted is the exact total rounded once. The last point makes quotes monotonic: one more cent in never
// delivers less out, which rounding each fee separately cannot promise.
//
// Deducted before conversion: provider charge, service fee and transfer fee (FX + payout). An
// e-mail recipient pays no transfer fee (transferFee 0, breakdown null); its other fees are
// unchanged. The rest is converted at the mid-market rate and truncated toward zero to the
// currency's minor units, so the target amount never exceeds the exact conversion.
//
// When the fees reach or exceed the source amount, the target amount is 0: quotes stay
// answerable over the whole 0.01..1000000 range (spec §4.9) and show why nothing arrives.
// Creating a transfer on such a quote must be refused: see CheckDeliverable.
func Price(in QuoteInput) (*QuoteResult, error) {
	if err := checkAmount("sourceAmount", in.SourceAmount); err != nil {
		return nil, err
	}
	minor, ok := MinorUnits(in.TargetCurrency)
	if !ok {
		// Reaches here only when the caller skipped ParseCurrency; the same message applies.
		_, err := ParseCurrency(in.TargetCurrency)
		return nil, err
	}
	if in.Rates == nil {
		return nil, errors.New("pricing: Price called without a rate table")
	}
	if in.Now.IsZero() {
		return nil, errors.New("pricing: Price called without the quote time")
	}
	if err := checkPercent("account service fee percent", in.ServiceFeePercent); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	if err := checkCents("account fixed service fee", in.ServiceFeeFixed); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	tariff := in.Tariff
	if tariff == nil {
		tariff = defaultTariff
	}
	corridor, ok := tariff.Corridor(in.TargetCurrency)
	if !ok {
		return nil, fmt.Errorf("pricing: no fee schedule for %s", in.TargetCurrency)
	}
	rate, err := in.Rates.Rate(in.TargetCurrency)
	if err != nil {
		return nil, err
	}

	s := in.SourceAmount
	q := &QuoteResult{
		SourceAmount:      s,
		ServiceFeePercent: in.ServiceFeePercent,
		TargetCurrency:    in.TargetCurrency,
		UsdToTargetRate:   rate,
		Rail:              corridor.Rail,
		RatesAsOf:         in.Rates.AsOf,
		RatesSource:       in.Rates.Source,
	}
	provider := corridor.ProviderCharge
	if in.V2Offloader {
		q.ServiceFeePercent = q.ServiceFeePercent.Add(v2OffloaderSurcharge)
		provider = decimal.Zero
		q.ServiceFeeFixed = ptr(decimal.Zero)
	} else if !in.ServiceFeeFixed.IsZero() {
		q.ServiceFeeFixed = ptr(in.ServiceFeeFixed)
	}
	if provider.IsPositive() {
		q.ProviderCharge = ptr(provider)
	}

	exactService := percentOf(s, q.ServiceFeePercent)
	q.ServiceFeeAmount = exactService.Round(usdMinorUnits)
	transferFee := decimal.New(0, -usdMinorUnits)
	if !in.EmailRecipient {
		exactFX := percentOf(s, corridor.FXPercent)
		exactPayout := corridor.PayoutFixed.Add(percentOf(s, corridor.PayoutPercent))
		upToFX := exactService.Add(exactFX).Round(usdMinorUnits)
		upToPayout := exactService.Add(exactFX).Add(exactPayout).Round(usdMinorUnits)
		fx := upToFX.Sub(q.ServiceFeeAmount)
		payout := upToPayout.Sub(upToFX)
		transferFee = fx.Add(payout)
		q.Quote.FeeFxPercent = ptr(corridor.FXPercent)
		q.Quote.FeeFxAmount = ptr(fx)
		q.Quote.FeePayoutAmount = ptr(payout)
	}
	q.Quote.TransferFee = transferFee
	q.NetAmount = s.Sub(provider).Sub(q.ServiceFeeAmount).Sub(transferFee)
	q.Quote.TargetAmount = decimal.New(0, -minor)
	if q.NetAmount.IsPositive() {
		q.Quote.TargetAmount = q.NetAmount.Mul(rate).Truncate(minor)
	}
	q.Quote.EstimatedDelivery = corridor.EstimatedDelivery(in.Now)
	return q, nil
}

// CheckDeliverable refuses a quote that pays out nothing, with a 400 naming field (the amount
// parameter of the request at hand). Transfer creation must call it: taking a deposit that
// converts to zero would keep the customer's money for no service.
func (q *QuoteResult) CheckDeliverable(field string) error {
	if q.Quote.TargetAmount.IsPositive() {
		return nil
	}
	fees := q.SourceAmount.Sub(q.NetAmount)
	return apierror.FieldErrorf(field, "%s USD leaves nothing to pay out in %s after fees of %s USD; send a larger amount",
		q.SourceAmount.StringFixed(usdMinorUnits), q.TargetCurrency, fees.StringFixed(usdMinorUnits))
}

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }
