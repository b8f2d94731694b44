package apiserver

import (
	"net/netip"
	"slices"
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

// Bounds of the guard's memory. A table entry holds at most limit+1 timestamps per kind, so
// about 250 bytes: the exact table costs at most some 8 MiB, the coarse one a quarter of that.
const (
	// guardEntries bounds the exact table (one entry per IPv4 address or IPv6 /64 with a
	// failure in the window). In ordinary traffic it holds a few addresses; only a flood of
	// distinct addresses fills it.
	guardEntries = 32768
	// guardCoarseEntries bounds the coarse table (one entry per IPv4 /24 or IPv6 /48), which
	// takes the failures of addresses pushed out of the full exact table.
	guardCoarseEntries = 8192
)

// authGuard enforces the brute-force limits of spec 5.3 per caller address over a rolling
// window: at most maxBad bad credentials and maxNone unauthenticated requests. An address
// over either limit is blocked for every request, a valid key included, until the oldest
// failures age out of the window. The logs are exact (a timestamp per failure, at most
// limit+1 kept), not an approximation, so "the 6th in 10 minutes" means exactly that.
//
// Memory is bounded, and so is the work under the mutex every request takes. The exact table
// holds at most guardEntries addresses in the order of their last failure: entries whose
// failures have all aged out are dropped from its old end as time passes (constant amortized
// work per failure, no sweep over the table). When it is full of live entries, which only a
// flood of distinct addresses achieves, the entry failed longest ago is pushed out and its
// failures are added to the coarse table under its IPv4 /24 or IPv6 /48, with the same limits:
// a prefix whose pushed-out addresses failed too often is blocked as a whole while it lasts,
// so an attacker cannot shed a block by rotating addresses, only widen it to its prefix. The
// coarse table is bounded the same way; what falls off its old end is forgotten, the price of
// the bound against a flood spread over more than guardCoarseEntries prefixes at once.
type authGuard struct {
	window  time.Duration
	maxBad  int
	maxNone int
	now     func() time.Time

	mu     sync.Mutex
	exact  *failureTable
	coarse *failureTable
}

func newAuthGuard(window time.Duration, maxBad, maxNone int, now func() time.Time) *authGuard {
	return newBoundedAuthGuard(window, maxBad, maxNone, now, guardEntries, guardCoarseEntries)
}

func newBoundedAuthGuard(window time.Duration, maxBad, maxNone int, now func() time.Time, entries, coarseEntries int) *authGuard {
	return &authGuard{window: window, maxBad: maxBad, maxNone: maxNone, now: now,
		exact: newFailureTable(entries), coarse: newFailureTable(coarseEntries)}
}

// blocked reports whether ip is over a limit now, as an address or through its prefix.
func (g *authGuard) blocked(ip netip.Addr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	cutoff := g.now().Add(-g.window).UnixNano()
	return g.over(g.exact.get(limitKey(ip)), cutoff) || g.over(g.coarse.get(coarseKey(ip)), cutoff)
}

// fail records a failure of ip and reports whether the address is now over a limit (the
// request that put it over is answered 429 rather than 401).
func (g *authGuard) fail(ip netip.Addr, kind failure) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now().UnixNano()
	cutoff := now - g.window.Nanoseconds()
	g.exact.expire(cutoff)
	g.coarse.expire(cutoff)
	key := limitKey(ip)
	e := g.exact.get(key)
	if e == nil {
		if g.exact.full() {
			g.fold(g.exact.removeOldest(), now, cutoff)
		}
		e = g.exact.add(key)
	}
	g.trim(e, cutoff)
	switch kind {
	case badCredential:
		e.bad = appendCapped(e.bad, now, g.maxBad+1)
	case noCredential:
		e.none = appendCapped(e.none, now, g.maxNone+1)
	}
	g.exact.touch(e, now)
	return g.over(e, cutoff) || g.over(g.coarse.get(coarseKey(ip)), cutoff)
}

// block puts ip over its bad-credential limit for a window from now, as maxBad+1 bad
// credentials at once would: the shared guard's answer to a bad credential it cannot record in
// the shared store (sharedGuard.fail).
func (g *authGuard) block(ip netip.Addr) {
	for range g.maxBad + 1 {
		g.fail(ip, badCredential)
	}
}

