package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
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
