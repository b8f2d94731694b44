package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("a key the cache does not hold yet (issue 25 item 4)", func() {
	const path = "/api/payouts/amount-limits"

	It("is read from the API server: a key used the moment it is created answers 200 and counts as no failure", func() {
		// The facade's cache never sees this account or its key: the informer's lag at its
		// worst, deterministically.
		name, key, lagging, informers := uncachedAccount("facade-new")
		Expect(apierrors.IsNotFound(lagging.Get(ctx, objKey(key.ID), &payoutv1.APIKey{}))).To(BeTrue(), "the facade's cache must not hold the key")
		Expect(apierrors.IsNotFound(lagging.Get(ctx, objKey(name), &payoutv1.PayoutAccount{}))).To(BeTrue(), "nor its account")

		cfg := baseCfg
		cfg.Client, cfg.Informers = lagging, informers
		s := openServer(cfg)
		c := newCaller("Bearer " + key.Full).on(s)
		for i := range 6 { // one past the bad-credential limit of spec 5.3
			Expect(c.get(path).status).To(Equal(200), "call %d of a key the cache does not hold", i+1)
		}

		// the key read past the cache is verified as a cached one is: a wrong secret is a bad
		// credential, and counts
		wrong := newCaller("Bearer " + apikey.Prefix + key.ID + "_" + strings.Repeat("f", 64)).on(s)
		for i := range 5 {
			Expect(errorText(wrong.get(path), 401)).To(Equal(msgBadKey), "wrong secret %d", i+1)
		}
		errorText(wrong.get(path), 429)
		// a revoked key is refused at once (the read is the API server's, not a lagging cache's)
		stored := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, objKey(key.ID), stored)).To(Succeed())
		mutate(stored, func() { stored.Spec.Revoked = true })
		Expect(errorText(c.get(path), 401)).To(Equal(msgBadKey))
	})

	It("keeps answering a key it has read while new keys or random ids spend the read budget", func() {
		// While the informer lags, every request of a new key is read past the cache: a key that
		// had just answered 200 got 401 (counted against its caller) once other new keys or a
		// spray had spent the budget. Its reads past the budget are still reads, so its
		// revocation counts at once.
		_, key, lagging, informers := uncachedAccount("facade-known")
		var reads atomic.Int64
		cfg := baseCfg
		cfg.Client, cfg.Informers = lagging, informers
		cfg.APIReader = countingReader(&reads)
		clk := clocktesting.NewFakeClock(time.Now()) // frozen: the budget does not refill
		cfg.Clock = clk
		s := openServer(cfg, unlimited, func(s *Server) {
			s.guard = memoryGuard{newAuthGuard(10*time.Minute, 1<<20, 1<<20, clk.Now)}
		})
		c := newCaller("Bearer " + key.Full).on(s)
		Expect(c.get(path).status).To(Equal(200), "the key's first call, read past the cache")
		sprayed, err := metricstest.Gather()
		Expect(err).NotTo(HaveOccurred())
		spray := newCaller("").on(s)
		for range keyLookupBurst {
			k, err := apikey.New()
			Expect(err).NotTo(HaveOccurred())
			Expect(errorText(spray.as("Bearer "+k.Full).get(path), 401)).To(Equal(msgBadKey))
		}
		after, err := metricstest.Gather()
		Expect(err).NotTo(HaveOccurred())
		Expect(after.Delta(sprayed, metrics.FacadeKeyReadsName, "result", metrics.KeyReadUnread)).
			To(BeEquivalentTo(1), "the spray's last id was left unread (payout_facade_key_reads_total)")
		before := reads.Load()
		for i := range 6 { // one past the bad-credential limit of spec 5.3
			Expect(c.get(path).status).To(Equal(200), "call %d of the key after the budget was spent", i+2)
		}
		Expect(reads.Load()-before).To(BeEquivalentTo(6), "each call read the key from the API server")

		stored := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, objKey(key.ID), stored)).To(Succeed())
		mutate(stored, func() { stored.Spec.Revoked = true })
		Expect(errorText(c.get(path), 401)).To(Equal(msgBadKey), "revoked: refused at once")
	})

	It("still blocks an address after 6 random unknown key ids", func() {
		c := newCaller("")
		for i := range 5 {
			k, err := apikey.New()
			Expect(err).NotTo(HaveOccurred())
			Expect(errorText(c.as("Bearer "+k.Full).get(path), 401)).To(Equal(msgBadKey), "unknown key %d", i+1)
		}
		k, err := apikey.New()
		Expect(err).NotTo(HaveOccurred())
		errorText(c.as("Bearer "+k.Full).get(path), 429)
	})

	It("bounds the API-server reads a flood of unknown key ids makes", func() {
		var reads atomic.Int64
		cfg := baseCfg
		cfg.APIReader = countingReader(&reads)
		clk := clocktesting.NewFakeClock(time.Now()) // frozen: the budget refills only when it steps
		cfg.Clock = clk
		s := openServer(cfg, unlimited, func(s *Server) {
			// no address blocks: every request of the flood reaches authentication
			s.guard = memoryGuard{newAuthGuard(10*time.Minute, 1<<20, 1<<20, clk.Now)}
		})
		c := newCaller("").on(s)
		unknown := func() string {
			k, err := apikey.New()
			Expect(err).NotTo(HaveOccurred())
			return "Bearer " + k.Full
		}

		// concurrent requests for one unknown id share one read, and the id is then known absent
		same := unknown()
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				defer GinkgoRecover()
				Expect(errorText(c.as(same).get(path), 401)).To(Equal(msgBadKey))
			})
		}
		wg.Wait()
		Expect(errorText(c.as(same).get(path), 401)).To(Equal(msgBadKey))
		Expect(reads.Load()).To(BeEquivalentTo(1), "21 requests for one unknown id")

		// distinct ids: the burst, then nothing more until the budget refills
		flood := make([]string, 3*keyLookupBurst)
		for i := range flood {
			flood[i] = unknown()
			Expect(errorText(c.as(flood[i]).get(path), 401)).To(Equal(msgBadKey))
		}
		Expect(reads.Load()).To(BeEquivalentTo(keyLookupBurst))
		for _, auth := range flood {
			Expect(errorText(c.as(auth).get(path), 401)).To(Equal(msgBadKey))
		}
		Expect(reads.Load()).To(BeEquivalentTo(keyLookupBurst), "ids read once are remembered absent; the others wait for the budget")

		clk.Step(time.Second)
		for range 3 * keyLookupBurst {
			Expect(errorText(c.as(unknown()).get(path), 401)).To(Equal(msgBadKey))
		}
		Expect(reads.Load()).To(BeEquivalentTo(keyLookupBurst+keyLookupRate), "a second refills the rate, no more")
	})
})

