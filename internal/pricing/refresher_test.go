package pricing

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// fakeClock is a settable clock for the Refresher.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// feed is a rate server whose answer the test changes between polls.
type feed struct {
	mu     sync.Mutex
	status int
	body   string
	hits   atomic.Int64
	srv    *httptest.Server
}

func newFeed(t *testing.T, body string) *feed {
	f := &feed{status: http.StatusOK, body: body}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		f.mu.Lock()
		status, body := f.status, f.body
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *feed) set(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body = status, body
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestRefresher(t *testing.T, url string, clock *fakeClock, maxAge, maxDataAge time.Duration) *Refresher {
	t.Helper()
	r, err := NewRefresher(RefresherConfig{
		URL: url, MaxAge: maxAge, MaxDataAge: maxDataAge, Now: clock.Now, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantStale(t *testing.T, r *Refresher, msgPart string) {
	t.Helper()
	_, err := r.Rates(t.Context())
	e := wantAPIError(t, err, apierror.Unavailable, "")
	if !strings.Contains(e.Message, msgPart) {
		t.Errorf("Rates error %q, want it to contain %q", e.Message, msgPart)
	}
}

func wantRate(t *testing.T, r *Refresher, code, want string) {
	t.Helper()
	tab, err := r.Rates(t.Context())
	if err != nil {
		t.Fatalf("Rates: %v", err)
	}
	if got, _ := tab.Rate(code); !got.Equal(dec(t, want)) {
		t.Errorf("%s = %s, want %s", code, got, want)
	}
}

func TestRefresherStaleAndRecovery(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	f := newFeed(t, ratesJSON("2026-10-01", map[string]string{"EUR": "0.88"}))
	r := newTestRefresher(t, f.srv.URL, clock, time.Hour, 0)
	ctx := t.Context()

	wantStale(t, r, "not available yet")
	if _, ok := r.Age(); ok {
		t.Error("Age reports rates before the first poll")
	}

	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantRate(t, r, "EUR", "0.88")
	tab, _ := r.Rates(ctx)
	if !tab.FetchedAt.Equal(clock.Now()) || !strings.HasPrefix(tab.Source, "rate feed http://127.0.0.1") {
		t.Errorf("FetchedAt %s Source %q", tab.FetchedAt, tab.Source)
	}

	// The feed breaks: the last good rates are served until they are an hour old.
	f.set(http.StatusBadGateway, "upstream down")
	clock.Advance(40 * time.Minute)
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("Refresh on a 502 = %v", err)
	}
	if r.LastError() == nil {
		t.Error("LastError is nil after a failed poll")
	}
	if age, ok := r.Age(); !ok || age != 40*time.Minute {
		t.Errorf("Age = %s, %v; want 40m", age, ok)
	}
	wantRate(t, r, "EUR", "0.88")

	clock.Advance(20 * time.Minute) // exactly MaxAge: still quotable
	wantRate(t, r, "EUR", "0.88")

	clock.Advance(time.Second)
	wantStale(t, r, "exchange rates are stale")
	if age, _ := r.Age(); age != time.Hour+time.Second {
		t.Errorf("Age = %s", age)
	}

	// A garbled document does not count as a recovery.
	f.set(http.StatusOK, `{"date":"2026-10-01","rates":{"EUR":"x"}}`)
	if err := r.Refresh(ctx); err == nil {
		t.Fatal("Refresh accepted a broken document")
	}
	wantStale(t, r, "exchange rates are stale")

	// The feed recovers with new rates.
	f.set(http.StatusOK, ratesJSON("2026-10-02", map[string]string{"EUR": "0.87"}))
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if r.LastError() != nil {
		t.Errorf("LastError = %v after a good poll", r.LastError())
	}
	wantRate(t, r, "EUR", "0.87")
	if age, _ := r.Age(); age != 0 {
		t.Errorf("Age = %s after recovery, want 0", age)
	}
}

func TestRefresherFawazahmed0Shape(t *testing.T) {
	raw, err := os.ReadFile("testdata/fawazahmed0-usd-2026.9.29.json")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 9, 29, 18, 0, 0, 0, time.UTC)}
	f := newFeed(t, string(raw))
	r := newTestRefresher(t, f.srv.URL+"/v1/currencies/usd.json", clock, time.Hour, 48*time.Hour)
	if err := r.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantRate(t, r, "EUR", "0.88022588")
	wantRate(t, r, "JPY", "157.47729333")
}

func TestRefresherRefusesOldOrRegressingData(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)}
	f := newFeed(t, ratesJSON("2026-10-01", nil))
	r := newTestRefresher(t, f.srv.URL, clock, time.Hour, 48*time.Hour)
	ctx := t.Context()

	// Dated four days ago: the fetch works but the data is too old to count.
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "older than the 48h0m0s allowed") {
		t.Fatalf("Refresh = %v, want the MaxDataAge refusal", err)
	}
	wantStale(t, r, "not available yet")

	f.set(http.StatusOK, ratesJSON("2026-10-05", map[string]string{"EUR": "0.90"}))
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// A lagging mirror serves yesterday's rates: keep today's.
	f.set(http.StatusOK, ratesJSON("2026-10-04", map[string]string{"EUR": "0.80"}))
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "older than the") {
		t.Fatalf("Refresh = %v, want the regression refusal", err)
	}
	wantRate(t, r, "EUR", "0.90")

	// Dated days ahead of the clock.
	f.set(http.StatusOK, ratesJSON("2026-10-09", nil))
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "in the future") {
		t.Fatalf("Refresh = %v, want the future-date refusal", err)
	}

	// The same date again is a confirmation and renews the age.
	f.set(http.StatusOK, ratesJSON("2026-10-05", map[string]string{"EUR": "0.91"}))
	clock.Advance(30 * time.Minute)
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantRate(t, r, "EUR", "0.91")
	if age, _ := r.Age(); age != 0 {
		t.Errorf("Age = %s", age)
	}
}

