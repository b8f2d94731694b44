package apiserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
)

func hasRateHeaders(r *response) bool {
	return r.header.Get("X-RateLimit-Limit") != "" || r.header.Get("X-RateLimit-Remaining") != "" || r.header.Get("X-RateLimit-Reset") != ""
}

var _ = Describe("authentication (spec 5)", func() {
	const path = "/api/payouts/deposit-options"

	It("answers missing, malformed, unknown, unmatched and revoked keys with 401", func() {
		acct := newAccount()
		bad := newCaller("")
		Expect(errorText(bad.get(path), 401)).To(ContainSubstring("missing API key"))
		Expect(errorText(bad.as("Basic dXNlcjpwYXNz").get(path), 401)).To(ContainSubstring("missing API key"))
		Expect(errorText(bad.as("Bearer not-a-key").get(path), 401)).To(ContainSubstring("malformed"))

		bad2 := newCaller("")
		jwt := bad2.as("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln").get(path)
		// this facade takes browser tokens (the dashboard's): a JWT-shaped value is checked as one, and
		// one that does not verify is a bad credential like a malformed key (spec 5.3)
		Expect(errorText(jwt, 401)).To(ContainSubstring("invalid or expired token"))
		unknown := bad2.as("Bearer svc_live_" + strings.Repeat("0", 16) + "_" + strings.Repeat("a", 64)).get(path)
		errorText(unknown, 401)
		unmatched := bad2.as("Bearer svc_live_" + acct.key.ID + "_" + strings.Repeat("b", 64)).get(path)
		errorText(unmatched, 401)
		Expect(unmatched.body).To(Equal(unknown.body), "unknown and unmatched keys must answer alike")

		key := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, objKey(acct.key.ID), key)).To(Succeed())
		mutate(key, func() { key.Spec.Revoked = true })
		var revoked *response
		Eventually(func() int { revoked = newCaller(acct.c.auth).get(path); return revoked.status }).WithTimeout(5 * time.Second).Should(Equal(401))
		Expect(revoked.body).To(Equal(unknown.body), "revoked and unknown keys must answer byte for byte alike")
		Expect(revoked.header.Get("WWW-Authenticate")).To(ContainSubstring("Bearer"))
	})

	It("blocks an address after 5 bad credentials in 10 minutes, valid keys included, until they age out", func() {
		acct := newAccount()
		c := newCaller("")
		for i := range 5 {
			r := c.as("Bearer svc_live_" + strings.Repeat("1", 16) + "_" + strings.Repeat("c", 64)).get(path)
			Expect(r.status).To(Equal(401), "bad credential %d", i+1)
		}
		sixth := c.as("Bearer svc_live_" + strings.Repeat("1", 16) + "_" + strings.Repeat("c", 64)).get(path)
		errorText(sixth, 429)
		Expect(hasRateHeaders(sixth)).To(BeFalse(), "an authentication block carries no rate-limit headers")

		valid := c.as(acct.c.auth).get(path)
		errorText(valid, 429)
		Expect(hasRateHeaders(valid)).To(BeFalse())
		Expect(acct.c.get(path).status).To(Equal(200), "another address is not affected")

		fakeNow.Step(10*time.Minute + time.Second)
		Expect(c.as(acct.c.auth).get(path).status).To(Equal(200), "capacity returns when the failures age out")
	})

	It("answers every request of a blocked address with 429, whatever it asks (CONTRACT on 5.3)", func() {
		acct := newAccount()
		c := newCaller("")
		bad := "Bearer svc_live_" + strings.Repeat("2", 16) + "_" + strings.Repeat("d", 64)
		for i := range 6 {
			c.as(bad).get(path)
			_ = i
		}
		big := `{"accountHolderName":"` + strings.Repeat("x", 70<<10) + `"}`
		for _, r := range []*response{
			c.as(acct.c.auth).get("/api/payouts/nothing-here"),            // else 404
			c.as(acct.c.auth).do("PUT", "/api/payouts/quote", nil),        // else 405
			c.get("/openapi.json"),                                        // else 200
			c.as(acct.c.auth).post("/api/payouts/recipients", big),        // else 413
			c.as(acct.c.auth).get("/api/payouts/recipients/987654321"),    // else 404
			c.as(acct.c.auth).get("/api/payouts/amount-limits"),           // else 200
			c.as(acct.c.auth).do("DELETE", "/api/payouts/recipients", ""), // else 405
		} {
			Expect(errorText(r, 429)).To(ContainSubstring("too many failed authentication attempts"))
			Expect(hasRateHeaders(r)).To(BeFalse())
		}
		// the probes keep the replica in service
		Expect(c.get("/healthz").status).To(Equal(200))
		Expect(acct.c.get("/openapi.json").status).To(Equal(200), "another address is not affected")
	})

	It("counts an oversized request with a bad credential as a bad credential", func() {
		c := newCaller("Bearer svc_live_" + strings.Repeat("3", 16) + "_" + strings.Repeat("e", 64))
		big := `{"accountHolderName":"` + strings.Repeat("x", 70<<10) + `"}`
		for i := range 5 {
			Expect(errorText(c.post("/api/payouts/recipients", big), 401)).To(Equal(msgBadKey), "oversized request %d", i+1)
		}
		errorText(c.post("/api/payouts/recipients", big), 429)
		// with a valid key the size is judged, and the answer is an authenticated one
		acct := newAccount()
		r := acct.c.post("/api/payouts/recipients", big)
		Expect(errorText(r, 413)).To(ContainSubstring("too large"))
		Expect(r.header.Get("X-RateLimit-Limit")).To(Equal("30"))
	})

	It("answers 503, counted against nobody, when the key or its account cannot be read", func() {
		// The cache is the informers' own store, which answers or misses but never fails: what
		// can fail is the read past it, of a key or an account this replica's cache does not
		// hold yet (keylookup.go). This facade's cache never holds them.
		_, key, lagging, informers := uncachedAccount("facade-unreadable")
		failing := &failingReads{Reader: baseCfg.APIReader}
		cfg := baseCfg
		cfg.Client, cfg.Informers, cfg.APIReader = lagging, informers, failing
		s := openServer(cfg)
		c := newCaller("Bearer " + key.Full).on(s)
		for _, kind := range []string{"account", "key"} {
			failing.kind.Store(kind)
			for i := range 12 { // past both limits of spec 5.3
				fakeNow.Step(time.Second) // the reads past the cache have a budget a second (keylookup.go)
				r := c.get(path)
				Expect(errorText(r, 503)).To(Equal(msgAuthUnavailable), "%s read failing, request %d", kind, i+1)
				Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())
				Expect(r.header.Get("WWW-Authenticate")).To(BeEmpty())
			}
		}
		failing.kind.Store("")
		Expect(c.get(path).status).To(Equal(200), "the caller's address was not blocked by the service's own faults")
		// an account that is really gone is still a bad key
		other := newAccount()
		Expect(env.Client.Delete(ctx, other.model)).To(Succeed())
		Eventually(func() int { return other.c.on(s).get(path).status }).Should(Equal(401))
	})

	It("answers 401 to the keys of an account being deleted, which waits for what it owes", func() {
		const hold = "test.payout.stablepay.dev/hold" // stands for money the account still owes
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Finalizers = append(a.Finalizers, hold) })
		Expect(acct.c.get(path).status).To(Equal(200))
		Expect(env.Client.Delete(ctx, acct.model)).To(Succeed())
		deleting := &payoutv1.PayoutAccount{}
		Expect(env.Client.Get(ctx, objKey(acct.name), deleting)).To(Succeed())
		Expect(deleting.DeletionTimestamp).NotTo(BeNil(), "the account stays while it is held")
		var r *response
		Eventually(func() int { r = acct.c.get(path); return r.status }).WithTimeout(5 * time.Second).Should(Equal(401))
		Expect(errorText(r, 401)).To(ContainSubstring("invalid API key"))
		mutate(deleting, func() {
			deleting.Finalizers = slices.DeleteFunc(deleting.Finalizers, func(f string) bool { return f == hold })
		})
	})

	It("answers 401 to the keys of a deleted account once an account of its name is created again, and counts them", func() {
		acct := newAccount()
		accountAgain(acct)
		fresh := newCaller("Bearer " + issueKey(acct.name).Full)
		// once the new account's key works, the facade's cache holds the new account
		Eventually(func() int { return fresh.get(path).status }).Should(Equal(200))

		unknown := newCaller("Bearer svc_live_" + strings.Repeat("4", 16) + "_" + strings.Repeat("f", 64)).get(path)
		old := newCaller(acct.c.auth)
		for i := range 5 {
			r := old.get(path)
			errorText(r, 401)
			Expect(r.body).To(Equal(unknown.body), "the deleted account's key %d answers as an unknown key", i+1)
		}
		errorText(old.get(path), 429) // a bad credential, as a revoked key is (docs/operations/keys.md)
		Expect(fresh.get(path).status).To(Equal(200))
	})

	It("blocks an address after 10 requests without usable authentication", func() {
		c := newCaller("")
		for i := range 10 {
			Expect(c.get(path).status).To(Equal(401), "request %d", i+1)
		}
		r := c.get(path)
		errorText(r, 429)
		Expect(hasRateHeaders(r)).To(BeFalse())
	})
})

