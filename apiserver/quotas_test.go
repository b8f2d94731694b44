package apiserver

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// withQuotas sets an account's caps; the other caps keep their defaults.
func withQuotas(q payoutv1.Quotas) func(*payoutv1.PayoutAccount) {
	return func(a *payoutv1.PayoutAccount) { a.Spec.Quotas = q.Limits() }
}

var _ = Describe("account quotas (issue 25 item 6)", func() {
	It("refuses an active recipient past the account's cap with 403 naming the cap, and takes one again once one is deleted", func() {
		acct := newAccount(withQuotas(payoutv1.Quotas{MaxActiveRecipients: 2}))
		first := idOf(acct.create(ibanBody("Quota One")))
		acct.create(sortCodeBody("Quota Two"))
		msg := errorText(acct.c.post("/api/payouts/recipients", ibanBody("Quota Three")), http.StatusForbidden)
		Expect(msg).To(ContainSubstring("2 active recipients"))
		Expect(msg).To(ContainSubstring("quotas.maxActiveRecipients is 2"))
		// an update replaces a recipient: it is not refused at the cap
		r := acct.c.do("PATCH", rpath(first), obj{"accountHolderName": "Quota One Renamed"})
		Expect(r.status).To(Equal(200), "%s", r)
		Expect(acct.c.do("DELETE", rpath(idOf(r.json())), nil).status).To(Equal(200))
		acct.create(ibanBody("Quota Three"))
	})

	It("holds the cap exactly under concurrent creates on one replica", func() {
		acct := newAccount(withQuotas(payoutv1.Quotas{MaxActiveRecipients: 3}))
		c := acct.c.on(openServer(baseCfg, unlimited))
		statuses := race(12, func(int) int { return c.post("/api/payouts/recipients", ibanBody("Racing Holder")).status })
		Expect(count(statuses, 201)).To(Equal(3), "%v", statuses)
		Expect(count(statuses, 403)).To(Equal(9), "%v", statuses)
		list := &payoutv1.RecipientList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(payoutv1.AccountNamespace(acct.name)))).To(Succeed())
		Expect(list.Items).To(HaveLen(3))
	})

	It("refuses an open transfer past its method's cap, counts v1 and v2 apart, and frees a place when a transfer ends", func() {
		p := newPayee(withQuotas(payoutv1.Quotas{MaxOpenV1Transfers: 1, MaxOpenV2Transfers: 1}))
		// kept: once this transfer ends its controller would otherwise delete the recipient (spec
		// 2.1), and the creates below would be refused for that (400), not for the cap
		first := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		first["keep_recipient"] = true
		r := p.c.post("/api/payouts/transfer", first)
		Expect(r.status).To(Equal(200), "%s", r)
		open := r.json()["transfer"].(map[string]any)["id"].(string)
		msg := errorText(p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)), http.StatusForbidden)
		Expect(msg).To(ContainSubstring("1 open v1 transfers"))
		Expect(msg).To(ContainSubstring("quotas.maxOpenV1Transfers is 1"))
		r = p.c.post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "25.00"), "25.00", p.rid))
		Expect(r.status).To(Equal(200), "a v2 transfer has a cap of its own: %s", r)
		Expect(errorText(p.c.post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)), http.StatusForbidden)).
			To(ContainSubstring("quotas.maxOpenV2Transfers is 1"))

		// the v1 transfer ends (failed), as its controller would record it
		t := storedTransfer(p.account, open)
		patch := client.MergeFrom(t.DeepCopy())
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, Message: "expired", At: metav1.Now()}
		Expect(env.Client.Status().Patch(ctx, t, patch)).To(Succeed())
		// one quote serves every try: a refused create does not use it, so polling spends no
		// quote (the key's quote budget is 20 a minute)
		quote := p.quote("EUR", "25.00")
		Eventually(func(g Gomega) {
			r := p.c.post("/api/payouts/transfer", v1Body(quote, "25.00", p.rid))
			g.Expect(r.status).To(Equal(200), "%s", r)
		}).Should(Succeed())
	})

	It("refuses a claim past the account's cap: updates stop once the recipients' ids fill it", func() {
		acct := newAccount(withQuotas(payoutv1.Quotas{MaxOpenV1Transfers: 1, MaxOpenV2Transfers: 1, MaxActiveRecipients: 1, MaxClaims: 3}))
		id := idOf(acct.create(ibanBody("Claim Holder")))
		for range 2 { // each update claims a new id; the old one's claim stays until it is archived
			r := acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Claim Holder Again"})
			Expect(r.status).To(Equal(200), "%s", r)
			id = idOf(r.json())
		}
		msg := errorText(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "One Too Many"}), http.StatusForbidden)
		Expect(msg).To(ContainSubstring("quotas.maxClaims is 3"))
		Expect(acct.c.get(rpath(id)).json()["accountHolderName"]).To(Equal("Claim Holder Again"), "a refused update changes nothing")
	})
})
