package simbank

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/shopspring/decimal"
)

// num is an amount or rate read from a JSON number, never through float64. Quoted strings,
// exponents and anything but plain decimal text are refused, as a bank's API would.
type num decimal.Decimal

func (n *num) UnmarshalJSON(b []byte) error {
	if !isJSONDecimal(b) {
		return fmt.Errorf("%s is not a plain decimal number", truncate(string(b), 40))
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return err
	}
	*n = num(d)
	return nil
}

func (n *num) dec() decimal.Decimal {
	if n == nil {
		return decimal.Decimal{}
	}
	return decimal.Decimal(*n)
}

// isJSONDecimal reports whether b is an optional minus, digits, and optionally '.' and digits.
func isJSONDecimal(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 40 {
		return false
	}
	dot := -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	return dot != 0 && dot != len(b)-1
}

// jsonNumber writes decimal text as a JSON number.
type jsonNumber string

func (j jsonNumber) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// fixed renders d with exactly places decimals ("100.00", "15000", "30.712").
func fixed(d decimal.Decimal, places int32) jsonNumber { return jsonNumber(d.StringFixed(places)) }

// plain renders d with its own digits.
func plain(d decimal.Decimal) jsonNumber { return jsonNumber(d.String()) }

// apiError is an error answer in the shape of Wise's: {"errors":[{"code","message","path"}]}.
type apiError struct {
	status  int
	code    string
	message string
	path    string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func fieldErrorf(path, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, code: code, path: path, message: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = errorf(http.StatusInternalServerError, "error.internal", "internal error of the simulated bank")
	}
	if e.status == http.StatusTooManyRequests || e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "0")
	}
	writeJSON(w, e.status, errorBody{Errors: []errorItem{{Code: e.code, Message: e.message, Path: e.path}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// maxBody bounds a request body; the largest (a recipient account) is well under 8 KiB.
const maxBody = 64 << 10

// decode reads one JSON object into v, refusing unknown fields so that a client's misspelt
// field is an error here rather than a silently ignored instruction.
func decode(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "error.request.invalid", "the request body is not valid: %s", truncate(err.Error(), 200))
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "error.request.invalid", "the request body holds more than one JSON value")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
