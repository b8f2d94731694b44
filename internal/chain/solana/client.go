// Package solana reads Solana over its JSON-RPC (github.com/gagliardetto/solana-go): v2
// transactions by signature, and the slot and health the network's watcher reports. It knows
// nothing of Kubernetes.
//
// # What is read
//
// A v2 transfer on Solana is USDC sent to the platform's owner address; the caller confirms it by
// its signature. LookupTx asks getTransaction (jsonParsed, commitment confirmed,
// maxSupportedTransactionVersion 0) and reports the SPL Token transfers of a configured mint in
// it, in execution order: transfer and transferChecked instructions of the Token and Token-2022
// programs, top-level and inner. Each is reported with the owners of its source and destination
// token accounts (from the transaction's pre- and post-token balances, which carry them), so To
// is the platform's owner address whatever token account received the funds (usually its
// associated token account), and From the sending wallet. A failed transaction (meta.err) moved
// nothing and reports no transfers.
//
// # Confirmations
//
// A Solana transaction's confirmations are defined as on EVM chains, counting confirmed blocks:
// getSignatureStatuses gives the number of confirmed blocks built on the transaction's block;
// its confirmations are that plus one (its own block), so a transaction the cluster has just
// confirmed has one. A rooted (finalized) transaction, for which the node gives no count, has
// config.SolanaFinalizedConfirmations (32): Solana roots a block once 31 confirmed blocks are on
// it. A transaction only processed (not yet voted on by a supermajority) has none. The
// network's commitment setting fixes the requirement: finalized needs 32, i.e. finalized;
// confirmed needs one.
package solana

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/stablepay/payout-operator/internal/chain/config"
)

// Endpoint backoff, as for EVM endpoints: a failing endpoint is skipped for 1s, 2s, 4s, ... up
// to 30s.
const (
	minEndpointBackoff = time.Second
	maxEndpointBackoff = 30 * time.Second
	callTimeout        = 15 * time.Second
)

// ErrNoEndpoint is returned while every endpoint of the network is failing (and backing off).
var ErrNoEndpoint = errors.New("no usable RPC endpoint")

// NodeError is a JSON-RPC error a node answered (as opposed to a failure to reach it).
type NodeError struct {
	Method  string
	Code    int
	Message string
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("%s: the node answered error %d: %s", e.Method, e.Code, e.Message)
}

// IsNodeError reports whether err is a node's JSON-RPC error.
func IsNodeError(err error) bool {
	var ne *NodeError
	return errors.As(err, &ne)
}

// Client calls one Solana network's JSON-RPC endpoints, with the failover of the EVM client:
// the first endpoint in configured order that is not backing off after a failure is used, each
// one checked first against the configured genesis hash (getGenesisHash) when one is set. A
// node's JSON-RPC error is returned as a *NodeError; a transport error moves to the next
// endpoint. Safe for concurrent use.
type Client struct {
	genesis string
	eps     []*endpoint
	mu      sync.Mutex
	current int

	// Requests counts the HTTP requests made.
	Requests atomic.Int64
}

type endpoint struct {
	url, display string
	rpc          *rpc.Client
	verified     bool
	genesis      string
	failures     int
	retryAt      time.Time
	lastErr      error
}

// NewClient prepares a client of urls; genesisHash, when set, is the genesis hash every
// endpoint must report. Nothing is called here.
func NewClient(genesisHash string, urls []string) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("no RPC endpoint")
	}
	c := &Client{genesis: genesisHash}
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

// Close closes idle connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ep := range c.eps {
		if ep.rpc != nil {
			_ = ep.rpc.Close()
			ep.rpc = nil
		}
	}
}

// Do runs fn against the first usable endpoint, failing over on transport errors. A node's
// JSON-RPC error ends the call as a *NodeError of method.
func (c *Client) Do(ctx context.Context, method string, fn func(context.Context, *rpc.Client) error) error {
	return c.do(ctx, method, false, fn)
}

// DoOrSkip is Do where a node's JSON-RPC error also counts as the endpoint's failure, so the
// next endpoint is tried (getHealth: an unhealthy node is not used while another is healthy).
func (c *Client) DoOrSkip(ctx context.Context, method string, fn func(context.Context, *rpc.Client) error) error {
	return c.do(ctx, method, true, fn)
}

