package apiserver

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var _ = Describe("deposit options (spec 4.1)", func() {
	It("lists every option with its availability, and an operator can switch one off", func() {
		acct := newAccount()
		statusOf := func() map[string]string {
			out := map[string]string{}
			for _, o := range acct.c.get("/api/payouts/deposit-options").json()["options"].([]any) {
				m := o.(map[string]any)
				out[m["token"].(string)+"/"+m["network"].(string)] = m["status"].(string)
			}
			return out
		}
		// payoutd creates the eight options at start, one by one
		Eventually(statusOf).Should(And(HaveLen(8), HaveKeyWithValue("usdc/base", "available")))
		Expect(statusOf()).To(HaveKeyWithValue("usdc/solana", "unavailable"), "no chain endpoint is watched for solana here")

		opt := &payoutv1.DepositOption{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "usdc-base"}, opt)).To(Succeed())
		mutate(opt, func() { opt.Spec.Enabled = false })
		DeferCleanup(func() {
			mutate(opt, func() { opt.Spec.Enabled = true })
			Eventually(statusOf).Should(HaveKeyWithValue("usdc/base", "available"))
		})
		Eventually(statusOf).Should(HaveKeyWithValue("usdc/base", "unavailable"))
	})
})

var _ = Describe("account requirements (spec 4.2, 4.3)", func() {
	It("serves the descriptors and refreshes them", func() {
		acct := newAccount()
		types := func(r *response) map[string]map[string]any {
			Expect(r.status).To(Equal(200), "%s", r)
			out := map[string]map[string]any{}
			for _, d := range r.json()["data"].([]any) {
				m := d.(map[string]any)
				fields := map[string]any{}
				for _, g := range m["fields"].([]any) {
					for _, f := range g.(map[string]any)["group"].([]any) {
						fm := f.(map[string]any)
						fields[fm["key"].(string)] = fm
					}
				}
				out[m["type"].(string)] = fields
			}
			return out
		}
		eur := types(acct.c.get("/api/payouts/account-requirements?currency=EUR"))
		Expect(eur).To(HaveKey("iban"))
		Expect(eur["iban"]).To(HaveKey("legalType"))
		gbp := types(acct.c.get("/api/payouts/account-requirements?currency=GBP"))
		Expect(gbp["sort_code"]).To(HaveKey("sortCode"))
		usd := types(acct.c.get("/api/payouts/account-requirements?currency=USD"))
		Expect(usd["aba"]).To(HaveKey("address.country"))

		private := types(acct.c.post("/api/payouts/account-requirements?currency=ARS", map[string]any{"type": "argentina", "details": map[string]any{"legalType": "PRIVATE"}}))
		business := types(acct.c.post("/api/payouts/account-requirements?currency=ARS", map[string]any{"type": "argentina", "details": map[string]any{"legalType": "BUSINESS"}}))
		Expect(len(business["argentina"])).To(BeNumerically(">", len(private["argentina"])), "BUSINESS adds fields")
		// spec 2.1.1: a sort_code recipient is legalType and the account fields, for either legal
		// type; its address is optional
		private = types(acct.c.post("/api/payouts/account-requirements?currency=GBP", map[string]any{"type": "sort_code", "details": map[string]any{"legalType": "PRIVATE"}}))
		business = types(acct.c.post("/api/payouts/account-requirements?currency=GBP", map[string]any{"type": "sort_code", "details": map[string]any{"legalType": "BUSINESS"}}))
		Expect(business["sort_code"]).To(Equal(private["sort_code"]))
		Expect(private["sort_code"]["address.country"]).To(HaveKeyWithValue("required", false))
	})

	It("refuses BGN, unknown currencies and a missing currency with 400", func() {
		acct := newAccount()
		Expect(errorText(acct.c.get("/api/payouts/account-requirements?currency=BGN"), 400)).To(ContainSubstring("EUR"))
		errorText(acct.c.get("/api/payouts/account-requirements?currency=XYZ"), 400)
		Expect(errorText(acct.c.get("/api/payouts/account-requirements"), 400)).To(HavePrefix("currency"))
		errorText(acct.c.post("/api/payouts/account-requirements?currency=BGN", map[string]any{"type": "iban", "details": map[string]any{}}), 400)
		Expect(errorText(acct.c.post("/api/payouts/account-requirements?currency=EUR", map[string]any{"details": map[string]any{}}), 400)).To(HavePrefix("type"))
	})
})

var _ = Describe("amount limits and the platform fee (spec 4.13, 4.14)", func() {
	It("reports no limits by default and the configured ones", func() {
		free := newAccount()
		Expect(free.c.get("/api/payouts/amount-limits").body).To(MatchJSON(`{"min_amount":null,"max_amount":null}`))
		lo, hi := payoutv1.USDAmount("10"), payoutv1.USDAmount("100.50")
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.AmountLimits = payoutv1.AmountLimits{Min: &lo, Max: &hi} })
		Expect(acct.c.get("/api/payouts/amount-limits").body).To(MatchJSON(`{"min_amount":10,"max_amount":100.5}`))
	})

	It("computes the fee on the amount parameter within 0.01..1000000", func() {
		pct := payoutv1.Decimal("1.5")
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct })
		Expect(acct.c.get("/api/payouts/fee?amount=20.00").body).To(MatchJSON(`{"svcFee":0.30,"svcFeePercentage":1.5}`))
		Expect(acct.c.get("/api/payouts/fee?amount=0.01").status).To(Equal(200))
		Expect(acct.c.get("/api/payouts/fee?amount=1000000").status).To(Equal(200))
		for _, bad := range []string{"0", "1000000.01", "-1", "abc", ""} {
			Expect(errorText(acct.c.get("/api/payouts/fee?amount="+bad), 400)).To(HavePrefix("amount"))
		}
		Expect(errorText(acct.c.get("/api/payouts/fee"), 400)).To(HavePrefix("amount"))
		free := newAccount()
		Expect(free.c.get("/api/payouts/fee?amount=20").body).To(MatchJSON(`{"svcFee":0.00,"svcFeePercentage":0}`))
	})
})
