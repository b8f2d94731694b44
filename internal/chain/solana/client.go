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
	"sync/atomic"

	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/stablepay/payout-operator/internal/chain/rpcfailover"
)

// ErrNoEndpoint is returned while every endpoint of the network is failing (and backing off).
var ErrNoEndpoint = rpcfailover.ErrNoEndpoint

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

// Client calls one Solana network's JSON-RPC endpoints, with the failover of the EVM client
// (package rpcfailover): the first endpoint in configured order that is not backing off after a
// failure is used, each one checked first against the configured genesis hash (getGenesisHash)
// when one is set. A node's JSON-RPC error is returned as a *NodeError; a transport error moves
// to the next endpoint. Safe for concurrent use.
type Client struct {
	genesis string
	pool    *rpcfailover.Pool[*rpc.Client]

	// Requests counts the HTTP requests made.
	Requests atomic.Int64
}

// NewClient prepares a client of urls; genesisHash, when set, is the genesis hash every
// endpoint must report. Nothing is called here.
func NewClient(genesisHash string, urls []string) (*Client, error) {
	c := &Client{genesis: genesisHash}
	pool, err := rpcfailover.New(urls, rpcfailover.Funcs[*rpc.Client]{
		Dial: func(_ context.Context, url string) (*rpc.Client, error) {
			return rpc.NewWithCustomRPCClient(jsonrpc.NewClientWithOpts(url, &jsonrpc.RPCClientOpts{
				HTTPClient: &http.Client{Timeout: rpcfailover.CallTimeout},
			})), nil
		},
		Close:  func(rc *rpc.Client) { _ = rc.Close() },
		Verify: c.verify,
	})
	if err != nil {
		return nil, err
	}
	c.pool = pool
	return c, nil
}

// Endpoint is the endpoint last used successfully (scheme and host only).
func (c *Client) Endpoint() string { return c.pool.Endpoint() }

// Close closes idle connections.
func (c *Client) Close() { c.pool.Close() }

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
	return c.pool.Do(ctx, func(ctx context.Context, rc *rpc.Client, ep rpcfailover.Endpoint) (bool, error) {
		c.Requests.Add(1)
		err := wrap(ep, method, fn(ctx, rc))
		if err == nil || (IsNodeError(err) && !skipOnNodeError) {
			return false, err
		}
		return true, err
	})
}

// wrap turns solana-go's errors into ours: a *NodeError for a node's answer, a transport error
// without the endpoint's full URL (Go's HTTP client and solana-go quote it; API keys live in
// paths).
func wrap(ep rpcfailover.Endpoint, method string, err error) error {
	if err == nil {
		return nil
	}
	var re *jsonrpc.RPCError
	if errors.As(err, &re) {
		return &NodeError{Method: method, Code: re.Code, Message: re.Message}
	}
	return &transportError{msg: method + ": " + ep.StripURL(err.Error()), err: err}
}

// transportError keeps the cause for errors.Is and errors.As, with a text free of the URL.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return e.msg }
func (e *transportError) Unwrap() error { return e.err }

// verify reads the endpoint's genesis hash (rpcfailover calls it once, and again after each
// failure) and checks it against the configured one.
func (c *Client) verify(ctx context.Context, rc *rpc.Client, ep rpcfailover.Endpoint) (string, error) {
	c.Requests.Add(1)
	h, err := rc.GetGenesisHash(ctx)
	if err != nil {
		return "", wrap(ep, "getGenesisHash", err)
	}
	if c.genesis != "" && h.String() != c.genesis {
		return "", fmt.Errorf("the node serves the cluster of genesis %s, configured %s", h, c.genesis)
	}
	return h.String(), nil
}

// Genesis is the genesis hash the current endpoint reported when it was verified ("" before).
func (c *Client) Genesis() string { return c.pool.Identity() }
