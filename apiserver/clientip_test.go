package apiserver

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestClientIP(t *testing.T) {
	trusted, err := ParsePrefixes([]string{"10.0.0.0/8", "192.168.1.1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"no proxies: the peer, header ignored", "203.0.113.7:5000", []string{"1.2.3.4"}, nil, "203.0.113.7"},
		{"untrusted peer: header ignored", "203.0.113.7:5000", []string{"1.2.3.4"}, trusted, "203.0.113.7"},
		{"trusted proxy: the last hop it saw", "10.1.2.3:5000", []string{"198.51.100.9"}, trusted, "198.51.100.9"},
		{"spoofed left entries do not count", "10.1.2.3:5000", []string{"6.6.6.6, 198.51.100.9"}, trusted, "198.51.100.9"},
		{"chain of trusted proxies", "10.1.2.3:5000", []string{"198.51.100.9, 192.168.1.1", "10.9.9.9"}, trusted, "198.51.100.9"},
		{"garbled hop: the last trusted proxy", "10.1.2.3:5000", []string{"garbage, 10.9.9.9"}, trusted, "10.9.9.9"},
		{"only trusted hops: the farthest proxy", "10.1.2.3:5000", []string{"10.2.2.2"}, trusted, "10.2.2.2"},
		{"IPv4-mapped IPv6 peer", "[::ffff:203.0.113.7]:5000", nil, nil, "203.0.113.7"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := clientIP(r, tc.trusted); got.String() != tc.want {
			t.Errorf("%s: clientIP = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestAuthGuardWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := newAuthGuard(10*time.Minute, 5, 10, func() time.Time { return now })
	ip := netip.MustParseAddr("198.51.100.1")
	for i := range 5 {
		if g.fail(ip, badCredential) {
			t.Fatalf("bad credential %d already blocks", i+1)
		}
		now = now.Add(time.Minute)
	}
	if g.blocked(ip) {
		t.Fatal("5 bad credentials are allowed")
	}
	if !g.fail(ip, badCredential) || !g.blocked(ip) {
		t.Fatal("the 6th bad credential within 10 minutes must block")
	}
	// the first failure (t=0) leaves the window at t=10m; the 6th was at t=5m
	now = time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	if g.blocked(ip) {
		t.Fatal("capacity returns once the oldest failure is 10 minutes old")
	}
	// an IPv6 /64 counts as one address
	a, b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::ffff")
	for range 11 {
		g.fail(a, noCredential)
	}
	if !g.blocked(b) {
		t.Fatal("another address of the same /64 must be blocked too")
	}
	if g.blocked(netip.MustParseAddr("2001:db8:0:1::1")) {
		t.Fatal("another /64 is not blocked")
	}
}

// TestAuthGuardIsBounded: a flood of distinct addresses cannot grow the guard past its tables'
// bounds, entries whose failures aged out leave without a sweep, and a blocked address cannot
// escape by rotating through its prefix once the table is full: the newcomers' failures count
// under the prefix.
func TestAuthGuardIsBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := newBoundedAuthGuard(10*time.Minute, 5, 10, func() time.Time { return now }, 100, 10)
	v6 := func(site, subnet int) netip.Addr {
		var a [16]byte
		a[0], a[1], a[4], a[5], a[6], a[7], a[15] = 0x20, 0x01, byte(site>>8), byte(site), byte(subnet>>8), byte(subnet), 1
		return netip.AddrFrom16(a)
	}

	// an attacker blocked on one /64, then rotating through 1000 /64s of its /48
	attacker := v6(1, 0)
	for range 6 {
		g.fail(attacker, badCredential)
	}
	if !g.blocked(attacker) {
		t.Fatal("6 bad credentials must block")
	}
	for i := 1; i <= 1000; i++ {
		now = now.Add(time.Millisecond)
		g.fail(v6(1, i), badCredential)
		if exact, coarse := g.sizes(); exact > 100 || coarse > 10 {
			t.Fatalf("after %d addresses the tables hold %d and %d entries, over their bounds", i, exact, coarse)
		}
	}
	if !g.blocked(attacker) {
		t.Fatal("the blocked /64 must stay blocked while the table is full")
	}
	if !g.blocked(v6(1, 5000)) {
		t.Fatal("the /48 whose newcomers failed too often is blocked as a whole")
	}
	if g.blocked(v6(2, 0)) || g.blocked(netip.MustParseAddr("192.0.2.1")) {
		t.Fatal("other sites and addresses are not blocked")
	}

	// a legitimate address with a few failures, in a full table, is not blocked by them
	legit := netip.MustParseAddr("198.51.100.1")
	for range 3 {
		g.fail(legit, badCredential)
	}
	if g.blocked(legit) {
		t.Fatal("3 bad credentials are allowed")
	}

	// once everything has aged out, the next failure empties both tables without a sweep
	now = now.Add(10*time.Minute + time.Second)
	g.fail(netip.MustParseAddr("203.0.113.9"), noCredential)
	if exact, coarse := g.sizes(); exact != 1 || coarse != 0 {
		t.Fatalf("after a window of silence the tables hold %d and %d entries, want 1 and 0", exact, coarse)
	}
	if g.blocked(attacker) || g.blocked(v6(1, 5000)) {
		t.Fatal("capacity returns once the failures leave the window")
	}
}

// TestAuthGuardCoarseCountsExactly: failures counted under a prefix keep their times, so the
// prefix is blocked exactly while more than the limit of them are in the window.
func TestAuthGuardCoarseCountsExactly(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	g := newBoundedAuthGuard(10*time.Minute, 5, 10, func() time.Time { return now }, 2, 4)
	// six addresses of one /24, one bad credential each, a minute apart; the table keeps two
	for i := range 6 {
		g.fail(netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)}), badCredential)
		now = now.Add(time.Minute)
	}
	// the first two are in the table, the four that found it full in the /24's entry: none over
	// a limit
	if g.blocked(netip.MustParseAddr("192.0.2.200")) {
		t.Fatal("4 failures of the /24 are within the limit")
	}
	// two more addresses find the table full: 6 failures of the /24 in the window block it
	g.fail(netip.MustParseAddr("192.0.2.7"), badCredential)
	g.fail(netip.MustParseAddr("192.0.2.8"), badCredential)
	if !g.blocked(netip.MustParseAddr("192.0.2.200")) {
		t.Fatal("6 failures of newcomers within 10 minutes block the /24")
	}
	// the /24's first failure (t=2m) leaves the window at t=12m, not before
	now = start.Add(12*time.Minute - time.Nanosecond)
	if !g.blocked(netip.MustParseAddr("192.0.2.200")) {
		t.Fatal("the /24 is free before its oldest failure is 10 minutes old")
	}
	now = start.Add(12 * time.Minute)
	if g.blocked(netip.MustParseAddr("192.0.2.200")) {
		t.Fatal("the /24 is still blocked once its oldest failure is 10 minutes old")
	}
}
