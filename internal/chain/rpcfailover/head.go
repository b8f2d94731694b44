package rpcfailover

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SetStallAfter sets the stall window of Head: how long an endpoint's head may stay still
// before the other endpoints' heads are read, and how far behind another endpoint (in time) an
// endpoint may lag. 0 (the default) turns the comparison off.
func (p *Pool[C]) SetStallAfter(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stallAfter = d
}

// HeadFunc reads an endpoint's head (and whatever else the caller asks in the same request);
// failover and err are as for Do's call.
type HeadFunc[C any] func(ctx context.Context, c C, ep Endpoint) (head int64, failover bool, err error)

// Head reads the head with read, as Do calls, and fails over an endpoint that is stalled or
// lagging (see the package documentation): it is marked behind and backs off, and the head is
// read from the next endpoint. Only when the endpoint's head has stayed still for the stall
// window are the others read, once per window. An endpoint found behind earlier is read again
// here once its backoff has passed, and used again when it has caught up. The head returned is
// the one of the endpoint kept.
func (p *Pool[C]) Head(ctx context.Context, read HeadFunc[C]) (int64, error) {
	p.mu.Lock()
	window, n := p.stallAfter, len(p.eps)
	p.mu.Unlock()
	var behind []error
	for range n {
		var head int64
		ep, err := p.do(ctx, choice{withBehind: true}, func(ctx context.Context, c C, ep Endpoint) (bool, error) {
			h, failover, err := read(ctx, c, ep)
			head = h
			return failover, err
		})
		if err != nil || window <= 0 || n == 1 {
			return head, errors.Join(append(behind, err)...)
		}
		now := p.now()
		verdict := p.judge(ep, head, now)
		if verdict == "" && p.stalledUnprobed(ep, now) {
			p.probe(ctx, ep, read)
			verdict = p.judge(ep, head, p.now())
		}
		if verdict == "" {
			p.caughtUp(ep)
			return head, nil
		}
		p.setBehind(ep, errors.New(verdict))
		behind = append(behind, fmt.Errorf("%s: %s", ep.display, verdict))
	}
	return 0, errors.Join(append(behind, ErrNoEndpoint)...)
}

// judge records head as ep's, at now, and says why ep is behind ("" when it is not): lagging
// (another endpoint reported a higher head a stall window ago or earlier), stalled (its head
// has not moved for a stall window and another endpoint reported a higher one), or, when it was
// found behind before, not caught up (it has not reached what the others reported by the time
// it was last read: a node is used again once it has caught up, not as soon as it moves).
func (p *Pool[C]) judge(ep *slot[C], head int64, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lastRead time.Time
	if n := len(ep.heads); n > 0 {
		lastRead = ep.heads[n-1].at
	}
	p.recordLocked(ep, head, now)
	window := p.stallAfter
	var ahead *slot[C]
	var aheadOf headAt
	for _, other := range p.eps {
		if other == ep {
			continue
		}
		for _, h := range other.heads {
			if h.at.Before(now.Add(-2 * window)) {
				continue // too old to say where the network is (a dev chain may have restarted)
			}
			if h.head > head && !h.at.After(now.Add(-window)) {
				return fmt.Sprintf("lagging: its head is block %d, %s reported block %d %s ago",
					head, other.display, h.head, now.Sub(h.at).Round(time.Millisecond))
			}
			if h.head > head && (ahead == nil || h.head > aheadOf.head) {
				ahead, aheadOf = other, h
			}
			if ep.behind && h.head > head && !h.at.After(lastRead) {
				return fmt.Sprintf("not caught up: its head is block %d, %s reported block %d before it was last read",
					head, other.display, h.head)
			}
		}
	}
	if still := now.Sub(ep.movedAt); still >= window && ahead != nil {
		return fmt.Sprintf("stalled: its head has stayed at block %d for %s while %s reported block %d",
			head, still.Round(time.Millisecond), ahead.display, aheadOf.head)
	}
	return ""
}

// recordLocked keeps head as a report of ep at now: its head moved when it is higher than the
// newest one (or the first), and reports older than two stall windows are dropped, but the
// newest.
func (p *Pool[C]) recordLocked(ep *slot[C], head int64, now time.Time) {
	if n := len(ep.heads); n == 0 || head > ep.heads[n-1].head {
		ep.movedAt = now
	}
	ep.heads = append(ep.heads, headAt{head: head, at: now})
	keep := now.Add(-2 * p.stallAfter)
	drop := 0
	for drop < len(ep.heads)-1 && ep.heads[drop].at.Before(keep) {
		drop++
	}
	ep.heads = append(ep.heads[:0], ep.heads[drop:]...)
}

// stalledUnprobed reports whether ep's head has stayed still for the stall window and the
// other endpoints were not read for it during the last window; it notes the probe as done.
func (p *Pool[C]) stalledUnprobed(ep *slot[C], now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(ep.movedAt) < p.stallAfter || now.Sub(ep.probedAt) < p.stallAfter {
		return false
	}
	ep.probedAt = now
	return true
}

// probe reads the head of every endpoint other than ep that is not backing off, and records
// it. An endpoint that fails here backs off as in Do.
func (p *Pool[C]) probe(ctx context.Context, ep *slot[C], read HeadFunc[C]) {
	p.mu.Lock()
	others := make([]*slot[C], 0, len(p.eps)-1)
	now := p.now()
	for _, other := range p.eps {
		if other != ep && !now.Before(other.retryAt) && p.openLocked(ctx, other) {
			others = append(others, other)
		}
	}
	p.mu.Unlock()
	for _, other := range others {
		p.mu.Lock()
		c := other.client
		p.mu.Unlock()
		var head int64
		failover, err := p.try(ctx, other, c, func(ctx context.Context, c C, ep Endpoint) (bool, error) {
			h, failover, err := read(ctx, c, ep)
			head = h
			return failover, err
		})
		if !failover && err == nil {
			p.mu.Lock()
			p.recordLocked(other, head, p.now())
			p.mu.Unlock()
		}
	}
}

// setBehind marks ep behind and backs it off as a failing endpoint (keeping its client: it
// answers, it is only late).
func (p *Pool[C]) setBehind(ep *slot[C], err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ep.behind = true
	ep.lags++
	ep.lastErr = err
	ep.retryAt = p.now().Add(min(minBackoff<<min(ep.lags-1, 6), maxBackoff))
}

// caughtUp clears ep's behind mark: ordinary calls use it again (the first such endpoint in
// configured order).
func (p *Pool[C]) caughtUp(ep *slot[C]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ep.behind, ep.lags = false, 0
}
