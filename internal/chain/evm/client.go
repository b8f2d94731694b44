// Package evm reads EVM chains over JSON-RPC for the deposit watcher, v2 verification and
// refunds: a client that fails over between a network's endpoints, one scan step of the
// watcher (log query, reorg checks, matching against the deposit addresses), transaction
// lookups, and the refund wallet's signing and broadcasting. Tron is read with the same code
// through its Ethereum-compatible JSON-RPC, with its own Spelling (package tron). It knows
// nothing of Kubernetes.
package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/stablepay/payout-operator/internal/chain/config"
)

// Endpoint backoff: a failing endpoint is skipped for 1s, then 2s, 4s, ... up to a minute.
const (
	minEndpointBackoff = time.Second
	maxEndpointBackoff = 30 * time.Second
	callTimeout        = 15 * time.Second
)

// ErrNoEndpoint is returned while every endpoint of a network is failing (and backing off).
var ErrNoEndpoint = errors.New("no usable RPC endpoint")

// Client calls one network's JSON-RPC endpoints. It uses the first endpoint, in configured
// order, that is not backing off after a failure, so it fails over to the next endpoint when
// one fails and back to the first once it recovers. Every endpoint must report the configured
// chain id before it is used (and again after each failure). JSON-RPC errors (an answer of the
// node) are returned as they are; transport errors (refused connections, timeouts, HTTP errors)
// move to the next endpoint. Safe for concurrent use.
type Client struct {
	chainID *big.Int
	eps     []*endpoint
	mu      sync.Mutex
	current int

	// Requests counts HTTP round trips (a batch is one), Calls the JSON-RPC calls in them.
	Requests, Calls atomic.Int64
}

type endpoint struct {
	url, display string
	c            *rpc.Client
	verified     bool
	failures     int
	retryAt      time.Time
	lastErr      error
}

// NewClient prepares a client of urls for chain chainID. HTTP endpoints connect on first use;
// nothing is called here.
func NewClient(chainID int64, urls []string) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("no RPC endpoint")
	}
	c := &Client{chainID: big.NewInt(chainID)}
	for _, u := range urls {
		c.eps = append(c.eps, &endpoint{url: u, display: config.Redact(u)})
	}
	return c, nil
}

// Endpoint is the endpoint last used successfully (scheme and host only).
func (c *Client) Endpoint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eps[c.current].display
}

// Close closes the connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ep := range c.eps {
		if ep.c != nil {
			ep.c.Close()
			ep.c = nil
		}
	}
}

// Call makes one JSON-RPC call; a null result leaves result untouched (use a pointer to a
// pointer to tell null apart).
func (c *Client) Call(ctx context.Context, result any, method string, args ...any) error {
	return c.do(ctx, 1, func(ctx context.Context, rc *rpc.Client) error {
		return rc.CallContext(ctx, result, method, args...)
	})
}

// Batch sends calls in one request. The returned error is the request's; each element's own
// error (a JSON-RPC error) is in its Error field.
func (c *Client) Batch(ctx context.Context, calls []rpc.BatchElem) error {
	if len(calls) == 0 {
		return nil
	}
	return c.do(ctx, len(calls), func(ctx context.Context, rc *rpc.Client) error {
		for i := range calls {
			calls[i].Error = nil
		}
		return rc.BatchCallContext(ctx, calls)
	})
}

func (c *Client) do(ctx context.Context, calls int, fn func(context.Context, *rpc.Client) error) error {
	var errs []error
	for range c.eps {
		ep, rc, err := c.pick(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := c.verify(ctx, ep, rc); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err = ep.redact(err)
			c.failed(ep, err)
			errs = append(errs, fmt.Errorf("%s: %w", ep.display, err))
			continue
		}
		c.Requests.Add(1)
		c.Calls.Add(int64(calls))
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err = fn(cctx, rc)
		cancel()
		if err == nil || !isTransport(err) {
			c.succeeded(ep)
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err = ep.redact(err)
		c.failed(ep, err)
		errs = append(errs, fmt.Errorf("%s: %w", ep.display, err))
	}
	return errors.Join(errs...)
}

// redact removes the endpoint's full URL (whose path or query may hold an API key) from a
// transport error's text: Go's HTTP client quotes the URL it posted to.
func (ep *endpoint) redact(err error) error {
	msg := err.Error()
	clean := msg
	for _, u := range []string{ep.url, strings.TrimSuffix(ep.url, "/")} {
		if u != "" {
			clean = strings.ReplaceAll(clean, u, ep.display)
		}
	}
	if parsed, perr := url.Parse(ep.url); perr == nil {
		clean = strings.ReplaceAll(clean, parsed.Redacted(), ep.display)
		clean = strings.ReplaceAll(clean, parsed.String(), ep.display)
	}
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// redactedError keeps the cause for errors.Is and errors.As, with a text free of the URL.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// pick returns the first endpoint that is not backing off, dialling it when needed.
func (c *Client) pick(ctx context.Context) (*endpoint, *rpc.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var soonest *endpoint
	for i, ep := range c.eps {
		if now.Before(ep.retryAt) {
			if soonest == nil || ep.retryAt.Before(soonest.retryAt) {
				soonest = ep
			}
			continue
		}
		if ep.c == nil {
			rc, err := rpc.DialOptions(ctx, ep.url, rpc.WithHTTPClient(&http.Client{Timeout: callTimeout}))
			if err != nil {
				c.failedLocked(ep, err)
				continue
			}
			ep.c = rc
		}
		c.current = i
		return ep, ep.c, nil
	}
	if soonest != nil && soonest.lastErr != nil {
		return nil, nil, fmt.Errorf("%w: every endpoint is failing (%s, retried in %s: %v)", ErrNoEndpoint,
			soonest.display, time.Until(soonest.retryAt).Round(time.Millisecond), soonest.lastErr)
	}
	return nil, nil, ErrNoEndpoint
}

// verify checks the endpoint's chain id once (and again after each failure).
func (c *Client) verify(ctx context.Context, ep *endpoint, rc *rpc.Client) error {
	c.mu.Lock()
	ok := ep.verified
	c.mu.Unlock()
	if ok {
		return nil
	}
	var id hexutil.Big
	c.Requests.Add(1)
	c.Calls.Add(1)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := rc.CallContext(cctx, &id, "eth_chainId"); err != nil {
		return fmt.Errorf("eth_chainId: %w", err)
	}
	if id.ToInt().Cmp(c.chainID) != 0 {
		return fmt.Errorf("the node serves chain id %s, configured %s", id.ToInt(), c.chainID)
	}
	c.mu.Lock()
	ep.verified = true
	c.mu.Unlock()
	return nil
}

func (c *Client) succeeded(ep *endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ep.failures, ep.lastErr = 0, nil
}

func (c *Client) failed(ep *endpoint, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failedLocked(ep, err)
}

func (c *Client) failedLocked(ep *endpoint, err error) {
	ep.failures++
	ep.verified = false
	ep.lastErr = err
	backoff := minEndpointBackoff << min(ep.failures-1, 6)
	ep.retryAt = time.Now().Add(min(backoff, maxEndpointBackoff))
	if ep.c != nil {
		ep.c.Close()
		ep.c = nil
	}
}

// isTransport tells an endpoint's failure (move to the next one) from the node's answer.
func isTransport(err error) bool {
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) {
		return false
	}
	return true
}

// IsNodeError reports whether err is a JSON-RPC error returned by a node (as opposed to a
// failure to reach one).
func IsNodeError(err error) bool {
	var rpcErr rpc.Error
	return errors.As(err, &rpcErr)
}
