// Package rpcfailover is the endpoint failover the chain clients share (package evm for EVM
// networks and Tron, package solana for Solana), so that both fail over and back off the same
// way: a network's RPC endpoints are kept in configured order and a call uses the first one that
// is not backing off after a failure, so it moves to the next endpoint when one fails and back to
// the first once that recovers. Every endpoint is verified (it serves the configured chain)
// before its first use and again after each failure, and a failing endpoint is skipped for 1s,
// then 2s, 4s, ... up to 30s.
//
// DoOther asks an endpoint other than a given one (a second opinion on what that one answered),
// without changing the endpoint in use: package evm cross-checks what credits money with it.
//
// It knows nothing of the RPC protocol: the client of one endpoint (the type parameter C), how to
// dial, verify and close one, and which errors are an endpoint's failure rather than the node's
// answer are the caller's.
//
// # Stalled and lagging nodes
//
// A node can answer every call and still be useless: its head stopped advancing (it lost its
// peers) or lags far behind the network. Head reads a head the way Do calls, and fails over an
// endpoint that is stalled (its head has not moved for the stall window while another endpoint
// reported a higher one) or lagging (another endpoint reported, a stall window earlier, a head
// it has still not reached). Such an endpoint backs off like a failing one and is skipped by
// ordinary calls until a later Head finds it caught up. Nothing extra is read while the head
// moves: only when the current endpoint's head has stayed still for a stall window are the
// other endpoints' heads read (once per window), and a pool of one endpoint never compares.
package rpcfailover

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/stablepay/payout-operator/internal/chain/config"
)

// Endpoint backoff: a failing endpoint is skipped for 1s, then 2s, 4s, ... up to 30s.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// CallTimeout bounds each verification and each call; the clients give their HTTP clients the
// same timeout.
const CallTimeout = 15 * time.Second

// ErrNoEndpoint is returned while every endpoint of a network is failing (and backing off).
var ErrNoEndpoint = errors.New("no usable RPC endpoint")

// Endpoint is one configured endpoint as the callbacks see it.
type Endpoint struct {
	url, display string
}

// URL is the endpoint's URL as configured; its path or query may hold an API key.
func (e Endpoint) URL() string { return e.url }

// Display is the URL with scheme and host only (config.Redact), fit for logs and errors.
func (e Endpoint) Display() string { return e.display }

// StripURL replaces the endpoint's full URL (whose path or query may hold an API key) in an
// error's text by Display: Go's HTTP client, and the RPC libraries, quote the URL they posted
// to.
func (e Endpoint) StripURL(msg string) string {
	for _, u := range []string{e.url, strings.TrimSuffix(e.url, "/")} {
		if u != "" {
			msg = strings.ReplaceAll(msg, u, e.display)
		}
	}
	if parsed, err := url.Parse(e.url); err == nil {
		msg = strings.ReplaceAll(msg, parsed.Redacted(), e.display)
		msg = strings.ReplaceAll(msg, parsed.String(), e.display)
	}
	return msg
}

// Funcs are what a Pool does with one endpoint's client of type C.
type Funcs[C any] struct {
	// Dial makes the client of an endpoint, when it is picked without one (at first use and
	// after a failure closed it). An error counts as the endpoint's failure.
	Dial func(ctx context.Context, url string) (C, error)
	// Close closes a client.
	Close func(C)
	// Verify checks that the endpoint serves the configured chain and returns the identity it
	// reported (chain id, genesis hash). ctx carries CallTimeout.
	Verify func(ctx context.Context, c C, ep Endpoint) (identity string, err error)
}

// Pool holds one network's endpoints. Safe for concurrent use.
type Pool[C any] struct {
	funcs   Funcs[C]
	mu      sync.Mutex
	eps     []*slot[C]
	current int
	// stallAfter is the stall window of Head (0: heads are not compared).
	stallAfter time.Duration
	// now is the clock of the head watch (tests set it).
	now func() time.Time
}