var _ = Describe("a key of an account made again while the cache holds the earlier one (issue 25 item 8)", func() {
	const path = "/api/payouts/amount-limits"

	It("is read past the cache: the new account's key answers 200, the earlier one's 401", func() {
		acct := newAccount()
		// what a lagging cache holds: the earlier account, its deletion begun (the last the
		// informer saw of it)
		earlier := &payoutv1.PayoutAccount{}
		Expect(env.Client.Get(ctx, objKey(acct.name), earlier)).To(Succeed())
		deleted := metav1.Now()
		earlier.DeletionTimestamp = &deleted
		accountAgain(acct)
		key := issueKey(acct.name)

		cfg := baseCfg
		cfg.Client = staleAccount{Client: baseCfg.Client, acct: earlier}
		s := openServer(cfg)
		fresh := newCaller("Bearer " + key.Full).on(s)
		for i := range 6 { // one past the bad-credential limit of spec 5.3
			Expect(fresh.get(path).status).To(Equal(200), "call %d of the new account's key", i+1)
		}
		// the earlier account's key: refused, and counted, by the account the cache holds
		old := newCaller(acct.c.auth).on(s)
		for i := range 5 {
			Expect(errorText(old.get(path), 401)).To(Equal(msgBadKey), "the earlier account's key, call %d", i+1)
		}
		errorText(old.get(path), 429)
	})
})

// accountAgain deletes acct, waits for the controllers to run its deletion to its end (nothing
// in its namespace is owed), and creates an account of its name again.
func accountAgain(acct *account) {
	GinkgoHelper()
	Expect(env.Client.Delete(ctx, acct.model)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, objKey(acct.name), &payoutv1.PayoutAccount{}))
	}).WithTimeout(30 * time.Second).Should(BeTrue())
	again := testgen.Account(acct.name)
	Expect(env.Client.Create(ctx, again)).To(Succeed())
	Expect(tenancy.EnsureNamespace(ctx, env.Client, again)).To(Succeed())
}

