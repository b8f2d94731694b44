package admin

import (
	"errors"
	"fmt"
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

// refusal carries a message for people and a kind for code.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
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
