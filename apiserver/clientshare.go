package apiserver

import (
	"net/netip"
	"sync"
	"time"
)

// clientShareSlots is how many addresses clientShare counts at once. Cardinality and work per
// request stay bounded however many addresses call; with more distinct addresses than slots,
// the busiest one's count is overestimated by at most total/clientShareSlots (Space-Saving).
const clientShareSlots = 16

// clientShare measures how much of the facade's traffic comes from its busiest client address,
// per one-minute window: payout_facade_busiest_client_share. Behind an Ingress or load balancer
// that --trusted-proxies does not name, every caller has the proxy's address, the share is 1,
// and the brute-force limits of spec 5.3 lock every tenant out at once (issue 25 item 3); with
// real client addresses no single address carries most of a busy facade's traffic.
//
// Addresses are counted as the limits count them (limitKey: an IPv4 address or an IPv6 /64)
// with the Space-Saving algorithm (Metwally, Agrawal, El Abbadi, 2005): a fixed set of slots;
// an address without one takes the slot of the smallest count and continues from it. An
// address with more than total/clientShareSlots requests always holds a slot, and the busiest
// count is exact while the window sees at most clientShareSlots addresses.
type clientShare struct {
	now    func() time.Time
	window time.Duration

	mu    sync.Mutex
	start time.Time // of the window being counted
	total int
	slots []shareSlot
	last  float64 // share of the last complete window
}

type shareSlot struct {
	key   netip.Addr
	count int
}

func newClientShare(now func() time.Time) *clientShare {
	return &clientShare{now: now, window: time.Minute, start: now(), slots: make([]shareSlot, 0, clientShareSlots)}
}

// observe counts one request from ip.
func (c *clientShare) observe(ip netip.Addr) {
	key := limitKey(ip)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(c.now())
	c.total++
	smallest := -1
	for i := range c.slots {
		if c.slots[i].key == key {
			c.slots[i].count++
			return
		}
		if smallest < 0 || c.slots[i].count < c.slots[smallest].count {
			smallest = i
		}
	}
	if len(c.slots) < cap(c.slots) {
		c.slots = append(c.slots, shareSlot{key: key, count: 1})
		return
	}
	c.slots[smallest] = shareSlot{key: key, count: c.slots[smallest].count + 1}
}

// share returns the busiest address's share of the requests of the last complete window: 0
// when that window saw none.
func (c *clientShare) share() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(c.now())
	return c.last
}

// roll closes the window being counted once now is past it. A window in which nothing arrived
// since is a share of 0.
func (c *clientShare) roll(now time.Time) {
	elapsed := now.Sub(c.start)
	if elapsed < c.window {
		return
	}
	c.last = 0
	if elapsed < 2*c.window && c.total > 0 {
		top := 0
		for _, s := range c.slots {
			top = max(top, s.count)
		}
		c.last = float64(top) / float64(c.total)
	}
	c.start = c.start.Add(elapsed.Truncate(c.window))
	c.total = 0
	c.slots = c.slots[:0]
}
