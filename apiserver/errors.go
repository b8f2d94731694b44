package apiserver

import (
	"encoding/json"
	"net/http"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// statusOf maps the service's error codes to HTTP statuses: the one place that does.
var statusOf = map[apierror.Code]int{
	apierror.Invalid:          http.StatusBadRequest,
	apierror.TooLarge:         http.StatusRequestEntityTooLarge,
	apierror.Unauthorized:     http.StatusUnauthorized,
	apierror.Forbidden:        http.StatusForbidden,
	apierror.NotFound:         http.StatusNotFound,
	apierror.MethodNotAllowed: http.StatusMethodNotAllowed,
	apierror.Conflict:         http.StatusConflict,
	apierror.TooManyRequests:  http.StatusTooManyRequests,
	apierror.Unavailable:      http.StatusServiceUnavailable,
	apierror.Internal:         http.StatusInternalServerError,
	apierror.NotImplemented:   http.StatusNotImplemented,
}

// errorBody is the error body of spec 7.
type errorBody struct {
	Error string `json:"error"`
}

// writeError answers with err's status and the {error} body. Internal errors are logged with
// their cause and answered with a fixed text, so nothing of the cause (stack, object names)
// reaches the caller.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := apierror.CodeOf(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status >= 500 {
		if rec := recordOf(w); rec != nil {
			rec.err = err
		}
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, errorBody{Error: apierror.MessageOf(err)})
}

// writeJSON answers with status and v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":"internal error"}`)
	}
	writeBody(w, status, append(body, '\n'))
}

// writeBody writes an encoded JSON body (newline-terminated) with the headers of every answer.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// The values of the headers every body carries, made once rather than for each answer
// (Header.Set makes a slice of each): capped at their length, so that a Header.Add to one of
// them makes a new slice rather than write into these, and written under the keys' canonical
// form.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}[:1:1]
	noSniff         = []string{"nosniff"}[:1:1]
)

// Caller-facing texts that must be identical wherever they are used.
const (
	// msgBadKey answers unknown, unmatched and revoked keys alike (spec 5.2), so that a
	// caller cannot tell which key ids exist.
	msgBadKey = "invalid API key"
	// msgBadToken answers every browser token refused, whatever was wrong with it.
	msgBadToken     = "invalid or expired token"
	msgMissingKey   = "missing API key: send the header Authorization: Bearer <API key>"
	msgMalformedKey = "malformed API key: keys have the form svc_live_<keyId>_<secret>"
	msgBlocked      = "too many failed authentication attempts from this address; try again later"
	msgIPNotAllowed = "requests from this address are not allowed for this account"
	msgRateLimited  = "rate limit exceeded for this endpoint; see the X-RateLimit-* headers"
	// msgAuthUnavailable answers a request whose key could not be checked for an internal
	// reason; the caller's credential may well be good.
	msgAuthUnavailable = "authentication is unavailable at the moment; retry shortly"
)
