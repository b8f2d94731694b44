package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// TestWindowsKeepTheMemoryStoresSemantics: the in-memory windows count as ulule/limiter's memory
// store did: a window opens at a key's first request and lasts a period, up to and including its
// end; the limit is admitted exactly, the next request is refused with nothing remaining; a peek
// opens no window and spends nothing; budgets and keys count apart.
func TestWindowsKeepTheMemoryStoresSemantics(t *testing.T) {
	ws := newWindows(time.Minute)
	t0 := time.Unix(1_764_000_000, 500_000_000)
	end := t0.Add(time.Minute)
	steps := []struct {
		name        string
		budget, key string
		spend       bool
		at          time.Time
		remaining   int64
		reached     bool
		reset       int64
	}{
		{"peek before any request", "b", "k", false, t0, 2, false, end.Unix()},
		{"first request opens the window", "b", "k", true, t0.Add(time.Second), 1, false, t0.Add(time.Second + time.Minute).Unix()},
		{"second is the last admitted", "b", "k", true, t0.Add(2 * time.Second), 0, false, t0.Add(time.Second + time.Minute).Unix()},
		{"third is refused", "b", "k", true, t0.Add(3 * time.Second), 0, true, t0.Add(time.Second + time.Minute).Unix()},
		{"a peek sees the refusals counted", "b", "k", false, t0.Add(4 * time.Second), 0, true, t0.Add(time.Second + time.Minute).Unix()},
		{"another budget of the key counts apart", "c", "k", true, t0.Add(4 * time.Second), 1, false, t0.Add(4*time.Second + time.Minute).Unix()},
		{"another key counts apart", "b", "k2", true, t0.Add(4 * time.Second), 1, false, t0.Add(4*time.Second + time.Minute).Unix()},
		{"at the window's very end it is still open", "b", "k", true, t0.Add(time.Second + time.Minute), 0, true, t0.Add(time.Second + time.Minute).Unix()},
		{"a nanosecond later a new one opens", "b", "k", true, t0.Add(time.Second + time.Minute + 1), 1, false, t0.Add(time.Second + 2*time.Minute + 1).Unix()},
	}
	for _, s := range steps {
		lc := ws.at(s.budget, s.key, 2, s.spend, s.at)
		if lc.Limit != 2 || lc.Remaining != s.remaining || lc.Reached != s.reached || lc.Reset != s.reset {
			t.Fatalf("%s: %+v; want remaining %d, reached %v, reset %d", s.name, lc, s.remaining, s.reached, s.reset)
		}
	}
}

// TestWindowsForgetExpiredKeys: a replica that sees a stream of fresh keys does not keep their
// windows past their end.
func TestWindowsForgetExpiredKeys(t *testing.T) {
	ws := newWindows(time.Minute)
	t0 := time.Unix(1_764_000_000, 0)
	for i := range 10_000 {
		ws.at("b", "old"+strconv.Itoa(i), 5, true, t0)
	}
	later := t0.Add(3 * time.Minute)
	for i := range 10_000 {
		ws.at("b", "fresh"+strconv.Itoa(i), 5, true, later)
	}
	held := 0
	for i := range ws.shards {
		held += len(ws.shards[i].m)
	}
	if held != 10_000 {
		t.Fatalf("%d windows held, want the 10000 open ones", held)
	}
}

// TestWindowsAdmitTheLimitExactlyUnderConcurrency: requests of one key from many goroutines
// at once are admitted exactly up to the limit.
func TestWindowsAdmitTheLimitExactlyUnderConcurrency(t *testing.T) {
	kl := newKeyLimits(map[string]int64{"b": 500})
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				if ok, err := kl.take(context.Background(), httptest.NewRecorder(), "b", "k"); err != nil {
					t.Error(err)
				} else if ok {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 500 {
		t.Fatalf("%d of 1600 admitted, want 500", n)
	}
}

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
// reads' benchmark counts them (docs/benchmarks.md): the rate limit's count and headers two (the
// values' string and their backing array), the access record with the request id and the
// answer's headers five (the record with its writer, the request's copy and context, the id's
// string, the header map's first entries), with the sampled-out access line's nothing.
func TestRequestPathAllocations(t *testing.T) {
	kl := newKeyLimits(map[string]int64{"b": 1 << 40})
	w := &reusedWriter{h: http.Header{}}
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		if ok, err := kl.take(ctx, w, "b", "0123456789abcdef"); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}); n > 2 {
		t.Errorf("the rate limit: %.1f allocations a request, want 2 at most", n)
	}

	body := []byte(`{"ok":true}`)
	h := observe(crzap.New(crzap.WriteTo(io.Discard)), limitBody(1<<20, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, http.StatusOK, body)
	})))
	r := httptest.NewRequest(http.MethodGet, "/api/payouts/deposit-options", http.NoBody)
	for range 200 { // past zap's sampler's first lines of each second
		h.ServeHTTP(w, r)
	}
	if n := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}); n > 4 {
		t.Errorf("observe, limitBody and writeBody: %.1f allocations a request, want 4 at most", n)
	}
}
