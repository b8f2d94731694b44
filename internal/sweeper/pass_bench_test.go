package sweeper

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/ledger"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	"github.com/stablepay/payout-operator/internal/scheme"
)

// benchDeposits is how many swept deposits the pass benchmark stores (docs/benchmarks.md).
const benchDeposits = 10_000

// counting counts the requests that reach the API server through it.
type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// balancesOnly is a mover whose chain answers only the metrics' balance reads: a pass over
// deposits that are all swept calls nothing else.
type balancesOnly struct{ Mover }

func (balancesOnly) Balances(context.Context, payoutv1.Network, string, int) (map[payoutv1.Token]*big.Int, *big.Int, float64, error) {
	return map[payoutv1.Token]*big.Int{}, new(big.Int), 0, nil
}

// MaxItems: as the EVM mover, the policy bounds a batch.
func (balancesOnly) MaxItems(payoutv1.Network) int { return 0 }

// storeSwept stores n deposits in namespace ns, each with its Sweep Confirmed (moved its amount),
// as a long-running installation holds them; it reuses what an earlier run stored.
func storeSwept(b *testing.B, ns string, n int) {
	b.Helper()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	var have payoutv1.SweepList
	if err := env.Client.List(ctx, &have, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	if len(have.Items) >= n {
		return
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 5000, 5000
	w, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	now := metav1.Now()
	work := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				hash := fmt.Sprintf("0x%064x", i+1)
				id := fmt.Sprintf("%024x", i+1)
				d := &payoutv1.Deposit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: payoutv1.DepositName(payoutv1.NetworkBase, hash, 0),
					Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
					Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: "0x" + strings.Repeat("11", 20),
						To: fmt.Sprintf("0x%040x", i+1), From: "0x" + strings.Repeat("22", 20), Amount: "1000000", TxHash: hash,
						BlockNumber: 7, BlockHash: "0x" + strings.Repeat("33", 32), BlockTime: now, Confirmations: 3}}
				if err := w.Create(ctx, d); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- err
					return
				}
				sw := &payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: d.Name},
					Spec: payoutv1.SweepSpec{Transfer: id, Network: d.Spec.Network, Token: d.Spec.Token, Address: d.Spec.To, Path: "1/2/3/4",
						Amount: d.Spec.Amount, DepositTxHash: hash, Reason: payoutv1.SweepPaidOut}}
				if err := w.Create(ctx, sw); apierrors.IsAlreadyExists(err) {
					continue
				} else if err != nil {
					errs <- err
					return
				}
				for _, st := range []payoutv1.SweepStatus{{State: payoutv1.SweepPending}, {State: payoutv1.SweepBatched, Batch: "base-usdc-bench"},
					{State: payoutv1.SweepConfirmed, Batch: "base-usdc-bench", TxHash: "0xabc", Moved: d.Spec.Amount, ConfirmedAt: &now}} {
					sw.Status = st
					if err := w.Status().Update(ctx, sw); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		select {
		case work <- i:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// BenchmarkPass10000Deposits: one sweeper pass with 10 000 swept deposits stored, the sweeper's
// client reading from an informer cache as payoutd's manager gives it; it reports the requests
// a pass sends to the API server, and the addresses two ledger checks in a row read from the
// chain (every one, then none: each is swept empty and nothing arrived since). Run by hand:
// go test -run '^$' -bench Pass10000 -benchtime 2x ./internal/sweeper/ (docs/benchmarks.md).
func BenchmarkPass10000Deposits(b *testing.B) {
	storeSwept(b, "sweeper-bench", benchDeposits)
	var requests atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt: rt, n: &requests} })
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Start(cctx) }()
	direct, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	cached, err := client.New(cfg, client.Options{Scheme: scheme.New(), Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		b.Fatal(err)
	}
	s := &Sweeper{Client: cached, Reader: direct, Mover: balancesOnly{}, Now: time.Now,
		Treasury: map[payoutv1.Network]string{payoutv1.NetworkBase: "0x" + strings.Repeat("44", 20)}}
	if _, err := s.Pass(ctx); err != nil { // the first pass starts the informers
		b.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the cache did not sync")
	}
	requests.Store(0)
	b.ResetTimer()
	for range b.N {
		if _, err := s.Pass(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(requests.Load())/float64(b.N), "api-requests/pass")

	// the chain answers as gather.EVMBalances does once every deposit is swept: zero at each
	// address read; a check that does not balance would mean the fixture, not the checker, decides
	// what the second check reads (an address that disagrees is read again)
	var read []int
	checker := &gather.Checker{Client: cached, Clock: clock.RealClock{},
		Balances: func(_ context.Context, addrs []ledger.Address) (map[ledger.Address]*big.Int, map[string]bool, error) {
			read = append(read, len(addrs))
			out := make(map[ledger.Address]*big.Int, len(addrs))
			for _, a := range addrs {
				out[a] = new(big.Int)
			}
			return out, map[string]bool{string(payoutv1.NetworkBase): true}, nil
		}}
	for i := range 2 {
		r, err := checker.Check(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !r.Balanced() {
			b.Fatalf("check %d does not balance: %+v", i+1, r.Failures)
		}
	}
	b.ReportMetric(float64(read[0]), "addresses-1st-check")
	b.ReportMetric(float64(read[1]), "addresses-2nd-check")
}
