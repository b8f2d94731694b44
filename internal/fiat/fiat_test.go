package fiat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func validRequest() PayoutRequest {
	return PayoutRequest{
		Reference: "6650f0c2a1b2c3d4e5f60718", SourceCurrency: "USD", TargetCurrency: "KWD",
		TargetAmount: decimal.RequireFromString("30.712"), Rate: decimal.RequireFromString("0.30712"),
		Recipient: Recipient{AccountHolderName: "Ada Lovelace", Currency: "KWD", Type: "iban"},
	}
}

func TestValidate(t *testing.T) {
	if err := validRequest().Validate(); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	cases := []struct {
		mod  func(*PayoutRequest)
		want string
	}{
		{func(r *PayoutRequest) { r.Reference = "" }, "reference is required"},
		{func(r *PayoutRequest) { r.Reference = strings.Repeat("x", 65) }, "reference is longer"},
		{func(r *PayoutRequest) { r.SourceCurrency = "" }, "sourceCurrency is required"},
		{func(r *PayoutRequest) { r.SourceCurrency = "XXX" }, `sourceCurrency "XXX"`},
		{func(r *PayoutRequest) { r.TargetCurrency = "BGN" }, `targetCurrency "BGN"`},
		{func(r *PayoutRequest) { r.TargetAmount = decimal.Zero }, "targetAmount must be positive"},
		{func(r *PayoutRequest) { r.TargetAmount = decimal.RequireFromString("30.7121") }, "more than the 3 decimals of KWD"},
		{func(r *PayoutRequest) { r.Rate = decimal.RequireFromString("-1") }, "rate must be positive"},
		{func(r *PayoutRequest) { r.Recipient.AccountHolderName = "" }, "accountHolderName is required"},
		{func(r *PayoutRequest) { r.Recipient.Type = "" }, "recipient.type is required"},
		{func(r *PayoutRequest) { r.Recipient.Currency = "EUR" }, "differs from targetCurrency"},
	}
	for _, tc := range cases {
		r := validRequest()
		tc.mod(&r)
		err := r.Validate()
		if !IsPermanent(err) || !strings.Contains(MessageOf(err), tc.want) {
			t.Errorf("Validate() = %v, want a Permanent error saying %q", err, tc.want)
		}
	}
	// Trailing zeros are not extra decimals: 15000.00 JPY is 15000 JPY.
	r := validRequest()
	r.TargetCurrency, r.Recipient.Currency, r.TargetAmount = "JPY", "JPY", decimal.RequireFromString("15000.00")
	if err := r.Validate(); err != nil {
		t.Errorf("15000.00 JPY: %v", err)
	}
}

func TestKinds(t *testing.T) {
	perm := &Error{Kind: Permanent, Op: "POST /v1/accounts", StatusCode: 422, Code: "account.type.invalid", Message: "type is bad"}
	wrapped := fmt.Errorf("reconcile: %w", perm)
	if !IsPermanent(wrapped) || IsTransient(wrapped) || MessageOf(wrapped) != "type is bad" {
		t.Errorf("wrapped permanent error: %v", wrapped)
	}
	if got := perm.Error(); got != "fiat POST /v1/accounts (permanent, HTTP 422, account.type.invalid): type is bad" {
		t.Errorf("Error() = %q", got)
	}
	// Anything the provider did not explicitly refuse leaves the payout's fate open.
	for _, err := range []error{errors.New("boom"), context.DeadlineExceeded, &Error{Kind: Inconsistent}} {
		if IsPermanent(err) {
			t.Errorf("%v is Permanent", err)
		}
	}
	if KindOf(errors.New("boom")) != Transient || KindOf(nil) != "" {
		t.Error("KindOf of a plain error is not Transient")
	}
	cause := errors.New("connection refused")
	if e := (&Error{Kind: Transient, Err: cause}); !errors.Is(e, cause) {
		t.Error("Unwrap lost the cause")
	}
}

func TestStateTerminal(t *testing.T) {
	for s, want := range map[State]bool{StatePending: false, StateAccepted: false, StateCompleted: true, StateRejected: true} {
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, !want)
		}
	}
}
