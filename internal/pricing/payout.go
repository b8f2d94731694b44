package pricing

import (
	"fmt"

	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Snapshot is the quote as the service stores it, in a Quote's spec and in the spec.quote of
// the transfer made on it: USD amounts to the cent, the target amount to the currency's minor
// units, the rate and the percentage exactly. PayoutTarget reads it back.
func (q *QuoteResult) Snapshot() payoutv1.QuoteSnapshot {
	minor, _ := MinorUnits(q.TargetCurrency)
	s := payoutv1.QuoteSnapshot{
		SourceAmount:      payoutv1.USDAmount(q.SourceAmount.StringFixed(usdMinorUnits)),
		ServiceFeePercent: payoutv1.Decimal(q.ServiceFeePercent.String()),
		TargetCurrency:    payoutv1.CurrencyCode(q.TargetCurrency),
		USDToTargetRate:   payoutv1.Decimal(q.UsdToTargetRate.String()),
		TargetAmount:      payoutv1.Decimal(q.Quote.TargetAmount.StringFixed(minor)),
		TransferFee:       payoutv1.Decimal(q.Quote.TransferFee.StringFixed(usdMinorUnits)),
		EstimatedDelivery: metav1.NewTime(q.Quote.EstimatedDelivery),
	}
	if q.ProviderCharge != nil {
		d := payoutv1.Decimal(q.ProviderCharge.StringFixed(usdMinorUnits))
		s.ProviderCharge = &d
	}
	if q.ServiceFeeFixed != nil {
		d := payoutv1.Decimal(q.ServiceFeeFixed.StringFixed(usdMinorUnits))
		s.ServiceFeeFixed = &d
	}
	return s
}

// PayoutTarget is what a transfer pays its recipient, in the quote's target currency, for
// amount: the USD the customer is asked to send, which spec 4.10 lets differ from the quote's
// sourceAmount by 0.01. Paying the quote's targetAmount for a cent less would pay out money that
// was never collected.
//
// The fees are the quote's, as quoted: the provider charge and the transfer fee it shows, and
// its service fee (PlatformFee of its sourceAmount and serviceFeePercent, the figure Price
// deducted). Only the converted rest follows amount: (amount - providerCharge - service fee -
// transferFee) × usdToTargetRate, truncated toward zero to the currency's minor units, or 0 when
// the fees reach amount. So an amount equal to the quote's sourceAmount is paid the quote's
// targetAmount exactly, and the result is written as the quote writes its targetAmount.
//
// An amount further than 0.01 from the quote is an error: the fees as quoted are then no longer
// the customer's fees, and the facade never creates such a transfer.
func PayoutTarget(q payoutv1.QuoteSnapshot, amount payoutv1.USDAmount) (payoutv1.Decimal, error) {
	minor, ok := MinorUnits(string(q.TargetCurrency))
	if !ok {
		return "", fmt.Errorf("pricing: the quote's currency %q is not supported", q.TargetCurrency)
	}
	asked, err := decimal.NewFromString(string(amount))
	if err != nil {
		return "", fmt.Errorf("pricing: the transfer's amount %q is not a decimal number", amount)
	}
	f, err := quotedFees(q)
	if err != nil {
		return "", err
	}
	if asked.Sub(f.source).Abs().GreaterThan(MinAmount) {
		return "", fmt.Errorf("pricing: the amount %s is not within 0.01 of the quoted %s", asked, f.source)
	}
	target := decimal.New(0, -minor)
	if net := asked.Sub(f.fees); net.IsPositive() {
		target = net.Mul(f.rate).Truncate(minor)
	}
	return payoutv1.Decimal(target.StringFixed(minor)), nil
}

// QuotedFees is what a transfer priced with q is charged, in USD: the provider charge, the
// service fee and the transfer fee, as PayoutTarget deducts them before converting.
func QuotedFees(q payoutv1.QuoteSnapshot) (decimal.Decimal, error) {
	f, err := quotedFees(q)
	return f.fees, err
}

type fees struct{ source, rate, fees decimal.Decimal }

// quotedFees reads q's figures: its sourceAmount, its rate, and its fees added up.
func quotedFees(q payoutv1.QuoteSnapshot) (fees, error) {
	var (
		source, percent, transferFee, rate decimal.Decimal
		provider                           = decimal.Zero
	)
	for _, f := range []struct {
		what, text string
		into       *decimal.Decimal
	}{
		{"the quote's sourceAmount", string(q.SourceAmount), &source},
		{"the quote's serviceFeePercent", string(q.ServiceFeePercent), &percent},
		{"the quote's transferFee", string(q.TransferFee), &transferFee},
		{"the quote's usdToTargetRate", string(q.USDToTargetRate), &rate},
	} {
		d, err := decimal.NewFromString(f.text)
		if err != nil {
			return fees{}, fmt.Errorf("pricing: %s %q is not a decimal number", f.what, f.text)
		}
		*f.into = d
	}
	if q.ProviderCharge != nil {
		d, err := decimal.NewFromString(string(*q.ProviderCharge))
		if err != nil {
			return fees{}, fmt.Errorf("pricing: the quote's providerCharge %q is not a decimal number", *q.ProviderCharge)
		}
		provider = d
	}
	// Price's service fee, without PlatformFee's bound on the percentage: the v2 fee structure's
	// surcharge may take a quote's percentage to 100 or past it, which only makes the target 0.
	serviceFee := percentOf(source, percent).Round(usdMinorUnits)
	return fees{source: source, rate: rate, fees: provider.Add(serviceFee).Add(transferFee)}, nil
}
