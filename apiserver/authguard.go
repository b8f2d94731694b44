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

// Bounds of the guard's memory, per address family. A table entry holds at most limit+1
// timestamps per kind, so about 250 bytes: the exact tables cost at most some 8 MiB, the coarse
// ones a quarter of that.
const (
	// guardEntries bounds each family's exact table (one entry per IPv4 address or IPv6 /64
	// with a failure in the window). In ordinary traffic it holds a few addresses; only a flood
	// of distinct addresses fills it.
	guardEntries = 16384
	// guardCoarseEntries bounds each family's coarse table (one entry per IPv4 /24 or IPv6
	// /48), which counts the failures of addresses that found the exact table full.
	guardCoarseEntries = 4096
)

// authGuard enforces the brute-force limits of spec 5.3 per caller address over a rolling
// window: at most maxBad bad credentials and maxNone unauthenticated requests. An address
// over either limit is blocked for every request, a valid key included, until the oldest
// failures age out of the window. The logs are exact (a timestamp per failure, at most
// limit+1 kept), not an approximation, so "the 6th in 10 minutes" means exactly that.
//
// Memory is bounded, and so is the work under the mutex every request takes. Each address
// family has an exact table of at most guardEntries addresses in the order of their last
// failure: entries whose failures have all aged out are dropped from its old end as time passes
// (constant amortized work per failure, no sweep over the table). When it is full of live
// entries, which only a flood of distinct addresses achieves, the failure of an address that
// has no entry is counted under its IPv4 /24 or IPv6 /48 in the coarse table, with the same
// limits: a prefix whose newcomers fail too often is blocked as a whole while it lasts, so an
// attacker cannot escape the limits by rotating addresses, only widen its block to its prefix.
//
// Nobody is pushed out of the exact table to make room (issue 25 item 5): pushing out the
// entry that failed longest ago and merging its failures into its prefix, as the guard once
// did, let a flood move the single mistyped keys of callers behind one carrier NAT into their
// shared /24, which six of them then blocked for everyone behind it. Now a caller's failures
// stay its own until they age out, and only failures that arrive while the table is full are
// counted by prefix; the two families have their own tables, so an IPv6 flood (the cheapest,
// a /48 holds 65 536 /64s) cannot fill the table IPv4 callers need. The coarse table is bounded
// the same way; what falls off its old end is forgotten, the price of the bound against a
// flood spread over more than guardCoarseEntries prefixes at once.
type authGuard struct {
	window  time.Duration
	maxBad  int
	maxNone int
	now     func() time.Time

	mu sync.Mutex
	// v4 and v6 are the tables of each address family.
	v4, v6 guardTables
}

// guardTables are one address family's exact and coarse tables.
type guardTables struct{ exact, coarse *failureTable }

func newAuthGuard(window time.Duration, maxBad, maxNone int, now func() time.Time) *authGuard {
	return newBoundedAuthGuard(window, maxBad, maxNone, now, guardEntries, guardCoarseEntries)
}

// newBoundedAuthGuard bounds each family's exact table to entries and its coarse table to
// coarseEntries.
func newBoundedAuthGuard(window time.Duration, maxBad, maxNone int, now func() time.Time, entries, coarseEntries int) *authGuard {
	tables := func() guardTables {
		return guardTables{exact: newFailureTable(entries), coarse: newFailureTable(coarseEntries)}
	}
	return &authGuard{window: window, maxBad: maxBad, maxNone: maxNone, now: now, v4: tables(), v6: tables()}
}

func (g *authGuard) tables(ip netip.Addr) *guardTables {
	if ip.Is6() {
		return &g.v6
	}
	return &g.v4
}

// blocked reports whether ip is over a limit now, as an address or through its prefix.
func (g *authGuard) blocked(ip netip.Addr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	cutoff := g.now().Add(-g.window).UnixNano()
	t := g.tables(ip)
	return g.over(t.exact.get(limitKey(ip)), cutoff) || g.over(t.coarse.get(coarseKey(ip)), cutoff)
}

// fail records a failure of ip and reports whether the address is now over a limit (the
// request that put it over is answered 429 rather than 401).
func (g *authGuard) fail(ip netip.Addr, kind failure) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now().UnixNano()
	cutoff := now - g.window.Nanoseconds()
	for _, t := range []*failureTable{g.v4.exact, g.v4.coarse, g.v6.exact, g.v6.coarse} {
		t.expire(cutoff)
	}
	t := g.tables(ip)
	table, key := t.exact, limitKey(ip)
	if t.exact.get(key) == nil && t.exact.full() {
		table, key = t.coarse, coarseKey(ip)
	}
	e := table.get(key)
	if e == nil {
		if table.full() {
			// only the coarse table can be full here: see the type's comment
			table.removeOldest()
		}
		e = table.add(key)
	}
	g.trim(e, cutoff)
	switch kind {
	case badCredential:
		e.bad = appendCapped(e.bad, now, g.maxBad+1)
	case noCredential:
		e.none = appendCapped(e.none, now, g.maxNone+1)
	}
	table.touch(e, now)
	return g.over(t.exact.get(limitKey(ip)), cutoff) || g.over(t.coarse.get(coarseKey(ip)), cutoff)
}

// block puts ip over its bad-credential limit for a window from now, as maxBad+1 bad
// credentials at once would: the shared guard's answer to a bad credential it cannot record in
// the shared store (sharedGuard.fail), which has just been recorded here by fail. An address
// whose failure went to its prefix, the exact table being full, is left at that one failure:
// blocking its whole /24 or /48 for one bad credential would lock out its neighbours.
func (g *authGuard) block(ip netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.tables(ip).exact.get(limitKey(ip))
	if e == nil {
		return
	}
	now := g.now().UnixNano()
	for len(e.bad) <= g.maxBad {
		e.bad = appendCapped(e.bad, now, g.maxBad+1)
	}
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

// coarseKey is the prefix an address's failures are counted under while the exact table is
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
