package notify

import (
	"fmt"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// FromTransfer is the notification view of a Transfer resource. UpdatedAt is when the
// transfer entered its current phase (from its history), so that a resend of the same outcome
// carries the same Date even if the resource changed since; the address to write to is the
// caller's choice (spec §6: customer_email, on v2 the account's e-mail when it was omitted).
func FromTransfer(t *payoutv1.Transfer) (Transfer, error) {
	amount, err := decimal.NewFromString(string(t.Spec.Amount))
	if err != nil {
		return Transfer{}, fmt.Errorf("notify: transfer %s: amount %q: %w", t.Name, t.Spec.Amount, err)
	}
	s, err := paidTarget(t)
	if err != nil {
		return Transfer{}, fmt.Errorf("notify: transfer %s: %w", t.Name, err)
	}
	var target decimal.Decimal
	if s != "" {
		if target, err = decimal.NewFromString(s); err != nil {
			return Transfer{}, fmt.Errorf("notify: transfer %s: target amount %q: %w", t.Name, s, err)
		}
	}
	r := t.Spec.Recipient
	out := Transfer{
		ID:             t.Name,
		AmountUSD:      amount,
		TargetAmount:   target,
		TargetCurrency: string(t.Spec.Quote.TargetCurrency),
		Recipient: Recipient{
			HolderName: r.AccountHolderName,
			Type:       r.Type,
			Account:    accountOf(r.Type, r.Details),
		},
		Status:            string(t.Status.Phase),
		Error:             t.Status.ErrorText(),
		CreatedAt:         t.CreationTimestamp.Time,
		EstimatedDelivery: t.Spec.Quote.EstimatedDelivery.Time,
	}
	for i := len(t.Status.History) - 1; i >= 0; i-- {
		if h := t.Status.History[i]; h.Status == t.Status.Phase {
			out.UpdatedAt = h.At.Time
			break
		}
	}
	if out.UpdatedAt.IsZero() && t.Status.UpdatedAt != nil {
		out.UpdatedAt = t.Status.UpdatedAt.Time
	}
	if out.UpdatedAt.IsZero() {
		out.UpdatedAt = out.CreatedAt
	}
	return out, nil
}

// paidTarget is what the recipient receives: the payout's own figure once its intent is
// recorded (the provider's once it reports one), else what the transfer's amount pays at the
// quote, which is a cent's worth off the quote's target when the amount is (spec 4.10).
func paidTarget(t *payoutv1.Transfer) (string, error) {
	if p := t.Status.Payout; p != nil && p.TargetAmount != "" {
		return string(p.TargetAmount), nil
	}
	if t.Spec.Quote.TargetAmount == "" {
		return "", nil
	}
	target, err := pricing.PayoutTarget(t.Spec.Quote, t.Spec.Amount)
	return string(target), err
}

// accountOf picks the identifier of the recipient's account, which Render masks.
func accountOf(typ string, d payoutv1.RecipientDetails) string {
	switch {
	case typ == "email_recipient":
		return d.Email
	case d.IBAN != "":
		return d.IBAN
	case d.AccountNumber != "":
		return d.AccountNumber
	}
	for _, k := range []string{"accountNumber", "iban", "clabe"} {
		if v := d.Other[k]; v != "" {
			return v
		}
	}
	return ""
}
