package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// BenchmarkMiddlewareChain measures what the door adds to a request: request id and access
// record, body limit, routing, the per-address guard, key parsing, the cached key and account
// lookups with the constant-time hash check, the allow-list and the per-key rate limit, ending
// in the cheapest handler (amount-limits). It runs against a real informer cache, as payoutd
// does; the budget is raised so that every request takes the full path rather than the 429.
func BenchmarkMiddlewareChain(b *testing.B) {
	env, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		b.Fatal(err)
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	key, _ := apikey.New()
	if err := env.Client.Create(ctx, testgen.Account("bench")); err != nil {
		b.Fatal(err)
	}
	if err := env.Client.Create(ctx, testgen.APIKey(key.ID, "bench", func(k *payoutv1.APIKey) { k.Spec.SecretHash = key.Hash })); err != nil {
		b.Fatal(err)
	}
	rates, _ := pricing.NewSnapshot()
	s, err := New(Config{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Catalog: bankaccount.Default(),
		Sanctions: sanctions.NewScreener(sanctions.Embedded), KYC: kyc.Store{Reader: mgr.GetClient()},
		WalletScreen: walletscreen.LocalList{Reader: mgr.GetClient()}, Rates: rates, Log: logr.Discard(),
	})
	if err != nil {
		b.Fatal(err)
	}
	s.limits = newKeyLimits(map[string]int64{budgetAmountLimits: 1 << 60})
	h := s.Handler()
	req := httptest.NewRequest(http.MethodGet, "/api/payouts/amount-limits", nil)
	req.RemoteAddr = "192.0.2.10:40000"
	req.Header.Set("Authorization", "Bearer "+key.Full)
	for {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			break
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
