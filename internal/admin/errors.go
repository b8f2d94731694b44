package admin

import (
	"errors"
	"fmt"

	"github.com/stablepay/payout-operator/internal/refusal"
)

// Kinds of refusal a caller may branch on, matched with errors.Is. The error text itself is
// written for a person and names the object.
var (
	// ErrAccountExists: CreateAccount found an account of that name. The dev environment
	// resumes on it instead of failing.
	ErrAccountExists = errors.New("account already exists")
	// ErrNotFound: the account, key or transfer named does not exist.
	ErrNotFound = errors.New("not found")
)

// refuse is a refusal of kind (errors.Is) whose text is the formatted message.
func refuse(kind error, format string, args ...any) error {
	return refusal.New(kind, format, args...)
}

// Field names of FieldError, as an operator would say them. The plugin maps them to its flags.
const (
	FieldAccountName       = "account name"
	FieldEmail             = "email"
	FieldMinAmount         = "min amount"
	FieldMaxAmount         = "max amount"
	FieldServiceFeePercent = "service fee percent"
	FieldServiceFeeFixed   = "service fee fixed"
	FieldAllowedIPs        = "allowed IPs"
	FieldWalletAddress     = "wallet address"
	FieldBlockReason       = "reason"
	FieldKeyID             = "API key id"
	FieldTransferID        = "transfer id"
	FieldMaxOpenV1         = "max open v1 transfers"
	FieldMaxOpenV2         = "max open v2 transfers"
	FieldMaxRecipients     = "max active recipients"
	FieldMaxClaims         = "max claims"
)

// FieldError is an invalid input, found before anything was sent to the API server.
type FieldError struct {
	Field  string // one of the Field constants
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

func invalid(field, value, reason string) error {
	return &FieldError{Field: field, Value: value, Reason: reason}
}
