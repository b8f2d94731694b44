package apiserver

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

const senderWallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"

func v1Body(quoteID, amount string, recipientID int64) obj {
	return obj{"quote_id": quoteID, "amount": json.Number(amount), "recipientId": recipientID,
		"customer_uuid": uuid.NewString(), "customer_email": "payer@example.com",
		"source_token": "usdc", "source_network": "base", "wallet_address": senderWallet}
}

var _ = Describe("transfer lookup (spec 4.15)", func() {
	It("is global and answers the shape of spec 2.5", func() {
		owner, other := newAccount(), newAccount()
		ns := payoutv1.AccountNamespace(owner.name)
		t := testgen.Transfer(ns, "dddddddddddddddddddddd01")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		var r *response
		Eventually(func() int { r = other.c.get("/api/payouts/transfer/" + t.Name); return r.status }).Should(Equal(200))
		tr := r.json()["transfer"].(map[string]any)
		Expect(tr["id"]).To(Equal(t.Name))
		Expect(tr["reference"]).To(Equal(t.Name))
		Expect(tr["type"]).To(Equal("payout"))
		Expect(tr["amount"]).To(Equal(json.Number("25.00")))
		Expect(tr["currency"]).To(Equal("EUR"))
		Expect(tr["status"]).To(BeElementOf("ready_to_process"))
		Expect(tr["refund_tx_hash"]).To(BeNil())
		Expect(errorText(owner.c.get("/api/payouts/transfer/"+strings.Repeat("e", 24)), 404)).To(Equal("transfer not found"))
	})

	It("masks the personal and bank fields for a key of another account; the owner sees them all (issue 25 item 9)", func() {
		owner, other := newAccount(), newAccount()
		t := testgen.Transfer(payoutv1.AccountNamespace(owner.name), "dddddddddddddddddddddd02", func(t *payoutv1.Transfer) {
			t.Spec.Recipient.Details.Email = "jane.doe@example.com"
			t.Spec.Recipient.Details.Address = &payoutv1.PostalAddress{Country: "DE", City: "Berlin", FirstLine: "Unter den Linden 77", PostCode: "10117"}
		})
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		view := func(a *account) map[string]any {
			GinkgoHelper()
			var r *response
			Eventually(func() int { r = a.c.get("/api/payouts/transfer/" + t.Name); return r.status }).Should(Equal(200))
			return r.json()["transfer"].(map[string]any)
		}
		mine, theirs := view(owner), view(other)

		Expect(mine["customerEmail"]).To(Equal("payer@example.com"))
		Expect(mine["wallet_address"]).To(Equal(t.Spec.WalletAddress))
		rc := mine["recipient"].(map[string]any)
		Expect(rc["accountHolderName"]).To(Equal("Jane Doe"))
		Expect(rc["details"]).To(HaveKeyWithValue("iban", "DE89370400440532013000"))
		Expect(rc["details"]).To(HaveKeyWithValue("email", "jane.doe@example.com"))
		Expect(rc["details"].(map[string]any)["address"]).To(HaveKeyWithValue("firstLine", "Unter den Linden 77"))

		Expect(theirs["customerEmail"]).To(Equal("p***@example.com"))
		Expect(theirs["wallet_address"]).To(Equal("****BA72"))
		rc = theirs["recipient"].(map[string]any)
		Expect(rc["accountHolderName"]).To(Equal("J*** D***"))
		Expect(rc["details"]).To(HaveKeyWithValue("iban", "****3000"))
		Expect(rc["details"]).To(HaveKeyWithValue("email", "j***@example.com"))
		Expect(rc["details"].(map[string]any)["address"]).To(Equal(map[string]any{
			"country": "DE", "city": "B***", "firstLine": "U*** d*** L*** 7***", "postCode": "1***"}))
		// every field is there, of its type; what is not personal reads as the owner's
		Expect(theirs).To(HaveLen(len(mine)))
		for k, v := range mine {
			Expect(theirs).To(HaveKey(k))
			if k != "customerEmail" && k != "wallet_address" && k != "recipient" {
				if v == nil {
					Expect(theirs[k]).To(BeNil(), "field %s", k)
				} else {
					Expect(theirs[k]).To(Equal(v), "field %s", k)
				}
			}
		}
		Expect(rc).To(HaveLen(len(mine["recipient"].(map[string]any))))
		Expect(rc["details"]).To(HaveLen(len(mine["recipient"].(map[string]any)["details"].(map[string]any))))
	})
})

