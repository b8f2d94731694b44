package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/browsertoken"
)

// Browser callers (spec 5.6, 5.3): the dashboard's signed-in users call the API with a token
// the facade signed.
var _ = Describe("browser callers (spec 5.6, 5.3)", func() {
	const issuer, audience = "https://dashboard.test/dashboard/", "https://api.test"
	var (
		keys  *browsertoken.Keys
		bsrv  *Server
		token func(a *account, ttl time.Duration) string
	)
	BeforeEach(func() {
		pemKey, err := browsertoken.NewKeyPEM()
		Expect(err).NotTo(HaveOccurred())
		keys, err = browsertoken.ParseKeys(pemKey)
		Expect(err).NotTo(HaveOccurred())
		cfg := baseCfg
		cfg.Browser = BrowserCallers{Keys: keys, Issuer: issuer, Audience: audience}
		bsrv = openServer(cfg)
		token = func(a *account, ttl time.Duration) string {
			GinkgoHelper()
			t, err := keys.Issue(issuer, audience, "user-of-"+a.name, a.name, string(a.model.UID), fakeNow.Now(), ttl)
			Expect(err).NotTo(HaveOccurred())
			return t
		}
	})

	It("quotes without a quoteId and ignores v2_offloader, where an API key's quote has both", func() {
		pct := payoutv1.Decimal("1.5")
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct; a.Spec.V2FeeStructure = true })
		browser := newCaller("Bearer " + token(acct, 5*time.Minute)).on(bsrv)
		r := browser.get(quotePath("EUR", "30.00", "v2_offloader", "true"))
		Expect(r.status).To(Equal(200), "%s", r)
		q := r.json()
		Expect(q).NotTo(HaveKey("quoteId"))
		Expect(q["serviceFeePercent"]).To(Equal(json.Number("1.5")), "v2_offloader is ignored for a browser caller")
		Expect(r.header.Get("X-RateLimit-Limit")).To(Equal("20"), "the same per-minute budget as a key")

		keyed := acct.c.on(bsrv).get(quotePath("EUR", "30.00", "v2_offloader", "true")).json()
		Expect(keyed).To(HaveKey("quoteId"))
		Expect(keyed["serviceFeePercent"]).To(Equal(json.Number("1.7")))
	})

	It("creates a browser caller's transfer without a quote_id, priced as its quote, by the same rules; an API key's still needs one", func() {
		p := newPayee(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true })
		browser := newCaller("Bearer " + token(p.account, 5*time.Minute)).on(bsrv)
		quoted := browser.get(quotePath("EUR", "25.00"))
		Expect(quoted.status).To(Equal(200), "%s", quoted)

		body := v1Body("", "25.00", p.rid)
		delete(body, "quote_id")
		keyed := p.c.on(bsrv).post("/api/payouts/transfer", body)
		Expect(errorText(keyed, 400)).To(ContainSubstring("quote_id"), "an API key's create names its quote")

		// rule 1 goes first for a browser caller too: a wallet not KYC-verified for the account
		body["customer_uuid"], body["wallet_address"] = uuid.NewString(), "0x00000000000000000000000000000000000000e7"
		Expect(errorText(browser.post("/api/payouts/transfer", body), 403)).To(ContainSubstring("KYC"))
		body["wallet_address"] = senderWallet // verified by newPayee
		var r *response
		Eventually(func() int {
			body["customer_uuid"] = uuid.NewString()
			r = browser.post("/api/payouts/transfer", body)
			return r.status
		}).Should(Equal(200))
		tr := r.json()["transfer"].(map[string]any)
		Expect(tr["status"]).To(Equal("ready_to_process"))
		q := tr["quote"].(map[string]any)
		Expect(q["targetAmount"]).To(Equal(quoted.json()["quote"].(map[string]any)["targetAmount"]), "priced as the quote shown")
		t := storedTransfer(p.account, tr["id"].(string))
		Expect(t.Name).To(Equal(payoutv1.TransferNameForQuote(t.Spec.QuoteID)))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Spec.QuoteID}, &payoutv1.Quote{})).To(Succeed(), "the quote priced for it is stored")

		// the amount's rules are the quote's: outside the account's bounds is a 400
		body["customer_uuid"], body["amount"] = uuid.NewString(), json.Number("2000000")
		Expect(errorText(browser.post("/api/payouts/transfer", body), 400)).To(ContainSubstring("amount"))
	})

	It("refuses tampered, expired, wrong-audience and foreign tokens as bad credentials, counted toward the block", func() {
		acct := newAccount()
		good := token(acct, 5*time.Minute)
		// the payload changed to name another account, the signature kept
		other := newAccount()
		parts := strings.Split(good, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		Expect(err).NotTo(HaveOccurred())
		forged := strings.ReplaceAll(string(payload), `"`+string(acct.model.UID)+`"`, `"`+string(other.model.UID)+`"`)
		forged = strings.ReplaceAll(forged, `"`+acct.name+`"`, `"`+other.name+`"`)
		Expect(forged).NotTo(Equal(string(payload)))
		tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
		expired := token(acct, -time.Second)
		otherAud, err := keys.Issue(issuer, "https://another-api.test", "u", acct.name, string(acct.model.UID), fakeNow.Now(), time.Minute)
		Expect(err).NotTo(HaveOccurred())
		foreignPEM, err := browsertoken.NewKeyPEM()
		Expect(err).NotTo(HaveOccurred())
		foreignKeys, err := browsertoken.ParseKeys(foreignPEM)
		Expect(err).NotTo(HaveOccurred())
		foreign, err := foreignKeys.Issue(issuer, audience, "u", acct.name, string(acct.model.UID), fakeNow.Now(), time.Minute)
		Expect(err).NotTo(HaveOccurred())
		otherAccount, err := keys.Issue(issuer, audience, "u", acct.name, "not-the-uid", fakeNow.Now(), time.Minute)
		Expect(err).NotTo(HaveOccurred())

		c := newCaller("").on(bsrv)
		for i, t := range []string{tampered, expired, otherAud, foreign, otherAccount} {
			r := c.as("Bearer " + t).get("/api/payouts/amount-limits")
			Expect(errorText(r, 401)).To(Equal(msgBadToken), "token %d", i)
		}
		errorText(c.as("Bearer "+tampered).get("/api/payouts/amount-limits"), 429)
		errorText(c.as("Bearer "+good).get("/api/payouts/amount-limits"), 429)
		Expect(newCaller("Bearer "+good).on(bsrv).get("/api/payouts/amount-limits").status).To(Equal(200), "the same token from another address works")
	})

	It("refuses a token on a facade that takes none, as a bad credential", func() {
		acct := newAccount()
		r := newCaller("Bearer " + token(acct, time.Minute)).get("/api/payouts/amount-limits")
		Expect(errorText(r, 401)).To(Equal(msgBadToken))
	})
})
