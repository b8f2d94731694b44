package apiserver

import (
	"context"
	"encoding/binary"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// TestAuthGuardFloodSparesBystanders (issue 25 item 5): an attacker rotating through 100 000
// IPv6 /64s, one bad credential each within one window, fills the exact table many times over.
// Callers who mistyped a key once before the flood, on a carrier-NAT IPv4 /24 and in another
// IPv6 /48, must not be blocked by it, nor their neighbours who never failed; the attacker's
// own prefixes are blocked; the tables stay within their bounds. The same holds for the shared
// guard while its store is down, where every bad credential blocks its address on the replica.
func TestAuthGuardFloodSparesBystanders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guard func(g *authGuard) limitGuard
	}{
		{"memory", func(g *authGuard) limitGuard { return memoryGuard{g} }},
		{"shared, store down", func(g *authGuard) limitGuard { return newSharedGuard(g, unreachableStore(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			local := newAuthGuard(10*time.Minute, 5, 10, func() time.Time { return now })
			g := tc.guard(local)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			// ten callers behind one carrier NAT /24 and ten hosts of another site's /48 mistype
			// a key once each
			cgnat := func(host byte) netip.Addr { return netip.AddrFrom4([4]byte{100, 64, 7, host}) }
			site := func(subnet uint16) netip.Addr {
				var a [16]byte
				binary.BigEndian.PutUint32(a[0:], 0x20010db8)
				binary.BigEndian.PutUint16(a[4:], 0xbeef)
				binary.BigEndian.PutUint16(a[6:], subnet)
				a[15] = 1
				return netip.AddrFrom16(a)
			}
			for i := range 10 {
				g.fail(ctx, cgnat(byte(i+1)), badCredential)
				g.fail(ctx, site(uint16(i+1)), badCredential)
				now = now.Add(time.Millisecond)
			}

			// the flood: 100 000 /64s of 2001:db8:a::/47, a millisecond apart
			attacker := func(i int) netip.Addr {
				var a [16]byte
				binary.BigEndian.PutUint32(a[0:], 0x20010db8)
				binary.BigEndian.PutUint16(a[4:], 0x000a+uint16(i>>16))
				binary.BigEndian.PutUint16(a[6:], uint16(i))
				a[15] = 1
				return netip.AddrFrom16(a)
			}
			for i := range 100_000 {
				g.fail(ctx, attacker(i), badCredential)
				now = now.Add(time.Millisecond)
			}

			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			entries, coarse := local.sizes()
			t.Logf("after the flood: %d exact and %d coarse entries, heap grew %.1f MiB", entries, coarse, float64(held)/(1<<20))
			if entries > 2*guardEntries || coarse > 2*guardCoarseEntries {
				t.Fatalf("the tables hold %d and %d entries, over their bounds %d and %d", entries, coarse, 2*guardEntries, 2*guardCoarseEntries)
			}

			// neighbours who never failed; the ones who mistyped too, except on the shared guard
			// without its store, which blocks an address after its bad credential by design
			bystanders := []netip.Addr{cgnat(200), site(0xff)}
			if tc.name == "memory" {
				bystanders = append(bystanders, cgnat(1), site(1))
			}
			for _, ip := range bystanders {
				if g.blocked(ctx, ip) {
					t.Errorf("%s is blocked by another's flood", ip)
				}
			}
			// the flood's two /48s: a /64 it used first and one it never used
			for _, ip := range []netip.Addr{attacker(0), attacker(1<<17 - 1)} {
				if !g.blocked(ctx, ip) {
					t.Errorf("%s, in the flood's /48, is not blocked", ip)
				}
			}
		})
	}
}

// sizes returns the number of entries in the exact and the coarse tables of both families.
func (g *authGuard) sizes() (exact, coarse int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.v4.exact.len() + g.v6.exact.len(), g.v4.coarse.len() + g.v6.coarse.len()
}
