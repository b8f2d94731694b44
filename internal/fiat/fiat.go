package fiat

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/pricing"
)

// Provider pays fiat to bank recipients. Every method takes a context and honours its deadline;
// errors are *Error values (see Kind) or wrap them.
type Provider interface {
	// Name identifies the provider in a transfer's status, so that a later pass asks the same
	// provider about the payout.
	Name() string
	// Find returns the payout made under reference, or nil, nil when the provider has none. It
	// changes nothing at the provider. notBefore is a time before which no payout under the
	// reference can exist (the creation of the transfer it pays): a provider that cannot look a
	// reference up directly searches its payouts created since then, all of them, so that nil
	// means none (a search it could not finish is a Transient error, never nil); the zero time
	// searches everything.
	Find(ctx context.Context, reference string, notBefore time.Time) (*Payout, error)
	// Create makes and funds the payout of req. It is idempotent by req.Reference: when a payout
	// with that reference exists, Create returns it (funding it first if it was left unfunded)
	// and makes no second one. A payout that exists but differs from req is an Inconsistent
	// error.
	Create(ctx context.Context, req PayoutRequest) (*Payout, error)
	// Get returns the payout with the provider's id. The caller must check that the Reference
	// of the answer is its own. An id the provider does not know is an Inconsistent error.
	Get(ctx context.Context, providerID string) (*Payout, error)
	// ReturnWindow is how long after a payout reached StateCompleted the provider may still
	// report it returned (the recipient's bank sent the money back: StateRejected after
	// StateCompleted); the caller keeps asking until then. 0 means the provider never does.
	ReturnWindow() time.Duration
}

// PayoutRequest is one payout. The caller rebuilds it from the stored transfer on every call, so
// that a retry asks for exactly the same payout.
type PayoutRequest struct {
	// Reference is the transfer id: the idempotency key at the provider and the payment
	// reference the recipient sees.
	Reference string
	// SourceCurrency is the currency the provider is funded in: "USD".
	SourceCurrency string
	// TargetCurrency is the ISO 4217 code of the payout.
	TargetCurrency string
	// TargetAmount is what the recipient receives (a fixed-target payout), in currency units
	// with at most the currency's minor units of decimals: 1234.56 EUR, 15000 JPY, 30.712 KWD.
	TargetAmount decimal.Decimal
	// Rate is the quoted rate of 1 SourceCurrency in TargetCurrency that the conversion must
	// use. The source amount the provider debits follows from it.
	Rate decimal.Decimal
	// Recipient is the bank account paid.
	Recipient Recipient
	// SourceOfFunds names the deposit that pays the payout (SourceOfFunds of package transfer:
	// network, transaction and log). The provider keeps it with the payout, so that after an
	// etcd restore the provider, the ledger of record, says which transaction paid which
	// transfer.
	SourceOfFunds string
}

// Recipient is the bank account of a payout, as in the account requirements.
type Recipient struct {
	AccountHolderName string
	// Currency of the account (equal to the request's TargetCurrency).
	Currency string
	// Type is the account type: iban, sort_code, aba, email_recipient, ...
	Type string
	// Country is the ISO 3166-1 alpha-2 code, when known.
	Country string
	// Details are the account-type-specific fields keyed as in the account requirements;
	// nested groups use dotted keys ("address.country", "address.city").
	Details map[string]string
}

// State is where a payout stands at the provider.
type State string

const (
	// StatePending: created at the provider but not funded; no money is committed. Create
	// with the same request funds it.
	StatePending State = "pending"
	// StateAccepted: funded and in progress (checks, conversion, sending). Not terminal.
	StateAccepted State = "accepted"
	// StateCompleted: the outgoing payment was sent to the recipient's bank. The end of the
	// normal flow, but not final: within the provider's ReturnWindow the recipient's bank may
	// return the payment, and the payout then reads StateAccepted (bounced, may be sent again)
	// or StateRejected (returned: no money reached the recipient).
	StateCompleted State = "completed"
	// StateRejected: the provider cancelled the payout (refused, bounced and returned); no money
	// reached the recipient. Final; Message says why.
	StateRejected State = "rejected"
)

// Terminal reports whether the payout reached the end of its flow: completed or rejected. A
// completed payout can still be returned within the provider's ReturnWindow.
func (s State) Terminal() bool { return s == StateCompleted || s == StateRejected }

// Payout is a payout as the provider reports it.
type Payout struct {
	// ProviderID is the provider's id of the payout.
	ProviderID string
	// Reference is the request's Reference.
	Reference string
	State     State
	// ProviderStatus is the provider's own status word (e.g. "funds_converted"), for history
	// and support.
	ProviderStatus string
	// SourceAmount is what the provider debits, in SourceCurrency.
	SourceCurrency string
	SourceAmount   decimal.Decimal
	// TargetAmount is what the recipient receives, in TargetCurrency.
	TargetCurrency string
	TargetAmount   decimal.Decimal
	// Rate is the rate the provider converts at.
	Rate decimal.Decimal
	// Message explains a StateRejected payout; empty otherwise.
	Message string
	// Created is when the provider created the payout.
	Created time.Time
	// SourceOfFunds is the request's SourceOfFunds, as the provider keeps it.
	SourceOfFunds string
}

// Validate checks what any provider needs before money can move; its errors are Permanent and
// name the field at fault.
func (r PayoutRequest) Validate() error {
	switch {
	case r.Reference == "":
		return Errorf(Permanent, "reference is required")
	case len(r.Reference) > 64:
		return Errorf(Permanent, "reference is longer than 64 characters")
	case r.SourceCurrency == "":
		return Errorf(Permanent, "sourceCurrency is required")
	}
	if _, ok := pricing.MinorUnits(r.SourceCurrency); !ok {
		return Errorf(Permanent, "sourceCurrency %q is not a supported currency", r.SourceCurrency)
	}
	minor, ok := pricing.MinorUnits(r.TargetCurrency)
	if !ok {
		return Errorf(Permanent, "targetCurrency %q is not a supported currency", r.TargetCurrency)
	}
	if !r.TargetAmount.IsPositive() {
		return Errorf(Permanent, "targetAmount must be positive, not %s", r.TargetAmount)
	}
	if !r.TargetAmount.Equal(r.TargetAmount.Truncate(minor)) {
		return Errorf(Permanent, "targetAmount %s has more than the %d decimals of %s", r.TargetAmount, minor, r.TargetCurrency)
	}
	if !r.Rate.IsPositive() {
		return Errorf(Permanent, "rate must be positive, not %s", r.Rate)
	}
	switch {
	case r.Recipient.AccountHolderName == "":
		return Errorf(Permanent, "recipient.accountHolderName is required")
	case r.Recipient.Type == "":
		return Errorf(Permanent, "recipient.type is required")
	case r.Recipient.Currency != r.TargetCurrency:
		return Errorf(Permanent, "recipient.currency %q differs from targetCurrency %q", r.Recipient.Currency, r.TargetCurrency)
	}
	return nil
}