type slot[C any] struct {
	Endpoint
	client   C
	open     bool // client is set
	verified bool
	identity string
	failures int
	retryAt  time.Time
	lastErr  error

	// behind: Head found the endpoint stalled or lagging; ordinary calls skip it while another
	// endpoint is usable, until a Head finds it caught up. lags counts such findings in a row
	// (its backoff).
	behind bool
	lags   int
	// heads it reported in the last two stall windows, oldest first (at least the newest), and
	// when its head last increased.
	heads   []headAt
	movedAt time.Time
	// probedAt is when the other endpoints were last read because this one had stalled.
	probedAt time.Time
}

// headAt is a head an endpoint reported, and when.
type headAt struct {
	head int64
	at   time.Time
}

// New prepares a pool of urls; nothing is dialled or called here.
func New[C any](urls []string, funcs Funcs[C]) (*Pool[C], error) {
	if len(urls) == 0 {
		return nil, errors.New("no RPC endpoint")
	}
	p := &Pool[C]{funcs: funcs, now: time.Now}
	for _, u := range urls {
		p.eps = append(p.eps, &slot[C]{Endpoint: Endpoint{url: u, display: config.Redact(u)}})
	}
	return p, nil
}

// Endpoint is the endpoint last used successfully (scheme and host only).
func (p *Pool[C]) Endpoint() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eps[p.current].display
}

// Identity is what the current endpoint's Verify returned when it was verified ("" before).
func (p *Pool[C]) Identity() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eps[p.current].identity
}

// Close closes the endpoints' clients.
func (p *Pool[C]) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ep := range p.eps {
		p.closeLocked(ep)
	}
}

// Len is the number of endpoints.
func (p *Pool[C]) Len() int { return len(p.eps) }

// Do runs call against the first usable endpoint, verifying it first when needed, with ctx
// bounded by CallTimeout. call says whether its error is the endpoint's failure (failover: the
// endpoint backs off and the next one is tried) or the outcome to return (nil, or the node's
// answer). When every endpoint failed, the errors are joined, each prefixed with its endpoint's
// Display; when ctx ends during a failure, ctx's error is returned.
func (p *Pool[C]) Do(ctx context.Context, call func(ctx context.Context, c C, ep Endpoint) (failover bool, err error)) error {
	_, err := p.do(ctx, choice{}, call)
	return err
}

// DoAt is Do, and also returns the endpoint that answered (the zero Endpoint when none did), so
// that a second opinion can be asked of another one (DoOther).
func (p *Pool[C]) DoAt(ctx context.Context, call func(ctx context.Context, c C, ep Endpoint) (failover bool, err error)) (Endpoint, error) {
	return endpointOf(p.do(ctx, choice{}, call))
}

// DoOther runs call as Do does, on the endpoints other than not: a second opinion on what not
// answered (package evm cross-checks what credits money this way). The endpoint that answers
// does not become the pool's current one, and endpoints found behind are asked only when no
// other is usable. It returns the endpoint that answered; an error wrapping ErrNoEndpoint when
// no other endpoint is usable (there is none, or every other one is failing).
func (p *Pool[C]) DoOther(ctx context.Context, not Endpoint, call func(ctx context.Context, c C, ep Endpoint) (failover bool, err error)) (Endpoint, error) {
	return endpointOf(p.do(ctx, choice{other: &not}, call))
}

func endpointOf[C any](ep *slot[C], err error) (Endpoint, error) {
	if ep == nil {
		return Endpoint{}, err
	}
	return ep.Endpoint, err
}

// choice is which endpoints pick may return.
type choice struct {
	// withBehind: endpoints found behind like the others (Head reads them to see whether they
	// caught up).
	withBehind bool
	// other, when set: any endpoint but this one, and the pool's current endpoint stays as it is
	// (a second opinion, DoOther).
	other *Endpoint
}

