package apiserver

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/keyuse"
)

// keyPatches counts the facade's patches of API keys: the writes the last-use recorder costs
// the API server.
type keyPatches struct {
	client.Client
	n atomic.Int32
}

func (c *keyPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if _, ok := obj.(*payoutv1.APIKey); ok {
		c.n.Add(1)
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

var _ = Describe("an API key's last use", func() {
	It("is written once per interval however many requests the key serves, off the request path", func() {
		a := newAccount()
		counted := &keyPatches{Client: baseCfg.Client}
		// a clock of its own, an hour ahead: the suite's facade recorded the key's first uses
		clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour).Truncate(time.Second))
		cfg := baseCfg
		cfg.Client, cfg.Clock, cfg.KeyLastUsedInterval = counted, clk, time.Minute
		s := openServer(cfg, unlimited)
		c := a.c.on(s)

		lastUsed := func() string {
			k := &payoutv1.APIKey{}
			Expect(env.Client.Get(ctx, objKey(a.key.ID), k)).To(Succeed())
			return k.Annotations[payoutv1.APIKeyLastUsedAnnotation]
		}
		for range 100 {
			Expect(c.get("/api/payouts/amount-limits").status).To(Equal(200))
		}
		Eventually(lastUsed).Should(Equal(clk.Now().UTC().Format(time.RFC3339)))
		Consistently(counted.n.Load).WithTimeout(time.Second).Should(BeNumerically("==", 1), "100 requests of one key within the interval")

		// the next use after the interval is written again, once
		clk.Step(time.Minute)
		for range 50 {
			Expect(c.get("/api/payouts/amount-limits").status).To(Equal(200))
		}
		Eventually(lastUsed).Should(Equal(clk.Now().UTC().Format(time.RFC3339)))
		Consistently(counted.n.Load).WithTimeout(time.Second).Should(BeNumerically("==", 2))

		// a use the annotation already covers (another replica's write) is not written
		clk.Step(30 * time.Second)
		other := openServer(cfg, unlimited)
		Expect(a.c.on(other).get("/api/payouts/amount-limits").status).To(Equal(200))
		Consistently(counted.n.Load).WithTimeout(time.Second).Should(BeNumerically("==", 2))

		k := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, objKey(a.key.ID), k)).To(Succeed())
		at, ok := k.LastUsed()
		Expect(ok).To(BeTrue())
		Expect(at).To(BeTemporally("==", clk.Now().Add(-30*time.Second)))
	})

	It("paces its writes: keys used for the first time at once are written at most at its rate, each in turn", func() {
		counted := &keyPatches{Client: baseCfg.Client}
		const perSecond, keys = 5, 40
		rec := keyuse.New(counted, time.Minute, perSecond, GinkgoLogr)
		runCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go rec.Run(runCtx)

		start := time.Now()
		for i := range keys {
			// keys of no account: their patches answer NotFound, a write the API server served all the same
			rec.Touch(&payoutv1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("paced%011d", i)}}, start)
		}
		// a second's worth at once, then perSecond a second: never more, however fast the API server
		// answers (the release wrote all 40 within a few milliseconds)
		Consistently(func() bool {
			return float64(counted.n.Load()) <= perSecond*(1+time.Since(start).Seconds())
		}).WithTimeout(2 * time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())
		Eventually(counted.n.Load).WithTimeout(15*time.Second).Should(BeNumerically("==", keys), "every key written in turn")
	})
})
