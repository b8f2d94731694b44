package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/scheme"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// noDeposits is a test double of the chain side: the metrics test creates no transfer.
type noDeposits struct{}

func (noDeposits) V1Address(payoutv1.Network, string) (string, string, error) {
	return "", "", fmt.Errorf("no deposit addresses in this test")
}
func (noDeposits) V2Address(payoutv1.Network, payoutv1.Token) (string, bool) { return "", false }

// TestFacadeMetrics sends requests to the real facade (its whole handler chain, over HTTP) and
// scrapes the registry payoutd's metrics endpoint serves: the request, authentication-failure
// and rate-limit counters moved, labelled by route template. The cluster is controller-runtime's
// fake client here (authentication reads one key and its account); the facade suite covers the
// handlers against a real API server.
func TestFacadeMetrics(t *testing.T) {
	ctx := context.Background()
	acct := testgen.Account("metrics")
	key, err := apikey.New()
	if err != nil {
		t.Fatal(err)
	}
	stored := testgen.APIKey(key.ID, acct.Name, func(k *payoutv1.APIKey) { k.Spec.SecretHash = key.Hash })
	s := openFakeFacade(t, fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(acct, stored).Build(), nil, acct, stored)
	endpoint := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer endpoint.Close()

	// from fixed loopback addresses, so that the brute-force limits of one do not touch another
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
	}
	send := func(hc *http.Client, method, path, auth string) int {
		t.Helper()
		req, err := http.NewRequest(method, s.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	good := "Bearer " + key.Full
	unknown := "Bearer svc_live_0000000000000000_" + fmt.Sprintf("%064d", 0)

	before, err := metricstest.Scrape(ctx, endpoint.URL)
	if err != nil {
		t.Fatal(err)
	}
	caller := from("127.0.0.1")
	for _, r := range []struct {
		method, path, auth string
		status             int
	}{
		{"GET", "/api/payouts/amount-limits", good, 200},
		{"GET", "/api/payouts/amount-limits", good, 200},
		{"GET", "/api/payouts/recipients/not-a-number", good, 400},
		{"GET", "/api/payouts/amount-limits", "", 401},
		{"GET", "/api/payouts/amount-limits", "Bearer not-a-key", 401},
		{"GET", "/api/payouts/amount-limits", unknown, 401},
		{"GET", "/no/such/path", good, 404},
		{"PUT", "/api/payouts/fee", good, 405},
		{"GET", "/healthz", "", 200},
	} {
		if got := send(caller, r.method, r.path, r.auth); got != r.status {
			t.Fatalf("%s %s: %d, want %d", r.method, r.path, got, r.status)
		}
	}
	// the quote budget is 20 a minute: the 21st is refused
	for i := 1; i <= 21; i++ {
		want := 400 // no parameters: refused after the rate limit is taken
		if i == 21 {
			want = 429
		}
		if got := send(caller, "GET", "/api/payouts/quote", good); got != want {
			t.Fatalf("quote request %d: %d, want %d", i, got, want)
		}
	}
	// five bad credentials are allowed per address; the sixth blocks it, and so is the next
	attacker := from("127.0.0.9")
	for i := 1; i <= 7; i++ {
		want := 401
		if i >= 6 {
			want = 429
		}
		if got := send(attacker, "GET", "/api/payouts/fee", unknown); got != want {
			t.Fatalf("bad credential %d: %d, want %d", i, got, want)
		}
	}
	after, err := metricstest.Scrape(ctx, endpoint.URL)
	if err != nil {
		t.Fatal(err)
	}

	moved := func(name string, labels ...string) float64 {
		return after.Sum(name, labels...) - before.Sum(name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"payout_facade_requests_total", []string{"route", "/api/payouts/amount-limits", "method", "GET", "code", "200"}, 2},
		{"payout_facade_requests_total", []string{"route", "/api/payouts/amount-limits", "code", "401"}, 3},
		{"payout_facade_requests_total", []string{"route", "/api/payouts/recipients/{id}", "code", "400"}, 1},
		{"payout_facade_requests_total", []string{"route", "other", "code", "404"}, 1},
		{"payout_facade_requests_total", []string{"route", "other", "method", "PUT", "code", "405"}, 1},
		{"payout_facade_requests_total", []string{"route", "/healthz", "code", "200"}, 1},
		{"payout_facade_requests_total", []string{"route", "/api/payouts/quote", "code", "429"}, 1},
		{"payout_facade_requests_total", []string{"route", "/api/payouts/fee", "code", "429"}, 2},
		{"payout_facade_request_duration_seconds_count", []string{"route", "/api/payouts/amount-limits"}, 5},
		{"payout_facade_auth_failures_total", []string{"reason", "missing"}, 1},
		{"payout_facade_auth_failures_total", []string{"reason", "malformed"}, 1},
		// one unknown key from the caller, six from the attacker (the seventh is refused at the door)
		{"payout_facade_auth_failures_total", []string{"reason", "invalid"}, 7},
		{"payout_facade_rate_limited_total", []string{"limit", "quote"}, 1},
		{"payout_facade_rate_limited_total", []string{"limit", "auth-failures"}, 2},
	} {
		if got := moved(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// no raw path became a label
	for _, series := range after.Series("payout_facade_requests_total") {
		for _, raw := range []string{"not-a-number", "/no/such/path"} {
			if strings.Contains(series, raw) {
				t.Errorf("a raw path is a label: %s", series)
			}
		}
	}
	if got := after.Sum("payout_facade_requests_in_flight"); got != 0 {
		t.Errorf("requests in flight after all answered: %v", got)
	}
}

// TestFacadeBusiestClientShare (issue 25 item 3): payout_facade_busiest_client_share shows the
// share of the busiest client address in the last complete minute. Behind a proxy the facade
// does not trust, ten tenants are one address (share 1); with the proxy trusted they are ten
// (share 0.1 each); probes do not count.
func TestFacadeBusiestClientShare(t *testing.T) {
	ctx := context.Background()
	endpoint := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer endpoint.Close()
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		want    float64
	}{
		{"proxy not trusted: one address", nil, 1},
		{"proxy trusted: the callers' addresses", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
			s := openFakeFacade(t, fake.NewClientBuilder().WithScheme(scheme.New()).Build(), func(cfg *Config) {
				cfg.Clock, cfg.TrustedProxies = clk, tc.trusted
			})
			// ten tenants through one proxy (this test's loopback address), two requests each,
			// and the kubelet's probes
			for tenant := range 10 {
				for _, path := range []string{"/api/payouts/fee", "/api/payouts/amount-limits", "/healthz", "/readyz"} {
					req, err := http.NewRequest("GET", s.URL()+path, nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", tenant+1))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
			}
			clk.Step(time.Minute)
			m, err := metricstest.Scrape(ctx, endpoint.URL)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Sum("payout_facade_busiest_client_share"); got != tc.want {
				t.Errorf("payout_facade_busiest_client_share = %v, want %v", got, tc.want)
			}
		})
	}
}

// openFakeFacade opens the facade on loopback over c (controller-runtime's fake client), with
// the embedded data and an informer cache holding objs (the objects of c the facade reads on
// every request: the key and its account), until the test ends; set changes its configuration first.
func openFakeFacade(t *testing.T, c client.Client, set func(*Config), objs ...client.Object) *Server {
	t.Helper()
	rates, err := pricing.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Client: c, Informers: staticInformers(objs...), Catalog: bankaccount.Default(), Sanctions: sanctions.NewScreener(sanctions.Embedded),
		KYC: kyc.Store{Reader: c}, WalletScreen: walletscreen.LocalList{Reader: c}, Rates: rates,
		Deposits: noDeposits{}, Log: logr.Discard(),
	}
	if set != nil {
		set(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// staticInformers is a test double of the informer cache for tests without an API server: an
// informer per kind that never runs, its store holding objs.
func staticInformers(objs ...client.Object) cache.Informers {
	return &staticCache{objs: objs, made: map[reflect.Type]toolscache.SharedIndexInformer{}}
}

type staticCache struct {
	informertest.FakeInformers
	objs []client.Object
	made map[reflect.Type]toolscache.SharedIndexInformer
}

func (c *staticCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	t := reflect.TypeOf(obj)
	if inf, ok := c.made[t]; ok {
		return inf, nil
	}
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, obj, 0, toolscache.Indexers{})
	for _, o := range c.objs {
		if reflect.TypeOf(o) == t {
			if err := inf.GetStore().Add(o); err != nil {
				return nil, err
			}
		}
	}
	c.made[t] = syncedInformer{inf}
	return c.made[t], nil
}

// syncedInformer is an informer that never runs and says it has synced: its store is filled by
// hand.
type syncedInformer struct{ toolscache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }

// AddEventHandler registers h on the informer, which never tells it anything: the registration
// says it has synced too, as the informer does.
func (i syncedInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.SharedIndexInformer.AddEventHandler(h)
	return syncedRegistration{reg}, err
}
