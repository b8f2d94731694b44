package apiserver

import (
	"context"
	"net/netip"

	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// limitGuard is the brute-force limits of spec 5.3 as the door and authentication use them:
// blocked asks whether an address is over a limit, fail records a failure of it and reports
// whether it is over a limit now.
type limitGuard interface {
	blocked(ctx context.Context, ip netip.Addr) bool
	fail(ctx context.Context, ip netip.Addr, kind failure) bool
}

// memoryGuard is the guard of one replica: its own exact logs, in memory.
type memoryGuard struct{ g *authGuard }

func (m memoryGuard) blocked(_ context.Context, ip netip.Addr) bool { return m.g.blocked(ip) }

func (m memoryGuard) fail(_ context.Context, ip netip.Addr, kind failure) bool {
	return m.g.fail(ip, kind)
}

// sharedGuard keeps the logs of spec 5.3 in the shared store, so that they hold across the
// replicas: the sixth bad credential from an address is refused whichever replica each of the
// six reached, and a blocked address is blocked on every replica. The window, the limits and
// the unit counted (an IPv4 address or an IPv6 /64) are the in-memory guard's.
//
// Every failure is recorded in this replica's in-memory guard as well, and an address over a
// limit there is blocked without asking the store. When the store fails, the replica falls
// back to that guard alone: the brute-force limits then hold per replica (an address gets up
// to N times the limits across N replicas) until the store answers again. That is failing open
// to a weaker limit, not to none, and it is the choice for this guard: failing closed would
// answer every request of every caller 429 for as long as Redis is down, turning a cache
// outage into a payments outage, while the API keys it protects hold 256 random bits that no
// number of guesses N times 5 per 10 minutes comes near. The store's errors are counted
// (payout_facade_limit_store_errors_total) and the outage is logged.
type sharedGuard struct {
	local *authGuard
	log   *sharedlimits.AuthLog
	store *sharedlimits.Store
}

func newSharedGuard(local *authGuard, store *sharedlimits.Store) *sharedGuard {
	return &sharedGuard{local: local, store: store, log: store.AuthLog(sharedlimits.AuthPolicy{
		Window: local.window, MaxBad: local.maxBad, MaxNone: local.maxNone,
	})}
}

func (g *sharedGuard) blocked(ctx context.Context, ip netip.Addr) bool {
	if g.local.blocked(ip) {
		return true
	}
	var c sharedlimits.Counts
	if !g.store.Call(ctx, metrics.LimitAuthFailures, func(ctx context.Context) (err error) {
		c, err = g.log.Counts(ctx, limitKey(ip).String(), g.local.now())
		return err
	}) {
		return false
	}
	return g.log.Over(c)
}

func (g *sharedGuard) fail(ctx context.Context, ip netip.Addr, kind failure) bool {
	over := g.local.fail(ip, kind)
	k := sharedlimits.BadCredential
	if kind == noCredential {
		k = sharedlimits.NoCredential
	}
	var c sharedlimits.Counts
	if !g.store.Call(ctx, metrics.LimitAuthFailures, func(ctx context.Context) (err error) {
		c, err = g.log.Fail(ctx, limitKey(ip).String(), k, g.local.now())
		return err
	}) {
		return over
	}
	return over || g.log.Over(c)
}
