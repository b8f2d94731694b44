package apiserver

import (
	"net/netip"
	"sync"
	"time"
)

// failure is a kind of failed authentication (spec 5.3).
type failure int

const (
	// badCredential: a malformed bearer value or an unknown, unmatched or revoked key.
	badCredential failure = iota
	// noCredential: a request without usable authentication (no Authorization header, or not
	// a Bearer credential).
	noCredential
)

// authGuard enforces the brute-force limits of spec 5.3 per caller address over a rolling
// window: at most maxBad bad credentials and maxNone unauthenticated requests. An address
// over either limit is blocked for every request, a valid key included, until the oldest
// failures age out of the window. The logs are exact (a timestamp per failure, at most
// limit+1 kept), not an approximation, so "the 6th in 10 minutes" means exactly that.
type authGuard struct {
	window  time.Duration
	maxBad  int
	maxNone int
	now     func() time.Time

	mu    sync.Mutex
	ips   map[netip.Addr]*failureLog
	calls int
}

type failureLog struct {
	bad, none []time.Time
}

func newAuthGuard(window time.Duration, maxBad, maxNone int, now func() time.Time) *authGuard {
	return &authGuard{window: window, maxBad: maxBad, maxNone: maxNone, now: now, ips: map[netip.Addr]*failureLog{}}
}

// blocked reports whether ip is over a limit now.
func (g *authGuard) blocked(ip netip.Addr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.ips[limitKey(ip)]
	if l == nil {
		return false
	}
	g.trim(l, g.now())
	return len(l.bad) > g.maxBad || len(l.none) > g.maxNone
}

// fail records a failure of ip and reports whether the address is now over a limit (the
// request that put it over is answered 429 rather than 401).
func (g *authGuard) fail(ip netip.Addr, kind failure) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.calls++
	if g.calls%1024 == 0 {
		g.sweep(now)
	}
	key := limitKey(ip)
	l := g.ips[key]
	if l == nil {
		l = &failureLog{}
		g.ips[key] = l
	}
	g.trim(l, now)
	switch kind {
	case badCredential:
		l.bad = appendCapped(l.bad, now, g.maxBad+1)
	case noCredential:
		l.none = appendCapped(l.none, now, g.maxNone+1)
	}
	return len(l.bad) > g.maxBad || len(l.none) > g.maxNone
}

// appendCapped keeps the newest max entries: one past the limit is all it takes to know an
// address is over it, and the cap bounds the memory an attacker can make us hold.
func appendCapped(log []time.Time, t time.Time, max int) []time.Time {
	log = append(log, t)
	if len(log) > max {
		log = log[len(log)-max:]
	}
	return log
}

func (g *authGuard) trim(l *failureLog, now time.Time) {
	l.bad = dropBefore(l.bad, now.Add(-g.window))
	l.none = dropBefore(l.none, now.Add(-g.window))
}

// dropBefore removes the entries at or before cutoff: an entry exactly a window old has left
// the window.
func dropBefore(log []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(log) && !log[i].After(cutoff) {
		i++
	}
	return log[i:]
}

// sweep forgets addresses whose failures have all aged out.
func (g *authGuard) sweep(now time.Time) {
	for k, l := range g.ips {
		g.trim(l, now)
		if len(l.bad) == 0 && len(l.none) == 0 {
			delete(g.ips, k)
		}
	}
}
