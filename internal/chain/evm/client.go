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
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/stablepay/payout-operator/internal/chain/rpcfailover"
)

// ErrNoEndpoint is returned while every endpoint of a network is failing (and backing off).
var ErrNoEndpoint = rpcfailover.ErrNoEndpoint

// Client calls one network's JSON-RPC endpoints. It uses the first endpoint, in configured
// order, that is not backing off after a failure, so it fails over to the next endpoint when
// one fails and back to the first once it recovers (package rpcfailover, shared with the Solana
// client). Every endpoint must report the configured chain id before it is used (and again
// after each failure). JSON-RPC errors (an answer of the node) are returned as they are;
// transport errors (refused connections, timeouts, HTTP errors) move to the next endpoint. The
// head read by Head also moves to the next endpoint when the current one has stalled or lags
// behind another (rpcfailover.Pool.Head). Safe for concurrent use.
type Client struct {
	chainID *big.Int
	pool    *rpcfailover.Pool[*rpc.Client]

	// Requests counts HTTP round trips (a batch is one), Calls the JSON-RPC calls in them.
	Requests, Calls atomic.Int64
}

// NewClient prepares a client of urls for chain chainID. HTTP endpoints connect on first use;
// nothing is called here. SetStallAfter turns the head watch on.
func NewClient(chainID int64, urls []string) (*Client, error) {
	c := &Client{chainID: big.NewInt(chainID)}
	pool, err := rpcfailover.New(urls, rpcfailover.Funcs[*rpc.Client]{
		Dial: func(ctx context.Context, url string) (*rpc.Client, error) {
			return rpc.DialOptions(ctx, url, rpc.WithHTTPClient(&http.Client{Timeout: rpcfailover.CallTimeout}))
		},
		Close:  func(rc *rpc.Client) { rc.Close() },
		Verify: c.verify,
	})
	if err != nil {
		return nil, err
	}
	c.pool = pool
	return c, nil
}

// SetStallAfter sets how long an endpoint's head may stay still before the others' heads are
// read (Head); 0 turns the comparison off.
func (c *Client) SetStallAfter(d time.Duration) { c.pool.SetStallAfter(d) }

// Head sends calls in one request (a single call, or a batch), the first of them
// eth_blockNumber into head, as the watcher's head read: an endpoint whose head has stalled or
// lags behind another is failed over and the calls are sent again to the next one. The
// returned error is the request's or the first call's; the others' own errors are in their
// Error fields.
func (c *Client) Head(ctx context.Context, calls []rpc.BatchElem, head *hexutil.Uint64) (int64, error) {
	return c.pool.Head(ctx, func(ctx context.Context, rc *rpc.Client, ep rpcfailover.Endpoint) (int64, bool, error) {
		c.Requests.Add(1)
		c.Calls.Add(int64(len(calls)))
		var err error
		if len(calls) == 1 {
			err = rc.CallContext(ctx, calls[0].Result, calls[0].Method, calls[0].Args...)
		} else {
			for i := range calls {
				calls[i].Error = nil
			}
			if err = rc.BatchCallContext(ctx, calls); err == nil {
				err = calls[0].Error
			}
		}
		if err != nil && isTransport(err) {
			return 0, true, redact(ep, err)
		}
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", calls[0].Method, err)
		}
		return int64(*head), false, nil
	})
}

// Endpoint is the endpoint last used successfully (scheme and host only).
func (c *Client) Endpoint() string { return c.pool.Endpoint() }

// Endpoints is the number of configured endpoints: with more than one, what credits money is
// cross-checked on a second one (crosscheck.go).
func (c *Client) Endpoints() int { return c.pool.Len() }

// Close closes the connections.
func (c *Client) Close() { c.pool.Close() }