// do is Do, returning the endpoint that answered (nil when none did), among the endpoints ch
// allows.
func (p *Pool[C]) do(ctx context.Context, ch choice, call func(ctx context.Context, c C, ep Endpoint) (failover bool, err error)) (*slot[C], error) {
	var errs []error
	for range p.eps {
		ep, c, err := p.pick(ctx, ch)
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
		failover, err := p.try(ctx, ep, c, call)
		if !failover {
			return ep, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		errs = append(errs, fmt.Errorf("%s: %w", ep.display, err))
	}
	return nil, errors.Join(errs...)
}

// try verifies ep when needed and runs call on it; an endpoint's failure (in the verification
// or the call) backs it off and is returned with failover set.
func (p *Pool[C]) try(ctx context.Context, ep *slot[C], c C, call func(ctx context.Context, c C, ep Endpoint) (failover bool, err error)) (bool, error) {
	if err := p.verify(ctx, ep, c); err != nil {
		if ctx.Err() == nil {
			p.failed(ep, err)
		}
		return true, err
	}
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	failover, err := call(cctx, c, ep.Endpoint)
	cancel()
	if !failover {
		p.succeeded(ep)
		return false, err
	}
	if ctx.Err() == nil {
		p.failed(ep, err)
	}
	return true, err
}

// pick returns the first endpoint ch allows that is not backing off, and not behind unless
// ch.withBehind or no other is usable, dialling it when needed. The client is returned with it:
// a concurrent failure may close and clear the slot's.
func (p *Pool[C]) pick(ctx context.Context, ch choice) (*slot[C], C, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	var soonest *slot[C]
	for _, pass := range []bool{ch.withBehind, true} {
		for i, ep := range p.eps {
			if (ep.behind && !pass) || (ch.other != nil && ep.Endpoint == *ch.other) {
				continue
			}
			if now.Before(ep.retryAt) {
				if soonest == nil || ep.retryAt.Before(soonest.retryAt) {
					soonest = ep
				}
				continue
			}
			if !p.openLocked(ctx, ep) {
				continue
			}
			if ch.other == nil {
				p.current = i
			}
			return ep, ep.client, nil
		}
	}
	var none C
	if soonest != nil && soonest.lastErr != nil {
		return nil, none, fmt.Errorf("%w: every endpoint is failing (%s, retried in %s: %v)", ErrNoEndpoint,
			soonest.display, soonest.retryAt.Sub(now).Round(time.Millisecond), soonest.lastErr)
	}
	return nil, none, ErrNoEndpoint
}

// openLocked dials ep when it has no client; false (and ep backing off) when that fails.
func (p *Pool[C]) openLocked(ctx context.Context, ep *slot[C]) bool {
	if ep.open {
		return true
	}
	c, err := p.funcs.Dial(ctx, ep.url)
	if err != nil {
		p.failedLocked(ep, err)
		return false
	}
	ep.client, ep.open = c, true
	return true
}

// verify runs Verify once (and again after each failure).
func (p *Pool[C]) verify(ctx context.Context, ep *slot[C], c C) error {
	p.mu.Lock()
	ok := ep.verified
	p.mu.Unlock()
	if ok {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	identity, err := p.funcs.Verify(cctx, c, ep.Endpoint)
	if err != nil {
		return err
	}
	p.mu.Lock()
	ep.verified, ep.identity = true, identity
	p.mu.Unlock()
	return nil
}

func (p *Pool[C]) succeeded(ep *slot[C]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ep.failures, ep.lastErr = 0, nil
}

func (p *Pool[C]) failed(ep *slot[C], err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failedLocked(ep, err)
}

// failedLocked backs the endpoint off, and drops its client and its verification: it is dialled
// and verified again when it is next picked.
func (p *Pool[C]) failedLocked(ep *slot[C], err error) {
	ep.failures++
	ep.verified = false
	ep.lastErr = err
	backoff := minBackoff << min(ep.failures-1, 6)
	ep.retryAt = p.now().Add(min(backoff, maxBackoff))
	p.closeLocked(ep)
}

func (p *Pool[C]) closeLocked(ep *slot[C]) {
	if ep.open {
		p.funcs.Close(ep.client)
		var none C
		ep.client, ep.open = none, false
	}
}
