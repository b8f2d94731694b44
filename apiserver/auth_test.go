package apiserver

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
		Expect(errorText(jwt, 401)).To(ContainSubstring("malformed"))
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

		r := acct.c.get("/api/payouts/amount-limits")
		Expect(errorText(r, 403)).To(ContainSubstring("not allowed"))
		Expect(hasRateHeaders(r)).To(BeFalse(), "a refused address does not spend the key's budget")
	})

	It("refuses every address when none is listed that matches", func() {
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.AllowedIPs = []string{"192.0.2.0/24"} })
		errorText(acct.c.get("/api/payouts/deposit-options"), 403)
	})
})

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
