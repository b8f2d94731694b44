package apiserver

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/sharedlimits"
	"github.com/stablepay/payout-operator/test/testredis"
)

// limitsOfARequest are the limits every authenticated request passes: the door's check of its
// address (spec 5.3) and its key's budget (spec 8.1).
type limitsOfARequest struct {
	guard  limitGuard
	limits *keyLimits
}

func (l limitsOfARequest) request(ctx context.Context, b *testing.B, ip netip.Addr, keyID string) {
	if l.guard.blocked(ctx, ip) {
		b.Fatal("blocked")
	}
	if ok, err := l.limits.take(ctx, httptest.NewRecorder(), budgetQuote, keyID); err != nil || !ok {
		b.Fatalf("take: %v %v", ok, err)
	}
}

// BenchmarkSharedLimiterCost measures what sharing the limits in Redis costs a request: the
// door's address check and the per-key budget, against the in-memory limits and against a real
// redis-server on loopback (internal/testredis), interleaved request by request so that both
// see the same load of the machine. It reports the nanoseconds of each per request and their
// ratio (redis-ns/req ÷ memory-ns/req); ns/op is the sum of both plus the clock reads. The
// requests spread over 1000 keys and 100 addresses, with budgets too large to reach.
//
//	go test -run '^$' -bench SharedLimiterCost -benchtime 20000x -count 5 ./apiserver
func BenchmarkSharedLimiterCost(b *testing.B) {
	srv := testredis.StartForTest(b)
	store, err := sharedlimits.Open(sharedlimits.Config{Addr: srv.Addr()}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	budgets := map[string]int64{budgetQuote: 1 << 60}
	now := time.Now
	memory := limitsOfARequest{memoryGuard{newAuthGuard(10*time.Minute, 5, 10, now)}, newKeyLimitsPer(budgets, time.Minute, nil)}
	shared := limitsOfARequest{newSharedGuard(newAuthGuard(10*time.Minute, 5, 10, now), store), newKeyLimitsPer(budgets, time.Minute, store)}

	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "bench-key-" + strconv.Itoa(i)
	}
	ips := make([]netip.Addr, 100)
	for i := range ips {
		ips[i] = netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
	}
	ctx := context.Background()
	// warm both: the store's scripts loaded, the connection pooled
	for i := range 100 {
		memory.request(ctx, b, ips[i%len(ips)], keys[i])
		shared.request(ctx, b, ips[i%len(ips)], keys[i])
	}
	if store.Degraded() {
		b.Fatal("the store failed while warming up")
	}

	var inMemory, inRedis time.Duration
	i := 0
	for b.Loop() {
		ip, key := ips[i%len(ips)], keys[i%len(keys)]
		i++
		t0 := time.Now()
		memory.request(ctx, b, ip, key)
		t1 := time.Now()
		shared.request(ctx, b, ip, key)
		t2 := time.Now()
		inMemory += t1.Sub(t0)
		inRedis += t2.Sub(t1)
	}
	// a request that fell back to the in-memory limits would flatter the shared ones
	if store.Degraded() {
		b.Fatal("the store failed during the run: the shared numbers are not of the store")
	}
	b.ReportMetric(float64(inMemory.Nanoseconds())/float64(i), "memory-ns/req")
	b.ReportMetric(float64(inRedis.Nanoseconds())/float64(i), "redis-ns/req")
	b.ReportMetric(float64(inRedis)/float64(inMemory), "ratio")
}
