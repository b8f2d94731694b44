package metricstest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/test/metricstest"
)

func TestScrapeSeesCountersMove(t *testing.T) {
	srv := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	ctx := context.Background()

	before, err := metricstest.Scrape(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	metrics.AuthFailure(metrics.AuthMalformed)
	metrics.FacadeRoutes([]string{"/api/payouts/fee"}, nil)
	metrics.FacadeRequest("/api/payouts/fee", "GET", 200, 30*time.Millisecond)
	after, err := metricstest.Scrape(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Sum("payout_facade_auth_failures_total", "reason", "malformed") - before.Sum("payout_facade_auth_failures_total", "reason", "malformed"); d != 1 {
		t.Errorf("auth failures moved by %v", d)
	}
	if d := after.Sum("payout_facade_request_duration_seconds_count", "route", "/api/payouts/fee") -
		before.Sum("payout_facade_request_duration_seconds_count", "route", "/api/payouts/fee"); d != 1 {
		t.Errorf("latency count moved by %v", d)
	}
	if got := after.Sum("payout_facade_request_duration_seconds_sum", "route", "/api/payouts/fee"); got < 0.03 {
		t.Errorf("latency sum %v", got)
	}
	if d := after.Delta(before, "payout_facade_auth_failures_total", "reason", "malformed"); d != 1 {
		t.Errorf("Delta %v", d)
	}
	if !after.Has("payout_facade_requests_total") || after.Has("no_such_metric") {
		t.Error("Has")
	}
	if s := after.Series("payout_facade_requests_total"); len(s) != 1 || s[0] != "code=200,method=GET,route=/api/payouts/fee" {
		t.Errorf("series %v", s)
	}
}

func TestScrapeReportsHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "metrics unavailable", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := metricstest.Scrape(context.Background(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: metrics unavailable") {
		t.Fatalf("err = %v", err)
	}
}
