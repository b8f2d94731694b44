// Package apierror is the one error model of the service. Domain packages return an *Error with
// a Code and a message written for the API caller; the REST facade maps the Code to an HTTP
// status in one place. Anything that is not an *Error is an internal error, and its text never
// reaches the caller.
package apierror

import (
	"errors"
	"fmt"
)

// Code classifies an error by what the caller can do about it.
type Code string

const (
	Invalid          Code = "invalid"            // 400: fix the request
	TooLarge         Code = "too_large"          // 413: send less
	Unauthorized     Code = "unauthorized"       // 401: bad or missing credentials
	Forbidden        Code = "forbidden"          // 403: not permitted for this account or wallet
	NotFound         Code = "not_found"          // 404: no such object
	MethodNotAllowed Code = "method_not_allowed" // 405: the path takes other methods
	Conflict         Code = "conflict"           // 409: clashes with stored state
	TooManyRequests  Code = "too_many_requests"  // 429: slow down
	Unavailable      Code = "unavailable"        // 503: a dependency is down; fail closed, retry later
	Internal         Code = "internal"           // 500: our fault
	NotImplemented   Code = "not_implemented"    // 501: this deployment cannot do it yet
)

// Error is an error meant for the API caller.
type Error struct {
	Code    Code
	Message string
	// Field names the request field at fault (e.g. "details.iban"), when there is one.
	Field string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf builds an Invalid *Error about one request field; the message names the field.
func FieldErrorf(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// CodeOf returns the Code of err, or Internal when err is not (and does not wrap) an *Error.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the caller-facing text of err; internal errors, coded or not, get a fixed
// text so that nothing of their cause leaks.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Message
	}
	return "internal error"
}
