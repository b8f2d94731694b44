package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// quoteValidity is the life of a quote (spec 8.2).
const quoteValidity = payoutv1.QuoteValiditySeconds * time.Second

// quoteJSON is the quote of spec 2.4.
type quoteJSON struct {
	// QuoteID is empty, so absent, only for browser callers (spec 5.6).
	QuoteID           string         `json:"quoteId,omitempty"`
	SourceAmount      jsonDecimal    `json:"sourceAmount"`
	ProviderCharge    *jsonDecimal   `json:"providerCharge,omitempty"`
	ServiceFeePercent jsonDecimal    `json:"serviceFeePercent"`
	ServiceFeeFixed   *jsonDecimal   `json:"serviceFeeFixed,omitempty"`
	TargetCurrency    string         `json:"targetCurrency"`
	USDToTargetRate   jsonDecimal    `json:"usdToTargetRate"`
	Quote             settlementJSON `json:"quote"`
}

// settlementJSON is the inner quote object of spec 2.4; the breakdown is null, not absent,
// when there is none.
type settlementJSON struct {
	TargetAmount      jsonDecimal  `json:"targetAmount"`
	TransferFee       jsonDecimal  `json:"transferFee"`
	FeeFxPercent      *jsonDecimal `json:"feeFxPercent"`
	FeeFxAmount       *jsonDecimal `json:"feeFxAmount"`
	FeePayoutAmount   *jsonDecimal `json:"feePayoutAmount"`
	EstimatedDelivery string       `json:"estimatedDelivery"`
}

// handleQuote serves GET /api/payouts/quote (spec 4.9): prices the amount and stores the quote
// as a Quote resource, valid five minutes and usable once.
func (s *Server) handleQuote(w http.ResponseWriter, r *http.Request, c *Caller) error {
	q := r.URL.Query()
	currency, err := pricing.ParseCurrencyField("targetCurrency", q.Get("targetCurrency"))
	if err != nil {
		return err
	}
	if !q.Has("sourceAmount") {
		return apierror.FieldErrorf("sourceAmount", "is required (USD, 0.01 to 1000000)")
	}
	// Bounds hold for the amount as asked; the quote prices, stores and answers it rounded
	// half-up to cents (pricing.ParsePricedAmount).
	asked, amount, err := pricing.ParseSourceAmount(q.Get("sourceAmount"))
	if err != nil {
		return err
	}
	if err := pricing.CheckLimits(asked, pricing.Limit(c.Account.Spec.AmountLimits.Min), pricing.Limit(c.Account.Spec.AmountLimits.Max)); err != nil {
		return err
	}
	v2, err := queryBool(q.Get("v2_offloader"), "v2_offloader")
	if err != nil {
		return err
	}
	if c.Browser {
		// ignored for browser callers (spec 5.6)
		v2 = false
	}
	recipientType := q.Get("recipientType")
	if err := s.checkRecipientType(currency, recipientType); err != nil {
		return err
	}
	quote, err := s.priceQuote(r.Context(), c, uuid.NewString(), currency, amount, v2, recipientType)
	if err != nil {
		return err
	}
	if c.Browser {
		// A browser caller's quote has no quoteId (spec 5.6): nothing can name it, so it is
		// not stored.
		view := quoteView(quote)
		view.QuoteID = ""
		writeJSON(w, http.StatusOK, view)
		return nil
	}
	if err := s.createOwned(r.Context(), c, quote); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, quoteView(quote))
	return nil
}

// priceQuote prices amount USD in currency for the caller's account, as the quote named id
// (not stored).
func (s *Server) priceQuote(ctx context.Context, c *Caller, id, currency string, amount decimal.Decimal, v2 bool, recipientType string) (*payoutv1.Quote, error) {
	rates, err := s.cfg.Rates.Rates(ctx)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Clock.Now()
	// v2_offloader counts only for accounts on the v2 fee structure (spec 2.4, CONTRACT).
	v2 = v2 && c.Account.Spec.V2FeeStructure
	priced, err := pricing.Price(pricing.QuoteInput{
		SourceAmount:      amount,
		TargetCurrency:    currency,
		ServiceFeePercent: accountFeePercent(c.Account),
		ServiceFeeFixed:   accountFeeFixed(c.Account),
		V2Offloader:       v2,
		EmailRecipient:    recipientType == bankaccount.EmailRecipientType,
		Rates:             rates,
		Now:               now,
	})
	if err != nil {
		return nil, err
	}
	return quoteResource(c, id, priced, v2, recipientType, now), nil
}

