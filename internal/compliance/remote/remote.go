// Package remote calls the external compliance services (wallet verification, wallet risk)
// one way: a GET with a bearer token and a deadline, a small JSON answer, and every failure —
// unreachable, slow, an unexpected status, a garbled body — reported as unavailable, so that
// callers fail closed.
package remote

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/secret"
)

// Service is an external JSON service.
type Service struct {
	BaseURL string
	// Token, when set, is sent as a Bearer credential.
	Token  secret.Value
	Client *http.Client
	// Timeout bounds each call; default 5 s.
	Timeout time.Duration
}

// Get requests BaseURL+path and, when the answer's status is among accept and is 200,
// decodes its JSON body into out. ok is false when the service cannot give an answer.
func (s Service) Get(ctx context.Context, path string, out any, accept ...int) (status int, ok bool) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.BaseURL, "/")+path, nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Accept", "application/json")
	if !s.Token.IsZero() {
		req.Header.Set("Authorization", "Bearer "+s.Token.Reveal())
	}
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	known := resp.StatusCode == http.StatusOK
	for _, a := range accept {
		known = known || resp.StatusCode == a
	}
	if !known {
		return resp.StatusCode, false
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(out); err != nil {
			return resp.StatusCode, false
		}
	}
	return resp.StatusCode, true
}
