package fiat

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind tells the caller what an error means for the money.
type Kind string

const (
	// Transient: the provider could not be reached or could not answer now (a timeout, a
	// refused connection, a 5xx, a 429, rejected credentials). The payout may or may not exist:
	// retry later with the same request, or Find by reference first.
	Transient Kind = "transient"
	// Permanent: the provider refused the request itself (a validation error) before any
	// payout existed. The payout will never be made; the transfer fails with Message.
	Permanent Kind = "permanent"
	// Inconsistent: the provider's records contradict ours (a payout under this reference
	// that differs from the request, an id the provider does not know). Money may have moved:
	// do not retry under a new reference, do not fail or refund automatically; a person must
	// look.
	Inconsistent Kind = "inconsistent"
)

// Error is a provider error.
type Error struct {
	Kind Kind
	// Op is the operation, e.g. "create" or "POST /v1/transfers".
	Op string
	// StatusCode is the provider's HTTP status; 0 when no answer came.
	StatusCode int
	// Code is the provider's machine-readable error code, when it gave one.
	Code string
	// Message is the provider's explanation, fit to be the transfer's error text.
	Message string
	// RetryAfter is the provider's hint for a Transient error; 0 when none.
	RetryAfter time.Duration
	// Payout is what the provider holds, for an Inconsistent error about an existing payout.
	Payout *Payout
	// Err is the cause (a network error, say), if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("fiat")
	if e.Op != "" {
		b.WriteString(" " + e.Op)
	}
	fmt.Fprintf(&b, " (%s", e.Kind)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ", HTTP %d", e.StatusCode)
	}
	if e.Code != "" {
		b.WriteString(", " + e.Code)
	}
	b.WriteString(")")
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error of kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the Kind of err. An error that is not (and does not wrap) an *Error is
// Transient: only the provider's explicit refusal may ever fail a transfer.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Transient
}

// IsPermanent reports whether err proves that the payout was not and will not be made.
func IsPermanent(err error) bool { return KindOf(err) == Permanent }

// IsTransient reports whether err leaves the payout's existence unknown and is worth a retry.
func IsTransient(err error) bool { return KindOf(err) == Transient }

// MessageOf is the provider's explanation of err, or err's text when it gave none.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}