// fold adds the failures of an entry pushed out of the exact table to its prefix's entry. The
// prefix's entry counts as touched now, which keeps the coarse table in time order (it then
// outlives its newest failure by less than a window, at most).
func (g *authGuard) fold(e *failureEntry, now, cutoff int64) {
	g.trim(e, cutoff)
	if len(e.bad) == 0 && len(e.none) == 0 {
		return
	}
	key := coarseKey(e.key)
	c := g.coarse.get(key)
	if c == nil {
		if g.coarse.full() {
			g.coarse.removeOldest()
		}
		c = g.coarse.add(key)
	}
	g.trim(c, cutoff)
	c.bad = mergeCapped(c.bad, e.bad, g.maxBad+1)
	c.none = mergeCapped(c.none, e.none, g.maxNone+1)
	g.coarse.touch(c, now)
}

// over reports whether e (nil: no failures) is over a limit at cutoff.
func (g *authGuard) over(e *failureEntry, cutoff int64) bool {
	if e == nil {
		return false
	}
	g.trim(e, cutoff)
	return len(e.bad) > g.maxBad || len(e.none) > g.maxNone
}

func (g *authGuard) trim(e *failureEntry, cutoff int64) {
	e.bad = dropBefore(e.bad, cutoff)
	e.none = dropBefore(e.none, cutoff)
}

// appendCapped keeps the newest max entries: one past the limit is all it takes to know an
// address is over it, and the cap bounds the memory an attacker can make us hold.
func appendCapped(log []int64, t int64, max int) []int64 {
	log = append(log, t)
	if len(log) > max {
		log = append(log[:0], log[len(log)-max:]...)
	}
	return log
}

// mergeCapped merges two ascending logs and keeps the newest max entries, ascending.
func mergeCapped(a, b []int64, max int) []int64 {
	out := make([]int64, 0, min(len(a)+len(b), max))
	for i, j := len(a)-1, len(b)-1; len(out) < max && (i >= 0 || j >= 0); {
		if j < 0 || (i >= 0 && a[i] >= b[j]) {
			out = append(out, a[i])
			i--
		} else {
			out = append(out, b[j])
			j--
		}
	}
	slices.Reverse(out)
	return out
}

// dropBefore removes the entries at or before cutoff: an entry exactly a window old has left
// the window.
func dropBefore(log []int64, cutoff int64) []int64 {
	i := 0
	for i < len(log) && log[i] <= cutoff {
		i++
	}
	if i == 0 {
		return log
	}
	return append(log[:0], log[i:]...)
}

// coarseKey is the prefix an address's failures are counted under once the exact table is
// full: an IPv4 /24, an IPv6 /48 (a site).
func coarseKey(a netip.Addr) netip.Addr {
	bits := 24
	if a.Is6() {
		bits = 48
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return a
	}
	return p.Addr()
}

// failureTable is a bounded map of failure logs, kept in the order of their last failure
// (newest at the head), so that the entries whose failures have all aged out are a run at the
// tail.
type failureTable struct {
	entries    map[netip.Addr]*failureEntry
	head, tail *failureEntry
	limit      int
}

type failureEntry struct {
	key        netip.Addr
	prev, next *failureEntry
	last       int64 // newest failure, Unix nanoseconds
	bad, none  []int64
}

func newFailureTable(limit int) *failureTable {
	return &failureTable{entries: map[netip.Addr]*failureEntry{}, limit: max(limit, 1)}
}

func (t *failureTable) get(key netip.Addr) *failureEntry { return t.entries[key] }

func (t *failureTable) full() bool { return len(t.entries) >= t.limit }

func (t *failureTable) len() int { return len(t.entries) }

// add inserts an empty entry for key at the head.
func (t *failureTable) add(key netip.Addr) *failureEntry {
	e := &failureEntry{key: key}
	t.entries[key] = e
	t.pushFront(e)
	return e
}

// touch records that e failed last at the given time and moves it to the head.
func (t *failureTable) touch(e *failureEntry, last int64) {
	e.last = last
	if t.head == e {
		return
	}
	t.unlink(e)
	t.pushFront(e)
}

// expire drops the entries whose last failure is at or before cutoff: all their failures have
// left the window. They sit at the tail, so each call costs what it removes.
func (t *failureTable) expire(cutoff int64) {
	for t.tail != nil && t.tail.last <= cutoff {
		t.remove(t.tail)
	}
}

// removeOldest removes and returns the entry that failed longest ago.
func (t *failureTable) removeOldest() *failureEntry {
	e := t.tail
	t.remove(e)
	return e
}

func (t *failureTable) remove(e *failureEntry) {
	t.unlink(e)
	delete(t.entries, e.key)
}

func (t *failureTable) pushFront(e *failureEntry) {
	e.prev, e.next = nil, t.head
	if t.head != nil {
		t.head.prev = e
	}
	t.head = e
	if t.tail == nil {
		t.tail = e
	}
}

func (t *failureTable) unlink(e *failureEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else if t.head == e {
		t.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else if t.tail == e {
		t.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
