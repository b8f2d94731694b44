package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/keyuse"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestKeyLimitsRefuseAnUnknownBudget: a route whose budget has no limit is an error, never a
// request let through uncounted.
func TestKeyLimitsRefuseAnUnknownBudget(t *testing.T) {
	kl := newKeyLimits(map[string]int64{"b": 5})
	if ok, err := kl.take(context.Background(), httptest.NewRecorder(), "nope", "k"); ok || err == nil {
		t.Fatalf("unknown budget: allowed %v, error %v", ok, err)
	}
}

// reusedWriter is a ResponseWriter that allocates nothing of its own per request, so that an
// allocation count is the handler's.
type reusedWriter struct{ h http.Header }

func (w *reusedWriter) Header() http.Header         { return w.h }
func (w *reusedWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *reusedWriter) WriteHeader(int)             {}

// TestRequestPathAllocations pins what the per-request parts of the door allocate, as the cached
// reads' benchmark counts them (docs/benchmarks.md): the rate limit's count and headers one (the
// header values with the digits they are cut from; ulule's memory cache is kept, one per
// budget, so that a counter's key is the key id itself and no key string is made a request),
// the access record with the request id, the metrics and the answer's headers one (the record
// with its writer and the id's bytes; the header map's first entries are the reused writer's
// here), with the sampled-out access line's nothing. The record rides on the writer: in the
// request's context it cost a copy of the request and a context more.
func TestRequestPathAllocations(t *testing.T) {
	kl := newKeyLimits(map[string]int64{"b": 1 << 40})
	w := &reusedWriter{h: http.Header{}}
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		if ok, err := kl.take(ctx, w, "b", "0123456789abcdef"); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}); n > 1 {
		t.Errorf("the rate limit: %.1f allocations a request, want 1 at most", n)
	}

	body := []byte(`{"ok":true}`)
	h := observe(crzap.New(crzap.WriteTo(io.Discard)), nil, limitBody(1<<20, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, http.StatusOK, body)
	})))
	r := httptest.NewRequest(http.MethodGet, "/api/payouts/deposit-options", http.NoBody)
	for range 200 { // past zap's sampler's first lines of each second
		h.ServeHTTP(w, r)
	}
	if n := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}); n > 1 {
		t.Errorf("observe, limitBody and writeBody: %.1f allocations a request, want 1 at most", n)
	}
}

// guardedRead is a cached read's path without the informers and the mux: observe, the door,
// authentication of a key in stores of its own, the rate limit, and a handler writing a body it
// holds; r is its request, with the key.
func guardedRead(tb testing.TB) (h http.Handler, r *http.Request) {
	now := time.Now()
	clk := clocktesting.NewFakeClock(now)
	key, err := apikey.New()
	if err != nil {
		tb.Fatal(err)
	}
	st := &stores{
		keys:     toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}),
		accounts: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}),
	}
	st.ready.Store(true)
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(st.accounts.Add(testgen.Account("alloc")))
	must(st.keys.Add(testgen.APIKey(key.ID, "alloc", func(k *payoutv1.APIKey) {
		k.Spec.SecretHash = key.Hash
		k.Annotations = map[string]string{payoutv1.APIKeyLastUsedAnnotation: now.UTC().Format(time.RFC3339)}
	})))
	unlimited := map[string]int64{}
	for name := range budgets {
		unlimited[name] = 1 << 60
	}
	s := &Server{
		cfg:     Config{Clock: clk, MaxBodyBytes: 64 << 10},
		stores:  st,
		guard:   memoryGuard{newAuthGuard(10*time.Minute, 5, 10, clk.Now)},
		limits:  newKeyLimits(unlimited),
		clients: newClientShare(clk.Now),
		keyUse:  keyuse.New(nil, 0, 0, logr.Discard()),
	}
	body := []byte(`{"ok":true}`)
	h = observe(crzap.New(crzap.WriteTo(io.Discard)), nil, s.door(limitBody(s.cfg.MaxBodyBytes,
		s.guarded(budgetDepositOpts, func(w http.ResponseWriter, _ *http.Request, _ *Caller) error {
			writeBody(w, http.StatusOK, body)
			return nil
		}))))
	r = httptest.NewRequest(http.MethodGet, "/api/payouts/deposit-options", http.NoBody)
	r.RemoteAddr = "192.0.2.10:40000"
	r.Header.Set("Authorization", "Bearer "+key.Full)
	return h, r
}

// TestGuardedReadAllocations pins what a cached read pays in the door, authentication and the
// rate limit together, ending in a handler that writes a body it holds (as the cached reads'
// handlers do): the record with its writer and the request id, and the rate-limit values. The
// caller is the record's, the key's last use within its interval is a load (keyuse), the key
// and account are the informers' own objects, the key's hash is checked without a copy of
// either side.
func TestGuardedReadAllocations(t *testing.T) {
	h, r := guardedRead(t)
	w := &reusedWriter{h: http.Header{}}
	for range 200 { // past zap's sampler's first lines of each second
		clear(w.h)
		h.ServeHTTP(w, r)
		if _, ok := w.h["X-Ratelimit-Remaining"]; !ok {
			t.Fatalf("not answered by the handler: headers %v", w.h)
		}
	}
	if n := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}); n > 2 {
		t.Errorf("a guarded cached read: %.1f allocations a request, want 2 at most", n)
	}
}

// BenchmarkGuardedRead is guardedRead's path from parallel goroutines: what the door,
// authentication and the rate limit cost a cached read in CPU, with no informers to start.
func BenchmarkGuardedRead(b *testing.B) {
	h, r := guardedRead(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &reusedWriter{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	})
}
