package apiserver

import (
	"net/netip"
	"testing"
	"time"
)

// TestClientShareUnderAFlood: with far more addresses than slots, the busiest address's share
// is found within the Space-Saving bound (1/clientShareSlots), and one request per address
// from a flood reads as a small share.
func TestClientShareUnderAFlood(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := newClientShare(func() time.Time { return now })
	proxy := netip.MustParseAddr("10.0.0.7")
	for i := range 10_000 {
		c.observe(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}))
		if i%4 == 0 {
			c.observe(proxy)
		}
	}
	if got := c.share(); got != 0 {
		t.Fatalf("share before the first window closed: %v, want 0", got)
	}
	now = now.Add(time.Minute)
	want := 2500.0 / 12500
	if got := c.share(); got < want || got > want+1.0/clientShareSlots {
		t.Errorf("share = %v, want between %v and %v", got, want, want+1.0/clientShareSlots)
	}
	if len(c.slots) > clientShareSlots {
		t.Errorf("%d slots, over the bound %d", len(c.slots), clientShareSlots)
	}
	// a window later without requests the share is 0 again
	now = now.Add(2 * time.Minute)
	if got := c.share(); got != 0 {
		t.Errorf("share after a quiet window: %v, want 0", got)
	}
}
