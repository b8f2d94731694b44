package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// benchFacade is a facade on a real informer cache, as payoutd runs it, with one account and
// key, eight deposit options and one stored transfer; the budgets are raised so that every
// request takes the full path rather than the 429.
type benchFacade struct {
	h          http.Handler
	key        string
	transferID string
}

func startBenchFacade(b *testing.B) benchFacade {
	b.Helper()
	env, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	key, _ := apikey.New()
	acct := testgen.Account("bench")
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(env.Client.Create(ctx, acct))
	must(env.Client.Create(ctx, tenancy.Namespace(acct)))
	must(env.Client.Create(ctx, testgen.APIKey(key.ID, "bench", func(k *payoutv1.APIKey) { k.Spec.SecretHash = key.Hash })))
	for _, tok := range []payoutv1.Token{payoutv1.TokenUSDC, payoutv1.TokenUSDT} {
		for _, net := range []payoutv1.Network{payoutv1.NetworkEthereum, payoutv1.NetworkBase, payoutv1.NetworkPolygon, payoutv1.NetworkSolana} {
			must(env.Client.Create(ctx, &payoutv1.DepositOption{
				ObjectMeta: metav1.ObjectMeta{Name: string(tok) + "-" + string(net)},
				Spec:       payoutv1.DepositOptionSpec{Token: tok, Network: net, Enabled: true},
			}))
		}
	}
	id := "be0c0000000000000000000a"
	must(env.Client.Create(ctx, testgen.Transfer(payoutv1.AccountNamespace("bench"), id)))
	mgr := env.StartManager(ctx, b)
	rates, _ := pricing.NewSnapshot()
	s, err := New(Config{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Catalog: bankaccount.Default(),
		Sanctions: sanctions.NewScreener(sanctions.Embedded), KYC: kyc.Store{Reader: mgr.GetClient()},
		WalletScreen: walletscreen.LocalList{Reader: mgr.GetClient()}, Rates: rates, Deposits: noDeposits{},
		// payoutd's kind of logger: zap's, production sampling (written nowhere)
		Log: crzap.New(crzap.WriteTo(io.Discard)),
	})
	must(err)
	unlimited := map[string]int64{}
	for name := range budgets {
		unlimited[name] = 1 << 60
	}
	s.limits = newKeyLimits(unlimited)
	f := benchFacade{h: s.Handler(), key: key.Full, transferID: id}
	for _, path := range []string{"/api/payouts/amount-limits", "/api/payouts/deposit-options", "/api/payouts/transfer/" + id} {
		for f.get(path).Code != http.StatusOK { // until the cache holds what the path reads
			time.Sleep(10 * time.Millisecond)
		}
	}
	return f
}

func (f benchFacade) get(path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = "192.0.2.10:40000"
	req.Header.Set("Authorization", "Bearer "+f.key)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// BenchmarkMiddlewareChain measures what the door adds to a request: request id and access
// record, body limit, routing, the per-address guard, key parsing, the cached key and account
// lookups with the constant-time hash check, the allow-list and the per-key rate limit, ending
// in the cheapest handler (amount-limits).
func BenchmarkMiddlewareChain(b *testing.B) {
	f := startBenchFacade(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if rec := f.get("/api/payouts/amount-limits"); rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCachedReads measures the two reads every integrator polls (issue 24 item 10), from
// parallel goroutines so that a lock on their path shows: GET deposit-options and GET transfer,
// against a bare handler writing a body of the same size (the floor of this harness: the
// recorder and the request).
func BenchmarkCachedReads(b *testing.B) {
	f := startBenchFacade(b)
	for _, c := range []struct{ name, path string }{
		{"deposit-options", "/api/payouts/deposit-options"},
		{"transfer", "/api/payouts/transfer/" + f.transferID},
	} {
		body := f.get(c.path).Body.Bytes()
		bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, http.StatusOK, body) })
		b.Run(c.name+"/bare", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					bare.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
				}
			})
		})
		b.Run(c.name+"/facade", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if rec := f.get(c.path); rec.Code != http.StatusOK {
						b.Errorf("status %d: %s", rec.Code, rec.Body)
						return
					}
				}
			})
		})
	}
}