// Call makes one JSON-RPC call; a null result leaves result untouched (use a pointer to a
// pointer to tell null apart).
func (c *Client) Call(ctx context.Context, result any, method string, args ...any) error {
	return c.do(ctx, 1, func(ctx context.Context, rc *rpc.Client) error {
		return rc.CallContext(ctx, result, method, args...)
	})
}

// CallAt is Call, and also returns the endpoint that answered, of which a second opinion may be
// asked elsewhere (BatchOther). check, when set, judges the answer: its error counts as the
// endpoint's failure (an endpoint that answers something other than what was asked, such as
// the receipt of another transaction), so the call moves to the next endpoint, as on a
// transport error.
func (c *Client) CallAt(ctx context.Context, check func() error, result any, method string, args ...any) (rpcfailover.Endpoint, error) {
	return c.pool.DoAt(ctx, c.attempt(1, func(ctx context.Context, rc *rpc.Client) error {
		return rc.CallContext(ctx, result, method, args...)
	}, check))
}

// Batch sends calls in one request. The returned error is the request's; each element's own
// error (a JSON-RPC error) is in its Error field.
func (c *Client) Batch(ctx context.Context, calls []rpc.BatchElem) error {
	if len(calls) == 0 {
		return nil
	}
	return c.pool.Do(ctx, c.attempt(len(calls), batch(calls), nil))
}

// BatchOther sends calls in one request, as Batch does, to an endpoint other than not: a
// second opinion on what not answered. It returns the endpoint that answered; an error wrapping
// ErrNoEndpoint when no other endpoint is usable (none is configured, or every other one is
// failing).
func (c *Client) BatchOther(ctx context.Context, not rpcfailover.Endpoint, calls []rpc.BatchElem) (rpcfailover.Endpoint, error) {
	return c.pool.DoOther(ctx, not, c.attempt(len(calls), batch(calls), nil))
}

func batch(calls []rpc.BatchElem) func(context.Context, *rpc.Client) error {
	return func(ctx context.Context, rc *rpc.Client) error {
		for i := range calls {
			calls[i].Error = nil
		}
		return rc.BatchCallContext(ctx, calls)
	}
}

func (c *Client) do(ctx context.Context, calls int, fn func(context.Context, *rpc.Client) error) error {
	return c.pool.Do(ctx, c.attempt(calls, fn, nil))
}

// attempt is one request of calls calls on one endpoint, as the pool runs it: a transport error,
// or check's error on an answer, is the endpoint's failure.
func (c *Client) attempt(calls int, fn func(context.Context, *rpc.Client) error, check func() error) func(context.Context, *rpc.Client, rpcfailover.Endpoint) (bool, error) {
	return func(ctx context.Context, rc *rpc.Client, ep rpcfailover.Endpoint) (bool, error) {
		c.Requests.Add(1)
		c.Calls.Add(int64(calls))
		err := fn(ctx, rc)
		if err == nil && check != nil {
			if err = check(); err != nil {
				return true, err
			}
		}
		if err == nil || !isTransport(err) {
			return false, err
		}
		return true, redact(ep, err)
	}
}

// redact removes the endpoint's full URL (whose path or query may hold an API key) from a
// transport error's text.
func redact(ep rpcfailover.Endpoint, err error) error {
	msg := err.Error()
	clean := ep.StripURL(msg)
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

// verify checks the endpoint's chain id (rpcfailover calls it once, and again after each
// failure).
func (c *Client) verify(ctx context.Context, rc *rpc.Client, ep rpcfailover.Endpoint) (string, error) {
	var id hexutil.Big
	c.Requests.Add(1)
	c.Calls.Add(1)
	if err := rc.CallContext(ctx, &id, "eth_chainId"); err != nil {
		return "", redact(ep, fmt.Errorf("eth_chainId: %w", err))
	}
	if id.ToInt().Cmp(c.chainID) != 0 {
		return "", redact(ep, fmt.Errorf("the node serves chain id %s, configured %s", id.ToInt(), c.chainID))
	}
	return id.ToInt().String(), nil
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
