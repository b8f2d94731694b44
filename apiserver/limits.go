package apiserver

import (
	"net/http"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// FeeAmountParam is the query parameter of GET /api/payouts/fee (spec 4.14 leaves its name
// open): "amount", the name the rest of the interface uses for a USD amount.
const FeeAmountParam = "amount"

// handleAmountLimits serves GET /api/payouts/amount-limits (spec 4.13).
func (s *Server) handleAmountLimits(w http.ResponseWriter, _ *http.Request, c *Caller) error {
	lim := c.Account.Spec.AmountLimits
	writeJSON(w, http.StatusOK, struct {
		Min *jsonDecimal `json:"min_amount"`
		Max *jsonDecimal `json:"max_amount"`
	}{numPtr(pricing.Limit(lim.Min)), numPtr(pricing.Limit(lim.Max))})
	return nil
}

// handleFee serves GET /api/payouts/fee?amount= (spec 4.14): the platform fee for display.
func (s *Server) handleFee(w http.ResponseWriter, r *http.Request, c *Caller) error {
	q := r.URL.Query()
	if !q.Has(FeeAmountParam) {
		return apierror.FieldErrorf(FeeAmountParam, "is required (the USD amount, 0.01 to 1000000)")
	}
	// any precision; the fee is the percentage of the amount rounded half-up to cents, as a
	// quote of the same amount deducts it (pricing.ParsePricedAmount)
	_, amount, err := pricing.ParsePricedAmount(FeeAmountParam, q.Get(FeeAmountParam))
	if err != nil {
		return err
	}
	percent := accountFeePercent(c.Account)
	fee, err := pricing.PlatformFee(amount, percent)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		SvcFee           jsonDecimal `json:"svcFee"`
		SvcFeePercentage jsonDecimal `json:"svcFeePercentage"`
	}{fixed(fee, 2), num(percent)})
	return nil
}

// accountFeePercent is the account's service fee percentage, 0 when none is configured.
func accountFeePercent(a *payoutv1.PayoutAccount) decimal.Decimal {
	if p := a.Spec.ServiceFee.Percent; p != nil {
		return mustDecimal(string(*p))
	}
	return decimal.Zero
}

// accountFeeFixed is the account's fixed fee, 0 when none is configured.
func accountFeeFixed(a *payoutv1.PayoutAccount) decimal.Decimal {
	if f := a.Spec.ServiceFee.Fixed; f != nil {
		return mustDecimal(string(*f))
	}
	return decimal.Zero
}
