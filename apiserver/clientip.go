package apiserver

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientIP is the address a request comes from. The TCP peer is the caller, unless the peer
// is one of the trusted proxies: then X-Forwarded-For is read from the right, skipping trusted
// proxies, and the first address that is not one is the caller. Reading from the right means a
// caller cannot pick its own address by sending the header itself, since the proxies append to
// what the caller sent. With no trusted proxies the header is ignored altogether.
func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !inPrefixes(peer, trusted) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// A garbled hop: everything left of it is the caller's own claim, so the
				// last proxy we trust is the best we know.
				return peer
			}
			a = a.Unmap()
			if !inPrefixes(a, trusted) {
				return a
			}
			peer = a
		}
	}
	return peer
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// limitKey is the unit the per-address limits count: an IPv4 address, or an IPv6 /64, since one
// IPv6 host usually holds a whole /64 and could otherwise take a fresh address per attempt.
func limitKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return a
}

// ParsePrefixes reads CIDRs and bare addresses (taken as single-host prefixes).
func ParsePrefixes(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range items {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