// checkRecipientType accepts no type, email_recipient (EUR only, spec 2.1.1) or an account type
// the currency pays out to.
func (s *Server) checkRecipientType(currency, typ string) error {
	switch typ {
	case "":
		return nil
	case bankaccount.EmailRecipientType:
		if currency != "EUR" {
			return apierror.FieldErrorf("recipientType", "email_recipient pays out in EUR only")
		}
		return nil
	}
	types, err := s.cfg.Catalog.Requirements(currency)
	if err != nil {
		return err
	}
	for _, t := range types {
		if t.Type == typ {
			return nil
		}
	}
	return apierror.FieldErrorf("recipientType", "%s does not pay out to account type %q", currency, typ)
}

// quoteResource stores a priced quote.
func quoteResource(c *Caller, id string, p *pricing.QuoteResult, v2 bool, recipientType string, now time.Time) *payoutv1.Quote {
	// the stored figures are the snapshot's, so that a transfer's payout reads back what was quoted
	snap := p.Snapshot()
	spec := payoutv1.QuoteSpec{
		Account:           c.Account.Name,
		SourceAmount:      snap.SourceAmount,
		ProviderCharge:    snap.ProviderCharge,
		ServiceFeeFixed:   snap.ServiceFeeFixed,
		TargetCurrency:    snap.TargetCurrency,
		USDToTargetRate:   snap.USDToTargetRate,
		ServiceFeePercent: snap.ServiceFeePercent,
		TargetAmount:      snap.TargetAmount,
		TransferFee:       snap.TransferFee,
		EstimatedDelivery: snap.EstimatedDelivery,
		ExpiresAt:         metav1.NewTime(now.Add(quoteValidity)),
		V2Offloader:       v2,
		RecipientType:     recipientType,
		RateSource:        clip(p.RatesSource+" as of "+p.RatesAsOf.UTC().Format(time.RFC3339), maxRateSource),
	}
	if p.Quote.FeeFxAmount != nil {
		pct, fx, po := payoutv1.Decimal(p.Quote.FeeFxPercent.String()), payoutv1.Decimal(p.Quote.FeeFxAmount.StringFixed(2)), payoutv1.Decimal(p.Quote.FeePayoutAmount.StringFixed(2))
		spec.FeeFxPercent, spec.FeeFxAmount, spec.FeePayoutAmount = &pct, &fx, &po
	}
	return &payoutv1.Quote{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(), Name: id},
		Spec:       spec,
	}
}

// maxRateSource is the schema's bound on spec.rateSource: an audit note must not make a valid
// quote unstorable when a rate feed names itself at length.
const maxRateSource = 256

// clip shortens s to at most n bytes (so at most n characters) on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// quoteView renders a stored quote as spec 2.4.
func quoteView(q *payoutv1.Quote) quoteJSON {
	return quoteJSON{
		QuoteID:           q.Name,
		SourceAmount:      jsonDecimal(q.Spec.SourceAmount),
		ProviderCharge:    optDecimal(q.Spec.ProviderCharge),
		ServiceFeePercent: jsonDecimal(q.Spec.ServiceFeePercent),
		ServiceFeeFixed:   optDecimal(q.Spec.ServiceFeeFixed),
		TargetCurrency:    string(q.Spec.TargetCurrency),
		USDToTargetRate:   jsonDecimal(q.Spec.USDToTargetRate),
		Quote: settlementJSON{
			TargetAmount:      jsonDecimal(q.Spec.TargetAmount),
			TransferFee:       jsonDecimal(q.Spec.TransferFee),
			FeeFxPercent:      optDecimal(q.Spec.FeeFxPercent),
			FeeFxAmount:       optDecimal(q.Spec.FeeFxAmount),
			FeePayoutAmount:   optDecimal(q.Spec.FeePayoutAmount),
			EstimatedDelivery: q.Spec.EstimatedDelivery.UTC().Format(time.RFC3339),
		},
	}
}

// optDecimal renders a stored optional decimal (already valid number text) as JSON.
func optDecimal(d *payoutv1.Decimal) *jsonDecimal {
	if d == nil {
		return nil
	}
	v := jsonDecimal(*d)
	return &v
}

// queryBool reads an optional boolean query parameter strictly: true, false or absent.
func queryBool(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apierror.FieldErrorf(name, "must be true or false")
	}
	return b, nil
}