// staleAccount is a client whose cache holds acct, as it was, in place of the account of its
// name: an informer that has not seen the account deleted and made again.
type staleAccount struct {
	client.Client
	acct *payoutv1.PayoutAccount
}

func (c staleAccount) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if a, ok := obj.(*payoutv1.PayoutAccount); ok && key.Name == c.acct.Name {
		c.acct.DeepCopyInto(a)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// uncachedAccount makes an account named after prefix with a key, and an informer cache (with a
// client reading from it) that never holds either.
func uncachedAccount(prefix string) (string, apikey.Key, client.Client, cache.Informers) {
	GinkgoHelper()
	catchUpClock()
	name := fmt.Sprintf("%s-%d", prefix, accountCounter.Add(1))
	key, err := apikey.New()
	Expect(err).NotTo(HaveOccurred())
	lagging, informers := cacheWithout(name, key.ID)
	a := testgen.Account(name)
	Expect(env.Client.Create(ctx, a)).To(Succeed())
	Expect(tenancy.EnsureNamespace(ctx, env.Client, a)).To(Succeed())
	Expect(env.Client.Create(ctx, testgen.APIKey(key.ID, name, func(k *payoutv1.APIKey) { k.Spec.SecretHash = key.Hash }))).To(Succeed())
	return name, key, lagging, informers
}

// cacheWithout is a client that reads from an informer cache of its own, one that never holds
// the accounts or API keys of the given names, and writes to the API server; and that cache.
func cacheWithout(account, keyID string) (client.Client, cache.Informers) {
	GinkgoHelper()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&payoutv1.PayoutAccount{}: {Field: fields.OneTermNotEqualSelector("metadata.name", account)},
		&payoutv1.APIKey{}:        {Field: fields.OneTermNotEqualSelector("metadata.name", keyID)},
	}})
	Expect(err).NotTo(HaveOccurred())
	cctx, stop := context.WithCancel(ctx)
	DeferCleanup(stop)
	go func() {
		defer GinkgoRecover()
		Expect(c.Start(cctx)).To(Succeed())
	}()
	Expect(c.WaitForCacheSync(cctx)).To(BeTrue())
	cl, err := client.New(env.Config, client.Options{Scheme: env.Scheme, Cache: &client.CacheOptions{Reader: c}})
	Expect(err).NotTo(HaveOccurred())
	return cl, c
}

// countingReader is a client that reads the API server directly, as the manager's APIReader
// does, and counts its reads of API keys in reads.
func countingReader(reads *atomic.Int64) client.Reader {
	GinkgoHelper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/apikeys/") {
				reads.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	cl, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return cl
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var _ = Describe("a replica whose informers have not synced yet", func() {
	It("holds the first requests until they have, rather than reading every key as unknown", func() {
		acct := newAccount()
		keys := make([]apikey.Key, 2*keyLookupBurst)
		for i := range keys {
			keys[i] = issueKey(acct.name)
		}
		// a cache of its own, started only after the burst has arrived: a replica just started
		c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(index.Register(ctx, c)).To(Succeed())
		cl, err := client.New(env.Config, client.Options{Scheme: env.Scheme, Cache: &client.CacheOptions{Reader: c}})
		Expect(err).NotTo(HaveOccurred())
		cfg := baseCfg
		cfg.Client, cfg.Informers = cl, c
		s := openServer(cfg)
		statuses := make(chan int, len(keys))
		for _, k := range keys {
			go func() {
				defer GinkgoRecover()
				statuses <- newCaller("Bearer " + k.Full).on(s).get("/api/payouts/amount-limits").status
			}()
		}
		Consistently(statuses, 300*time.Millisecond).ShouldNot(Receive(), "answered before the cache had synced")
		cctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() {
			defer GinkgoRecover()
			Expect(c.Start(cctx)).To(Succeed())
		}()
		for range keys {
			var status int
			Eventually(statuses).Should(Receive(&status))
			Expect(status).To(Equal(200), "a valid key of a replica that was starting")
		}
	})
})
