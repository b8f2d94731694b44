package apiserver

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testgen"
)

func quotePath(currency, amount string, extra ...string) string {
	q := url.Values{"targetCurrency": {currency}, "sourceAmount": {amount}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return "/api/payouts/quote?" + q.Encode()
}

func dec(v any) decimal.Decimal {
	GinkgoHelper()
	n, ok := v.(json.Number)
	Expect(ok).To(BeTrue(), "%v (%T) is not a JSON number", v, v)
	return decimal.RequireFromString(n.String())
}

var _ = Describe("quotes (spec 4.9, 2.4)", func() {
	It("prices each currency, stores the quote and keeps the fee breakdown exact", func() {
		acct := newAccount()
		for _, cur := range []string{"EUR", "GBP", "USD", "PHP", "JPY", "KWD"} {
			r := acct.c.get(quotePath(cur, "25.00"))
			Expect(r.status).To(Equal(200), "%s", r)
			q := r.json()
			id := q["quoteId"].(string)
			Expect(uuid.Parse(id)).Error().NotTo(HaveOccurred())
			Expect(dec(q["sourceAmount"]).Equal(decimal.RequireFromString("25"))).To(BeTrue())
			Expect(q["targetCurrency"]).To(Equal(cur))
			Expect(dec(q["serviceFeePercent"]).IsZero()).To(BeTrue())
			in := q["quote"].(map[string]any)
			fee, fx, po := dec(in["transferFee"]), dec(in["feeFxAmount"]), dec(in["feePayoutAmount"])
			Expect(fx.Add(po).Equal(fee)).To(BeTrue(), "%s: %s + %s != %s", cur, fx, po, fee)

			stored := &payoutv1.Quote{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: id}, stored)).To(Succeed())
			Expect(string(stored.Spec.TargetAmount)).To(Equal(string(in["targetAmount"].(json.Number))))
			Expect(stored.Spec.ExpiresAt.Time).To(BeTemporally("~", fakeNow.Now().Add(5*time.Minute), time.Second))
		}
	})

	It("prices an e-mail recipient without a transfer fee or breakdown", func() {
		acct := newAccount()
		q := acct.c.get(quotePath("EUR", "40.00", "recipientType", "email_recipient")).json()["quote"].(map[string]any)
		Expect(dec(q["transferFee"]).IsZero()).To(BeTrue())
		Expect(q["feeFxPercent"]).To(BeNil())
		Expect(q["feeFxAmount"]).To(BeNil())
		Expect(q["feePayoutAmount"]).To(BeNil())
		Expect(errorText(acct.c.get(quotePath("GBP", "40.00", "recipientType", "email_recipient")), 400)).To(HavePrefix("recipientType"))
		Expect(errorText(acct.c.get(quotePath("GBP", "40.00", "recipientType", "no_such_type")), 400)).To(HavePrefix("recipientType"))
	})

	It("adds 20 basis points for v2 offloaders and only for them", func() {
		pct := payoutv1.Decimal("1.5")
		plain := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct })
		Expect(plain.c.get(quotePath("EUR", "30.00", "v2_offloader", "true")).json()["serviceFeePercent"]).To(Equal(json.Number("1.5")))
		v2 := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct; a.Spec.V2FeeStructure = true })
		q := v2.c.get(quotePath("EUR", "30.00", "v2_offloader", "true")).json()
		Expect(q["serviceFeePercent"]).To(Equal(json.Number("1.7")))
		Expect(q).NotTo(HaveKey("providerCharge"))
		if f, ok := q["serviceFeeFixed"]; ok {
			Expect(dec(f).IsZero()).To(BeTrue())
		}
		Expect(v2.c.get(quotePath("EUR", "30.00")).json()["serviceFeePercent"]).To(Equal(json.Number("1.5")))
		Expect(errorText(v2.c.get(quotePath("EUR", "30.00", "v2_offloader", "maybe")), 400)).To(HavePrefix("v2_offloader"))
	})

	It("prices a service fee just below 100% without an internal error", func() {
		pct := payoutv1.Decimal("99.99")
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct; a.Spec.V2FeeStructure = true })
		fee := acct.c.get("/api/payouts/fee?amount=20.00")
		Expect(fee.status).To(Equal(200), "%s", fee)
		Expect(fee.body).To(MatchJSON(`{"svcFee":20.00,"svcFeePercentage":99.99}`))
		for _, extra := range [][]string{nil, {"v2_offloader", "true"}} {
			r := acct.c.get(quotePath("EUR", "20.00", extra...))
			Expect(r.status).To(Equal(200), "%s", r)
			Expect(dec(r.json()["quote"].(map[string]any)["targetAmount"]).IsZero()).To(BeTrue(), "the fees take everything")
		}
		// the configuration refuses what pricing cannot take
		hundred := payoutv1.Decimal("100")
		err := env.Client.Create(ctx, testgen.Account("facade-fee-100", func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &hundred }))
		Expect(err).To(MatchError(ContainSubstring("percent must be below 100")))
	})

	It("prices an amount finer than a cent, rounded half-up to cents, within the bounds as asked", func() {
		pct := payoutv1.Decimal("1.5")
		lo, hi := payoutv1.USDAmount("10"), payoutv1.USDAmount("100")
		acct := newAccount(func(a *payoutv1.PayoutAccount) {
			a.Spec.ServiceFee.Percent = &pct
			a.Spec.AmountLimits = payoutv1.AmountLimits{Min: &lo, Max: &hi}
		})
		// spec 4.9 and 4.14: 0.01 to 1000000, no precision rule
		for asked, priced := range map[string]string{"10.005": "10.01", "10.004": "10", "99.9949": "99.99", "10.0000": "10"} {
			r := acct.c.get(quotePath("EUR", asked))
			Expect(r.status).To(Equal(200), "%s: %s", asked, r)
			q := r.json()
			Expect(dec(q["sourceAmount"]).Equal(decimal.RequireFromString(priced))).To(BeTrue(), "%s priced as %v", asked, q["sourceAmount"])
			same := acct.c.get(quotePath("EUR", priced)).json()
			Expect(q["quote"].(map[string]any)["targetAmount"]).To(Equal(same["quote"].(map[string]any)["targetAmount"]), "%s is priced as %s", asked, priced)
			stored := &payoutv1.Quote{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: q["quoteId"].(string)}, stored)).To(Succeed())
			Expect(decimal.RequireFromString(string(stored.Spec.SourceAmount)).Equal(decimal.RequireFromString(priced))).To(BeTrue())
		}
		fee := acct.c.get("/api/payouts/fee?amount=10.005")
		Expect(fee.status).To(Equal(200), "%s", fee)
		Expect(fee.body).To(MatchJSON(`{"svcFee":0.15,"svcFeePercentage":1.5}`)) // 1.5% of 10.01
		Expect(acct.c.get("/api/payouts/fee?amount=0.015").body).To(MatchJSON(`{"svcFee":0.00,"svcFeePercentage":1.5}`))
		// every bound holds for the amount as asked, though it would round inside
		Expect(errorText(acct.c.get(quotePath("EUR", "9.995")), 400)).To(ContainSubstring("9.995 USD is below this account's minimum"))
		Expect(errorText(acct.c.get(quotePath("EUR", "100.001")), 400)).To(ContainSubstring("100.001 USD is above"))
		free := newAccount()
		for _, bad := range []string{"0.005", "0.0099", "1000000.001"} {
			Expect(errorText(free.c.get(quotePath("EUR", bad)), 400)).To(HavePrefix("sourceAmount"), bad)
			Expect(errorText(free.c.get("/api/payouts/fee?amount="+bad), 400)).To(HavePrefix("amount"), bad)
		}
	})

	It("enforces the amount bounds, the account limits and the currencies", func() {
		lo, hi := payoutv1.USDAmount("10"), payoutv1.USDAmount("100")
		acct := newAccount()
		limited := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.AmountLimits = payoutv1.AmountLimits{Min: &lo, Max: &hi} })
		for _, ok := range []string{"0.01", "1000000"} {
			Expect(acct.c.get(quotePath("EUR", ok)).status).To(Equal(200))
		}
		for _, bad := range []string{"0", "0.009", "-5", "1000000.01", "abc", "", "1e3"} {
			Expect(errorText(acct.c.get(quotePath("EUR", bad)), 400)).To(HavePrefix("sourceAmount"), "amount %q", bad)
		}
		Expect(errorText(acct.c.get("/api/payouts/quote?targetCurrency=EUR"), 400)).To(HavePrefix("sourceAmount"))
		Expect(errorText(acct.c.get("/api/payouts/quote?sourceAmount=20"), 400)).To(HavePrefix("targetCurrency"))
		Expect(errorText(acct.c.get(quotePath("BGN", "20")), 400)).To(ContainSubstring("EUR"))
		// codes compare in ASCII: a dotless ı is no I (Unicode case mapping would read ILS)
		Expect(errorText(acct.c.get("/api/payouts/quote?sourceAmount=20&targetCurrency=%C4%B1ls"), 400)).To(HavePrefix("targetCurrency"))
		Expect(errorText(acct.c.get("/api/payouts/quote?sourceAmount=20&targetCurrency=%C5%BFek"), 400)).To(HavePrefix("targetCurrency"))
		Expect(acct.c.get(quotePath("ils", "20")).json()["targetCurrency"]).To(Equal("ILS"))
		errorText(acct.c.get(quotePath("XYZ", "20")), 400)
		for _, ok := range []string{"10", "50.00", "100"} {
			Expect(limited.c.get(quotePath("EUR", ok)).status).To(Equal(200))
		}
		for _, bad := range []string{"9.99", "100.01"} {
			Expect(errorText(limited.c.get(quotePath("EUR", bad)), 400)).To(HavePrefix("sourceAmount"))
		}
	})
})

