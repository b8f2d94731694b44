package apiserver

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("a request waiting for the cache to show its write", func() {
	It("reads the cache again when the object's event arrives, not at every poll", func() {
		acct := newAccount()
		t := testgen.Transfer(payoutv1.AccountNamespace(acct.name), "ca0000000000000000000001", func(t *payoutv1.Transfer) { t.Spec.Account = acct.name })
		Expect(env.Client.Create(ctx, t)).To(Succeed())

		// the facade's cache does not show the transfer until released: an informer that lags
		var hidden atomic.Bool
		var reads atomic.Int64
		hidden.Store(true)
		cfg := baseCfg
		cfg.Client = hidingClient{Client: baseCfg.Client, name: t.Name, hidden: &hidden, reads: &reads}
		s := openServer(cfg)
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			s.awaitCached(ctx, t)
			close(done)
		}()
		// half a second: a poll backing off from 2 ms to 50 ms reads about 13 times meanwhile
		Consistently(done, 500*time.Millisecond).ShouldNot(BeClosed())
		hidden.Store(false)
		mutate(t, func() { t.Labels = map[string]string{"touched": "yes"} }) // the transfer's next event
		Eventually(done).Should(BeClosed())
		// the first read, one after the event, and one after each event the controllers caused
		// meanwhile (a status write or two)
		Expect(reads.Load()).To(BeNumerically("<=", 6), "reads of the cache while waiting")
	})
})

// hidingClient is a client whose reads of the transfer named name answer NotFound while hidden,
// and counts them.
type hidingClient struct {
	client.Client
	name   string
	hidden *atomic.Bool
	reads  *atomic.Int64
}

func (c hidingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*payoutv1.Transfer); ok && key.Name == c.name {
		c.reads.Add(1)
		if c.hidden.Load() {
			return apierrors.NewNotFound(schema.GroupResource{Group: payoutv1.GroupVersion.Group, Resource: "transfers"}, key.Name)
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// BenchmarkAwaitCachedCreate measures how long a request waits, after it created a transfer,
// until the facade's cache shows it: woken by the transfer's event (as the facade runs), and
// polling from 2 ms doubling to 50 ms (as it did), alternately in one run. Run by hand:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench AwaitCachedCreate -benchtime 200x ./apiserver/
func BenchmarkAwaitCachedCreate(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	env, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	bctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	acct := testgen.Account("await")
	if err := env.Client.Create(bctx, acct); err != nil {
		b.Fatal(err)
	}
	if err := env.Client.Create(bctx, tenancy.Namespace(acct)); err != nil {
		b.Fatal(err)
	}
	mgr := env.StartManager(bctx, b)
	s := &Server{cfg: Config{Client: mgr.GetClient(), Log: logr.Discard()}}
	if err := s.events.watch(bctx, mgr.GetCache(), &payoutv1.Transfer{}); err != nil {
		b.Fatal(err)
	}
	polling := &Server{cfg: s.cfg}
	var took [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		t := testgen.Transfer(payoutv1.AccountNamespace("await"), fmt.Sprintf("ac%022x", i))
		if err := env.Client.Create(bctx, t); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if i%2 == 0 {
			s.awaitCached(bctx, t)
		} else {
			polling.awaitCached(bctx, t)
		}
		took[i%2] += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(took[0].Microseconds())/float64((b.N+1)/2), "µs-event")
	b.ReportMetric(float64(took[1].Microseconds())/float64(max(b.N/2, 1)), "µs-poll")
}