var _ = Describe("v1 transfer rules (spec 4.10), in their order of precedence", func() {
	var (
		acct *account
		rid  int64
		qid  string
	)
	setup := func(mods ...func(*payoutv1.PayoutAccount)) {
		acct = newAccount(mods...)
		body := ibanBody("Payee Holder")
		if acct.model.Spec.KYCRequired {
			// the recipient itself needs a verified wallet on a KYC account
			Expect(env.Client.Create(ctx, testgen.Wallet(payoutv1.AccountNamespace(acct.name), senderWallet))).To(Succeed())
			body["wallet"] = senderWallet
			Eventually(func() int { return acct.c.post("/api/payouts/recipients", body).status }).Should(Equal(201))
			rid = idOf(acct.c.get("/api/payouts/recipients").json()["data"].([]any)[0].(map[string]any))
		} else {
			rid = idOf(acct.create(body))
		}
		qid = acct.c.get(quotePath("EUR", "25.00")).json()["quoteId"].(string)
	}
	post := func(body obj) *response { return acct.c.post("/api/payouts/transfer", body) }

	It("checks the KYC wallet before anything else", func() {
		setup(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true; a.Spec.V1Enabled = false })
		b := v1Body(uuid.NewString(), "25.00", rid)
		b["wallet_address"] = "0x0000000000000000000000000000000000000bad"
		Expect(errorText(post(b), 403)).To(ContainSubstring("KYC"))
		delete(b, "wallet_address")
		Expect(errorText(post(b), 403)).To(ContainSubstring("KYC"))
		// a verified wallet passes rule 1 and meets rule 3
		Expect(errorText(post(v1Body(uuid.NewString(), "25.00", rid)), 403)).To(ContainSubstring("provisioned"))
	})

	It("screens the wallet, then checks provisioning and the smart wallet before the quote", func() {
		setup()
		blocked := "0x000000000000000000000000000000000000dEaD"
		Expect(env.Client.Create(ctx, &payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(blocked)},
			Spec: payoutv1.BlockedWalletSpec{Address: payoutv1.NormalizeWallet(blocked)}})).To(Succeed())
		b := v1Body(qid, "25.00", rid)
		b["wallet_address"] = blocked
		Eventually(func() int { return post(b).status }).Should(Equal(403))

		for _, mod := range []func(*payoutv1.PayoutAccount){
			func(a *payoutv1.PayoutAccount) { a.Spec.V1Enabled = false },
			func(a *payoutv1.PayoutAccount) { a.Spec.SmartWalletDeployed = false },
		} {
			setup(mod)
			Expect(errorText(post(v1Body(uuid.NewString(), "25.00", rid)), 403)).To(Or(ContainSubstring("provisioned"), ContainSubstring("smart-contract")))
		}
	})

	It("refuses another account's recipient with 403 and a deleted one with 400", func() {
		setup()
		other := newAccount()
		foreign := idOf(other.create(ibanBody("Foreign Holder")))
		errorText(post(v1Body(qid, "25.00", foreign)), 403)
		Expect(acct.c.do("DELETE", rpath(rid), nil).status).To(Equal(200))
		Expect(errorText(post(v1Body(qid, "25.00", rid)), 400)).To(ContainSubstring("deleted"))
	})

	It("checks the request's fields, the amount and the quote with 400", func() {
		lo := payoutv1.USDAmount("10")
		setup(func(a *payoutv1.PayoutAccount) { a.Spec.AmountLimits.Min = &lo })
		for field := range v1Body(qid, "25.00", rid) {
			if field == "wallet_address" || field == "recipientId" {
				continue
			}
			b := v1Body(qid, "25.00", rid)
			delete(b, field)
			Expect(errorText(post(b), 400)).To(HavePrefix(field), "without %s", field)
		}
		cases := map[string]obj{
			"amount: must equal the quoted amount":       v1Body(qid, "25.02", rid),
			"amount: must have at most 2 decimal places": v1Body(qid, "25.001", rid),
			"quote_id: no such quote":                    v1Body(uuid.NewString(), "25.00", rid),
			"source_token":                               func() obj { b := v1Body(qid, "25.00", rid); b["source_token"] = "dai"; return b }(),
			"wallet_address": func() obj {
				b := v1Body(qid, "25.00", rid)
				b["wallet_address"] = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
				return b
			}(),
			"customer_uuid":  func() obj { b := v1Body(qid, "25.00", rid); b["customer_uuid"] = "not-a-uuid"; return b }(),
			"customer_email": func() obj { b := v1Body(qid, "25.00", rid); b["customer_email"] = "nobody"; return b }(),
		}
		for want, body := range cases {
			Expect(errorText(post(body), 400)).To(HavePrefix(want))
		}
		q9 := acct.c.get(quotePath("EUR", "10.00")).json()["quoteId"].(string)
		Expect(errorText(post(v1Body(q9, "9.99", rid)), 400)).To(ContainSubstring("below this account's minimum amount of 10"))
	})

	It("refuses a used, an expired or another currency's quote", func() {
		setup()
		// a quote is used when the transfer named after it exists
		used := testgen.Transfer(payoutv1.AccountNamespace(acct.name), payoutv1.TransferNameForQuote(qid))
		Expect(env.Client.Create(ctx, used)).To(Succeed())
		Eventually(func() error { return srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(used), &payoutv1.Transfer{}) }).Should(Succeed())
		Expect(errorText(post(v1Body(qid, "25.00", rid)), 400)).To(ContainSubstring("already used"))

		gbp := acct.c.get(quotePath("GBP", "25.00")).json()["quoteId"].(string)
		Expect(errorText(post(v1Body(gbp, "25.00", rid)), 400)).To(ContainSubstring("GBP"))
	})
})
