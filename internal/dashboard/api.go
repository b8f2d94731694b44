package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// SetAPI gives the dashboard the facade's handler, which its pages call as the signed-in user
// (before it serves: the facade is built with the dashboard inside it, so it comes after).
func (d *Dashboard) SetAPI(h http.Handler) { d.api = h }

// apiReply is the REST API's answer to a page's call.
type apiReply struct {
	status int
	body   []byte
}

// message is the API's error text ({"error": ...}, spec 7), or a generic one.
func (a apiReply) message() string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(a.body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return "the payout API answered " + http.StatusText(a.status)
}

// callAPI calls the REST API in process as the session's browser caller: a browser token made
// for this call, the browser's own address (the facade's per-address limits and access log see
// the user, not the dashboard), and the same handler chain as a call from the page's script or
// an integrator, so that every rule, limit and error message is the API's.
func (d *Dashboard) callAPI(ctx context.Context, from *http.Request, s *session, method, path string, body any) (apiReply, error) {
	if d.api == nil {
		return apiReply{}, errNoAPI
	}
	tok, err := d.cfg.Tokens.Issue(d.cfg.URL, d.cfg.TokenAudience, s.subject, s.account, s.accountUID, d.cfg.Now(), d.cfg.TokenTTL)
	if err != nil {
		return apiReply{}, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return apiReply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return apiReply{}, err
	}
	req.RemoteAddr = from.RemoteAddr
	if xff := from.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		req.Header["X-Forwarded-For"] = xff
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// the standard library's recorder keeps the in-process answer
	rec := httptest.NewRecorder()
	d.api.ServeHTTP(rec, req)
	return apiReply{status: rec.Code, body: rec.Body.Bytes()}, nil
}

type apiError string

func (e apiError) Error() string { return string(e) }

const errNoAPI = apiError("dashboard: SetAPI was not called")

// fieldOf is the request field an API message is about ("details.iban: ..." names details.iban),
// or "" when it names none.
func fieldOf(msg string) string {
	f, _, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(f, " ,") {
		return ""
	}
	return f
}
