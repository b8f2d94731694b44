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