var _ = Describe("IP allow-list (spec 5.4)", func() {
	It("admits listed addresses and refuses the others", func() {
		listed := newCaller("")
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.AllowedIPs = []string{listed.ip + "/32", "192.0.2.0/24"} })
		Expect(listed.as(acct.c.auth).get("/api/payouts/amount-limits").status).To(Equal(200))

		before := listed.as(acct.c.auth).get("/api/payouts/amount-limits")
		Expect(before.header.Get("X-RateLimit-Remaining")).To(Equal("58"))

		// an authenticated API-key answer carries the headers (spec 8.1), read without spending
		r := acct.c.get("/api/payouts/amount-limits")
		Expect(errorText(r, 403)).To(ContainSubstring("not allowed"))
		Expect(r.header.Get("X-RateLimit-Limit")).To(Equal("60"))
		Expect(r.header.Get("X-RateLimit-Remaining")).To(Equal("58"), "a refused address does not spend the key's budget")
		Expect(r.header.Get("X-RateLimit-Reset")).To(Equal(before.header.Get("X-RateLimit-Reset")))
		Expect(listed.as(acct.c.auth).get("/api/payouts/amount-limits").header.Get("X-RateLimit-Remaining")).To(Equal("57"))
	})

	It("refuses every address when none is listed that matches", func() {
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.AllowedIPs = []string{"192.0.2.0/24"} })
		errorText(acct.c.get("/api/payouts/deposit-options"), 403)
	})
})

// failingReads is a reader whose reads of API keys or accounts fail as an API server in trouble
// would (kind "key" or "account"; "" for none).
type failingReads struct {
	client.Reader
	kind atomic.Value
}

func (f *failingReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	kind, _ := f.kind.Load().(string)
	switch obj.(type) {
	case *payoutv1.APIKey:
		if kind == "key" {
			return apierrors.NewServiceUnavailable("informer cache not synced")
		}
	case *payoutv1.PayoutAccount:
		if kind == "account" {
			return errors.New("timed out waiting for the cache")
		}
	}
	return f.Reader.Get(ctx, key, obj, opts...)
}

var _ = Describe("API keys", func() {
	It("stores only the hash", func() {
		acct := newAccount()
		key := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, objKey(acct.key.ID), key)).To(Succeed())
		secret := strings.TrimPrefix(acct.key.Full, apikey.Prefix+acct.key.ID+"_")
		Expect(key.Spec.SecretHash).NotTo(ContainSubstring(secret))
		Expect(apikey.Matches(key.Spec.SecretHash, acct.key.Full)).To(BeTrue())
	})
})