var _ = Describe("an account whose namespace does not exist yet", func() {
	// accounts the controllers never see, as if they had not got to them yet
	account := func(name, uid string) (*payoutv1.PayoutAccount, *Caller) {
		acct := testgen.Account(name, func(a *payoutv1.PayoutAccount) { a.UID = types.UID(uid) })
		return acct, &Caller{Account: acct}
	}

	It("answers 503 and makes no namespace: the facade creates none", func() {
		_, c := account("facade-no-namespace-yet", "4f3c2b1a-0000-4000-8000-000000000001")
		q := testgen.Quote(c.Namespace(), "22222222-0000-4000-8000-000000000001")
		s := openServer(baseCfg, func(s *Server) { s.namespaceWait = time.Second })
		Expect(apierror.CodeOf(s.createOwned(ctx, c, q))).To(Equal(apierror.Unavailable))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: c.Namespace()}, &corev1.Namespace{}))).To(BeTrue())
	})

	It("waits a moment for the namespace its controller makes", func() {
		acct, c := account("facade-namespace-soon", "4f3c2b1a-0000-4000-8000-000000000002")
		q := testgen.Quote(c.Namespace(), "22222222-0000-4000-8000-000000000002")
		done := make(chan error, 1)
		go func() { done <- srv.createOwned(ctx, c, q) }()
		Consistently(done, 200*time.Millisecond).ShouldNot(Receive())
		Expect(tenancy.EnsureNamespace(ctx, env.Client, acct)).To(Succeed()) // as the account controller does
		Eventually(done).Should(Receive(BeNil()))
	})
})