func TestRefresherOversizedBody(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	f := newFeed(t, strings.Repeat(" ", maxRateDocumentSize)+ratesJSON("2026-10-01", nil))
	r := newTestRefresher(t, f.srv.URL, clock, time.Hour, 0)
	if err := r.Refresh(t.Context()); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("Refresh = %v, want the size refusal", err)
	}
}

func TestRefresherKeepsCredentialsOutOfErrors(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	f := newFeed(t, ratesJSON("2026-10-01", nil))
	url := strings.Replace(f.srv.URL, "http://", "http://user:s3cret@", 1) + "/rates?apikey=s3cret"
	r := newTestRefresher(t, url, clock, time.Hour, 0)
	if err := r.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	tab, _ := r.Rates(t.Context())
	f.srv.Close()
	err := r.Refresh(t.Context())
	if err == nil {
		t.Fatal("Refresh against a closed server succeeded")
	}
	for _, s := range []string{tab.Source, err.Error()} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("credentials leaked: %q", s)
		}
	}
}

func TestNewRefresherRejectsBadConfig(t *testing.T) {
	for _, cfg := range []RefresherConfig{
		{URL: "http://x/rates"},                           // no MaxAge
		{URL: "ftp://x/rates", MaxAge: time.Hour},         // scheme
		{URL: "/rates", MaxAge: time.Hour},                // not absolute
		{URL: "http://x/%zz", MaxAge: time.Hour},          // unparsable
		{URL: "http://x/rates", MaxAge: -1 * time.Second}, // negative
	} {
		if _, err := NewRefresher(cfg); err == nil {
			t.Errorf("NewRefresher(%+v) succeeded", cfg)
		}
	}
}

// TestRefresherRun runs the real loop with short intervals: it polls at once, keeps polling, and
// stops with its context.
func TestRefresherRun(t *testing.T) {
	f := newFeed(t, ratesJSON("2026-10-01", nil))
	f.set(http.StatusInternalServerError, "")
	clock := &fakeClock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	// Polls are counted where they start, at the client: the feed may serve a request sent
	// just before the cancel only after Run returned (a loaded machine did), and that poll
	// did not start after Run.
	var started atomic.Int64
	sent := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		started.Add(1)
		return http.DefaultTransport.RoundTrip(req)
	})}
	r, err := NewRefresher(RefresherConfig{
		URL: f.srv.URL, MaxAge: time.Hour, Interval: 5 * time.Millisecond,
		RetryInterval: time.Millisecond, Now: clock.Now, Logger: quietLogger(), Client: sent,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()

	waitFor(t, "failed polls to be retried", func() bool { return f.hits.Load() >= 3 })
	wantStale(t, r, "not available yet")
	f.set(http.StatusOK, ratesJSON("2026-10-01", map[string]string{"EUR": "0.88"}))
	waitFor(t, "the loop to pick up the recovered feed", func() bool { _, ok := r.Age(); return ok })
	wantRate(t, r, "EUR", "0.88")
	n := f.hits.Load()
	waitFor(t, "further polls", func() bool { return f.hits.Load() >= n+2 })

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	n = started.Load()
	time.Sleep(30 * time.Millisecond)
	if m := started.Load(); m != n {
		t.Errorf("%d polls started after Run returned", m-n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
