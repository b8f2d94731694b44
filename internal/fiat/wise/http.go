package wise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/fiat"
)

// maxAnswer bounds a response body; a page of transfers is a few tens of KiB.
const maxAnswer = 4 << 20

// maxRetryAfter caps a provider's Retry-After hint within one operation; longer waits belong to
// the caller's requeue.
const maxRetryAfter = 5 * time.Second

// call is one HTTP call to the API.
type call struct {
	method, path string
	body         any
	// repeatable says the call may be sent again after a transient failure without risk of a
	// second payout. Each call site states why.
	repeatable bool
}

// do sends c, repeating it while it fails transiently (when repeatable and while retries and
// the context last), and decodes a 2xx JSON answer into out. Every failure is a *fiat.Error:
// transport errors, timeouts, 5xx, 408, 409, 425 and 429 are Transient and repeated; 401 and
// 403 are Transient (a credentials problem, fixed by an operator, never the payout's fault) and
// not repeated; other 4xx are Permanent, which call sites narrow where it matters.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	op := cl.method + " " + routeOf(cl.path)
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return &fiat.Error{Kind: fiat.Permanent, Op: op, Message: "cannot encode the request", Err: err}
		}
	}
	attempts := 1
	if cl.repeatable {
		attempts += c.cfg.Retries
	}
	var last *fiat.Error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if err := sleep(ctx, c.backoff(i, last.RetryAfter)); err != nil {
				return &fiat.Error{Kind: fiat.Transient, Op: op, Message: "gave up waiting to retry", Err: errors.Join(err, last)}
			}
		}
		last = c.once(ctx, op, cl, payload, out)
		if last == nil {
			return nil
		}
		if ctx.Err() != nil || !retryable(last) {
			return last
		}
	}
	return last
}

func (c *Client) once(ctx context.Context, op string, cl call, payload []byte, out any) *fiat.Error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.base+cl.path, body)
	if err != nil {
		return &fiat.Error{Kind: fiat.Permanent, Op: op, Message: "cannot build the request", Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Token.Reveal())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "payout-operator")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &fiat.Error{Kind: fiat.Transient, Op: op, Message: "no answer from the payout provider", Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &fiat.Error{Kind: fiat.Transient, Op: op, StatusCode: resp.StatusCode, Message: "the answer was cut off", Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			// The call may well have acted: an unreadable answer is no proof of anything.
			return &fiat.Error{Kind: fiat.Transient, Op: op, StatusCode: resp.StatusCode, Message: "the answer is not the expected JSON", Err: err}
		}
		return nil
	}
	e := &fiat.Error{Op: op, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	e.Code, e.Message = decodeError(data)
	if e.Message == "" {
		e.Message = "the payout provider answered " + resp.Status
	}
	switch s := resp.StatusCode; {
	case s >= 500, s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooEarly, s == http.StatusTooManyRequests:
		e.Kind = fiat.Transient
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Kind = fiat.Transient
		e.Message = "the payout provider refused our credentials: " + e.Message
	default:
		e.Kind = fiat.Permanent
	}
	return e
}

// retryable reports whether a failed call is worth repeating at once.
func retryable(e *fiat.Error) bool {
	return e.Kind == fiat.Transient && e.StatusCode != http.StatusUnauthorized && e.StatusCode != http.StatusForbidden
}

// backoff is the pause before attempt i (1-based): RetryBackoff doubled per attempt, with
// jitter, or the provider's Retry-After when that is longer.
func (c *Client) backoff(i int, hint time.Duration) time.Duration {
	d := c.cfg.RetryBackoff << (i - 1)
	if d <= 0 || d > 10*time.Second {
		d = 10 * time.Second
	}
	d = d/2 + rand.N(d/2+1)
	return max(d, min(hint, maxRetryAfter))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// decodeError reads Wise's error bodies: {"errors":[{"code","message","path"}]}, or the
// OAuth-style {"error","error_description"}, or {"message"}.
func decodeError(data []byte) (code, message string) {
	var body struct {
		Errors []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Path    string `json:"path"`
		} `json:"errors"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
		Message          string `json:"message"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", ""
	}
	if len(body.Errors) > 0 {
		var msgs []string
		for _, e := range body.Errors {
			m := e.Message
			if e.Path != "" && !strings.Contains(m, e.Path) {
				m = e.Path + ": " + m
			}
			msgs = append(msgs, m)
		}
		return body.Errors[0].Code, limit(strings.Join(msgs, "; "), 500)
	}
	if body.Error != "" {
		return body.Error, limit(body.ErrorDescription, 500)
	}
	return "", limit(body.Message, 500)
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// routeOf hides ids in a path, so that an operation name is stable ("/v1/transfers/{id}").
func routeOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if _, err := strconv.ParseInt(p, 10, 64); err == nil {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

func errorf(kind fiat.Kind, op, format string, args ...any) *fiat.Error {
	return &fiat.Error{Kind: kind, Op: op, Message: fmt.Sprintf(format, args...)}
}