func (c *Client) do(ctx context.Context, method string, skipOnNodeError bool, fn func(context.Context, *rpc.Client) error) error {
	var errs []error
	for range c.eps {
		ep, rc, err := c.pick()
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := c.verify(ctx, ep, rc); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.failed(ep, err)
			errs = append(errs, fmt.Errorf("%s: %w", ep.display, err))
			continue
		}
		c.Requests.Add(1)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err = ep.wrap(method, fn(cctx, rc))
		cancel()
		if err == nil || (IsNodeError(err) && !skipOnNodeError) {
			c.succeeded(ep)
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.failed(ep, err)
		errs = append(errs, fmt.Errorf("%s: %w", ep.display, err))
	}
	return errors.Join(errs...)
}

// wrap turns solana-go's errors into ours: a *NodeError for a node's answer, a transport error
// without the endpoint's full URL (Go's HTTP client and solana-go quote it; API keys live in
// paths).
func (ep *endpoint) wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	var re *jsonrpc.RPCError
	if errors.As(err, &re) {
		return &NodeError{Method: method, Code: re.Code, Message: re.Message}
	}
	msg := err.Error()
	clean := msg
	for _, u := range []string{ep.url, strings.TrimSuffix(ep.url, "/")} {
		if u != "" {
			clean = strings.ReplaceAll(clean, u, ep.display)
		}
	}
	if parsed, perr := url.Parse(ep.url); perr == nil {
		clean = strings.ReplaceAll(clean, parsed.Redacted(), ep.display)
	}
	return &transportError{msg: method + ": " + clean, err: err}
}

// transportError keeps the cause for errors.Is and errors.As, with a text free of the URL.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return e.msg }
func (e *transportError) Unwrap() error { return e.err }

// pick returns the first endpoint that is not backing off.
func (c *Client) pick() (*endpoint, *rpc.Client, error) {
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
		if ep.rpc == nil {
			ep.rpc = rpc.NewWithCustomRPCClient(jsonrpc.NewClientWithOpts(ep.url, &jsonrpc.RPCClientOpts{
				HTTPClient: &http.Client{Timeout: callTimeout},
			}))
		}
		c.current = i
		return ep, ep.rpc, nil
	}
	if soonest != nil && soonest.lastErr != nil {
		return nil, nil, fmt.Errorf("%w: every endpoint is failing (%s, retried in %s: %v)", ErrNoEndpoint,
			soonest.display, time.Until(soonest.retryAt).Round(time.Millisecond), soonest.lastErr)
	}
	return nil, nil, ErrNoEndpoint
}

// verify reads the endpoint's genesis hash once (and again after each failure) and checks it
// against the configured one.
func (c *Client) verify(ctx context.Context, ep *endpoint, rc *rpc.Client) error {
	c.mu.Lock()
	ok := ep.verified
	c.mu.Unlock()
	if ok {
		return nil
	}
	c.Requests.Add(1)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h, err := rc.GetGenesisHash(cctx)
	if err != nil {
		return ep.wrap("getGenesisHash", err)
	}
	if c.genesis != "" && h.String() != c.genesis {
		return fmt.Errorf("the node serves the cluster of genesis %s, configured %s", h, c.genesis)
	}
	c.mu.Lock()
	ep.verified, ep.genesis = true, h.String()
	c.mu.Unlock()
	return nil
}

// Genesis is the genesis hash the current endpoint reported when it was verified ("" before).
func (c *Client) Genesis() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eps[c.current].genesis
}

func (c *Client) succeeded(ep *endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ep.failures, ep.lastErr = 0, nil
}

func (c *Client) failed(ep *endpoint, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ep.failures++
	ep.verified = false
	ep.lastErr = err
	backoff := minEndpointBackoff << min(ep.failures-1, 6)
	ep.retryAt = time.Now().Add(min(backoff, maxEndpointBackoff))
	if ep.rpc != nil {
		_ = ep.rpc.Close()
		ep.rpc = nil
	}
}
