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
// limit there is blocked without asking the store.
//
// When the store cannot be asked (down, too slow, or bypassed after a failure), the two kinds of
// failure are treated differently, because only one of them is a guess at a key:
//
//   - A bad credential fails closed: the request gets the answer the local guard gives (401,
//     or 429 when the address is over the limit here), and the address is then blocked on this
//     replica for a window, as if it had spent all its bad credentials at once. A brute-force
//     attempt so gets at most one guess per replica per window while the store is down, N
//     across N replicas, never the 5 per replica (5 N) that counting on its own would allow.
//     Callers with valid keys are not touched unless they share the address with a caller
//     sending bad ones.
//   - A missing credential (no Authorization, not Bearer) guesses nothing: it is counted by
//     the local guard alone, so its limit holds per replica (N times it across N replicas)
//     until the store answers again. Blocking an address at its first unauthenticated request
//     would lock out every client that first asks without credentials and then retries with
//     them.
//   - The door's check (blocked) falls back to the local guard: refusing every address the
//     store cannot vouch for would answer every request of every caller 429 for as long as
//     Redis is down, turning a cache outage into a payments outage.
//
// The store's errors are counted (payout_facade_limit_store_errors_total) and the outage is
// logged.
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
		if kind == badCredential {
			// fail closed: see the type's comment
			g.local.block(ip)
		}
		return over
	}
	return over || g.log.Over(c)
}
