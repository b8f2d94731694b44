package apiserver

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// unreachableStore is a shared store whose Redis does not answer: a loopback port nothing
// listens on, so every call fails at once with connection refused.
func unreachableStore(t *testing.T) *sharedlimits.Store {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	st, err := sharedlimits.Open(sharedlimits.Config{Addr: addr}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSharedGuardWithoutItsStore: the choices of sharedGuard's comment while Redis is down. A
// bad credential fails closed (its own answer is the local one, 401, and the address is then
// refused on this replica); missing credentials are counted by the replica alone, up to their
// limit of 10; an address that never failed is let through.
func TestSharedGuardWithoutItsStore(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	g := newSharedGuard(newAuthGuard(10*time.Minute, 5, 10, func() time.Time { return now }), unreachableStore(t))
	ctx := context.Background()
	guesser, forgetful, bystander := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")

	if g.blocked(ctx, guesser) {
		t.Fatal("an address without failures is blocked while the store is down")
	}
	if g.fail(ctx, guesser, badCredential) {
		t.Fatal("the first bad credential was answered 429, not 401")
	}
	if !g.blocked(ctx, guesser) {
		t.Fatal("after a bad credential the store could not record, the address is not blocked")
	}
	if !g.fail(ctx, guesser, badCredential) {
		t.Fatal("a second bad credential was not refused")
	}

	for i := 1; i <= 10; i++ {
		if g.fail(ctx, forgetful, noCredential) {
			t.Fatalf("missing credential %d of 10 was refused", i)
		}
		if g.blocked(ctx, forgetful) {
			t.Fatalf("blocked after %d missing credentials", i)
		}
	}
	if !g.fail(ctx, forgetful, noCredential) {
		t.Fatal("the 11th missing credential was not refused")
	}
	if g.blocked(ctx, bystander) {
		t.Fatal("an address without failures is blocked")
	}

	// a window later the block is over
	now = now.Add(10*time.Minute + time.Second)
	if g.blocked(ctx, guesser) || g.blocked(ctx, forgetful) {
		t.Fatal("still blocked a window later")
	}
}

// TestKeyLimitsWithoutTheirStore: while Redis is down the per-key limits are the replica's own,
// with correct headers, counted from where the replica stood.
func TestKeyLimitsWithoutTheirStore(t *testing.T) {
	kl := newKeyLimitsPer(map[string]int64{"b": 2}, time.Minute, unreachableStore(t))
	ctx := context.Background()
	for i, want := range []struct {
		ok        bool
		remaining string
	}{{true, "1"}, {true, "0"}, {false, "0"}} {
		rec := httptest.NewRecorder()
		ok, err := kl.take(ctx, rec, "b", "k")
		if err != nil {
			t.Fatal(err)
		}
		if ok != want.ok || rec.Header().Get("X-RateLimit-Limit") != "2" || rec.Header().Get("X-RateLimit-Remaining") != want.remaining {
			t.Fatalf("request %d: allowed %v, headers %v; want allowed %v, remaining %s", i+1, ok, rec.Header(), want.ok, want.remaining)
		}
		if rec.Header().Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d: no X-RateLimit-Reset", i+1)
		}
	}
}
