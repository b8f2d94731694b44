package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testgen"
)

// A payee for transfer tests: an account, one IBAN recipient and a fresh EUR quote per call.
type payee struct {
	*account
	rid int64
}

func newPayee(mods ...func(*payoutv1.PayoutAccount)) *payee {
	GinkgoHelper()
	acct := newAccount(mods...)
	waitDepositOption("usdc-base")
	body := ibanBody("Transfer Payee")
	if acct.model.Spec.KYCRequired {
		// the recipient itself needs a verified wallet on a KYC account
		Expect(env.Client.Create(ctx, testgen.Wallet(payoutv1.AccountNamespace(acct.name), senderWallet))).To(Succeed())
		body["wallet"] = senderWallet
		var r *response
		Eventually(func() int { r = acct.c.post("/api/payouts/recipients", body); return r.status }).Should(Equal(201))
		return &payee{account: acct, rid: idOf(r.json())}
	}
	return &payee{account: acct, rid: idOf(acct.create(body))}
}

func (p *payee) quote(currency, amount string, extra ...string) string {
	GinkgoHelper()
	q := quotePath(currency, amount)
	for i := 0; i+1 < len(extra); i += 2 {
		q += "&" + extra[i] + "=" + extra[i+1]
	}
	r := p.c.get(q)
	Expect(r.status).To(Equal(200), "%s", r)
	return r.json()["quoteId"].(string)
}

func waitDepositOption(name string) {
	GinkgoHelper()
	Eventually(func() bool {
		o := &payoutv1.DepositOption{}
		return srv.cfg.Client.Get(ctx, client.ObjectKey{Name: name}, o) == nil && o.Spec.Enabled && o.Status.Available
	}).Should(BeTrue())
}

func storedTransfer(acct *account, id string) *payoutv1.Transfer {
	GinkgoHelper()
	t := &payoutv1.Transfer{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: id}, t)).To(Succeed())
	return t
}

var _ = Describe("v1 transfer creation (spec 4.10)", func() {
	It("creates a transfer ready_to_process with its own deposit address and the snapshots of 2.5", func() {
		p := newPayee()
		qid := p.quote("EUR", "25.00")
		b := v1Body(qid, "25.00", p.rid)
		r := p.c.post("/api/payouts/transfer", b)
		Expect(r.status).To(Equal(200), "%s", r)
		tr := r.json()["transfer"].(map[string]any)
		id := tr["id"].(string)
		Expect(id).To(HaveLen(24))
		Expect(tr["reference"]).To(Equal(id))
		Expect(tr["user_id"]).To(Equal(p.name))
		Expect(tr["status"]).To(Equal("ready_to_process"))
		Expect(tr["amount"]).To(Equal(json.Number("25.00")))
		Expect(tr["customerUuid"]).To(Equal(b["customer_uuid"]))
		Expect(tr["sourceToken"]).To(Equal("usdc"))
		Expect(tr["sourceNetwork"]).To(Equal("base"))
		Expect(tr["wallet_address"]).To(Equal(senderWallet))
		Expect(tr["deposit_address"]).To(MatchRegexp(`^0x[0-9a-fA-F]{40}$`))
		Expect(tr["error"]).To(BeNil())
		Expect(tr["quote"].(map[string]any)["targetCurrency"]).To(Equal("EUR"))
		Expect(tr["recipient"].(map[string]any)["id"]).To(Equal(json.Number(strconv.FormatInt(p.rid, 10))))

		t := storedTransfer(p.account, id)
		Expect(t.Spec.QuoteID).To(Equal(qid))
		Expect(t.Name).To(Equal(payoutv1.TransferNameForQuote(qid)), "the quote's single use is the transfer's name")
		Expect(t.Labels).To(HaveKeyWithValue(payoutv1.RecipientLineageLabel, strconv.FormatInt(p.rid, 10)))
		Expect(t.Spec.ExpiresAt).NotTo(BeNil())
		Expect(t.Spec.DepositPath).NotTo(BeEmpty())

		// a second use of the quote is refused, and another quote gets another address
		Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(qid, "25.00", p.rid)), 400)).To(ContainSubstring("already used"))
		r2 := p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "25.00"), "25.00", p.rid))
		Expect(r2.status).To(Equal(200), "%s", r2)
		Expect(r2.json()["transfer"].(map[string]any)["deposit_address"]).NotTo(Equal(tr["deposit_address"]))

		// the lookup answers the same transfer
		got := p.c.get("/api/payouts/transfer/" + id).json()["transfer"].(map[string]any)
		Expect(got["deposit_address"]).To(Equal(tr["deposit_address"]))
	})

	It("creates a transfer whose recipient is deleted between its check and its create; the transfer controller fails it RecipientDeleted and pays nothing", func() {
		// The deletion is dated by the facade's clock, which other specs move ahead, and the
		// controller waits out its grace on the wall clock: the two agree here.
		fakeNow.SetTime(time.Now())
		p := newPayee()
		var deleted []byte
		racing := deletingAround(p, true, &deleted)
		qid := p.quote("EUR", "25.00")
		b := v1Body(qid, "25.00", p.rid)
		r := p.c.on(racing).post("/api/payouts/transfer", b)
		// the deletion listed the recipient's transfers before this one existed: it stopped none
		Expect(deleted).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":0}`, p.rid)))
		Expect(r.status).To(Equal(200), "the facade does not read the recipient again: %s", r)
		id := r.json()["transfer"].(map[string]any)["id"].(string)
		t := storedTransfer(p.account, id)
		Expect(t.Spec.Cancellation).To(BeNil(), "nobody cancelled it: the controller is the only check")

		// the customer pays anyway, while the deletion's grace runs
		hash := randomHash()
		Expect(env.Client.Create(ctx, &payoutv1.Deposit{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, hash, 1),
				Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
			Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Contract: "0x00000000000000000000000000000000000000c1", To: t.Spec.DepositAddress, From: t.Spec.WalletAddress,
				Amount: "25000000", TxHash: hash, LogIndex: 1, BlockNumber: 100, BlockHash: randomHash(), BlockTime: metav1.Now(), Confirmations: 3},
		})).To(Succeed())
		got := &payoutv1.Transfer{}
		Eventually(func() *payoutv1.TransferFailure {
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
			return got.Status.Failure
		}).WithTimeout(transfer.RecipientDeletionGrace + 15*time.Second).ShouldNot(BeNil())
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
		Expect(got.Status.Deposit).NotTo(BeNil(), "the deposit is recorded, to be refunded")
		Expect(got.Status.Payout).To(BeNil(), "nothing is paid to a deleted recipient")
		// the facade answers from its informer's store, which sees the status a moment after the API server
		Eventually(func() any {
			return p.c.get("/api/payouts/transfer/" + id).json()["transfer"].(map[string]any)["status"]
		}).Should(Equal("failed"))
	})

	It("answers with a transfer that the recipient's deletion already stopped, as it exists (issue 22 item 13)", func() {
		p := newPayee()
		var deleted []byte
		racing := deletingAround(p, false, &deleted)
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		r := p.c.on(racing).post("/api/payouts/transfer", b)
		// the deletion listed the recipient's transfers after this one existed: it stopped it
		Expect(deleted).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":1}`, p.rid)))
		Expect(r.status).To(Equal(200), "the transfer exists and was counted in transfers_failed: %s", r)
		id := r.json()["transfer"].(map[string]any)["id"].(string)
		t := storedTransfer(p.account, id)
		Expect(t.Spec.Cancellation).NotTo(BeNil())
		Expect(t.Spec.Cancellation.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
		Eventually(func() string {
			return p.c.get("/api/payouts/transfer/" + id).json()["transfer"].(map[string]any)["status"].(string)
		}).Should(Equal("failed"))
		b2 := v1Body(p.quote("EUR", "25.00"), "25.00", idOf(p.create(ibanBody("Second Payee"))))
		b2["customer_uuid"] = b["customer_uuid"]
		Expect(errorText(p.c.post("/api/payouts/transfer", b2), 409)).To(ContainSubstring("already used"))
	})

	It("gives back the customer_uuid of a create the API server refused, with no right to delete a claim (issue 25 item 13)", func() {
		p := newPayee()
		cfg := baseCfg
		cfg.Client = noClaimDeletes{Client: baseCfg.Client}
		facade := openServer(cfg)
		refusing := &refusedTransferCreate{Client: cfg.Client}
		cfg.Client = refusing
		refused := openServer(cfg)
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		Expect(p.c.on(refused).post("/api/payouts/transfer", b).status).To(Equal(500), "the API server refused the create")
		Expect(refusing.claimed).To(BeTrue(), "the customer_uuid was claimed before the create")
		// the claim controller releases it once it read that no transfer carries it
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, b["customer_uuid"].(string))), &payoutv1.Claim{}))
		}).Should(BeTrue(), "the customer_uuid is released")
		b2 := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		b2["customer_uuid"] = b["customer_uuid"]
		Expect(p.c.on(facade).post("/api/payouts/transfer", b2).status).To(Equal(200))
	})

	It("keeps the customer_uuid of a create whose answer was lost after the transfer was stored (issue 22 item 10)", func() {
		p := newPayee()
		cfg := baseCfg
		cfg.Client = lostCreateAnswer{Client: baseCfg.Client, store: true}
		lossy := openServer(cfg)
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		r := p.c.on(lossy).post("/api/payouts/transfer", b)
		Expect(r.status).To(Equal(200), "the transfer is stored, so it is answered: %s", r)
		id := r.json()["transfer"].(map[string]any)["id"].(string)
		Expect(storedTransfer(p.account, id).Spec.CustomerUUID).To(Equal(b["customer_uuid"]))

		b2 := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		b2["customer_uuid"] = b["customer_uuid"]
		Expect(errorText(p.c.post("/api/payouts/transfer", b2), 409)).To(ContainSubstring("already used"))
		Expect(transfersOf(p.account)).To(HaveLen(1), "one customer_uuid, one transfer")
	})

	It("holds the customer_uuid of a create whose outcome is unknown (issue 22 item 10)", func() {
		p := newPayee()
		cfg := baseCfg
		cfg.Client = lostCreateAnswer{Client: baseCfg.Client}
		lossy := openServer(cfg)
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		Expect(errorText(p.c.on(lossy).post("/api/payouts/transfer", b), 500)).To(Equal("internal error"))
		// The API server might still carry the create out: the claim stays until the claim
		// controller's grace is over and no transfer appeared.
		Expect(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, b["customer_uuid"].(string))), &payoutv1.Claim{})).To(Succeed())
		b2 := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		b2["customer_uuid"] = b["customer_uuid"]
		Expect(errorText(p.c.post("/api/payouts/transfer", b2), 409)).To(ContainSubstring("already used"))
		Expect(transfersOf(p.account)).To(BeEmpty())
	})

	It("refuses an amount a cent under a quote when that cent leaves nothing to pay out (issue 22 item 9)", func() {
		p := newPayee()
		// 0.27 USD: fees 0.25 (0.35% FX, 0.25 payout), 0.02 × 0.88022588 pays 0.01 EUR; 0.26 pays 0
		Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "0.27"), "0.26", p.rid)), 400)).
			To(Equal("amount: 0.26 USD leaves nothing to pay out in EUR after the quoted fees; send the quoted amount 0.27"))
		r := p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "0.27"), "0.27", p.rid))
		Expect(r.status).To(Equal(200), "%s", r)
	})

	It("gives one of 20 concurrent creates with one customer_uuid a 200 and the others 409", func() {
		p := newPayee()
		cu := uuid.NewString()
		bodies := make([]obj, 20)
		for i := range bodies {
			bodies[i] = v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)
			bodies[i]["customer_uuid"] = cu
		}
		statuses := race(len(bodies), func(i int) int { return p.c.post("/api/payouts/transfer", bodies[i]).status })
		Expect(count(statuses, 200)).To(Equal(1), "%v", statuses)
		Expect(count(statuses, 409)).To(Equal(19), "%v", statuses)
		Expect(transfersOf(p.account)).To(HaveLen(1), "the losers leave no transfer behind")
	})

	It("gives one of 20 concurrent creates on one quote a 200 and the others 400", func() {
		p := newPayee()
		qid := p.quote("EUR", "20.00")
		statuses := race(20, func(int) int { return p.c.post("/api/payouts/transfer", v1Body(qid, "20.00", p.rid)).status })
		Expect(count(statuses, 200)).To(Equal(1), "%v", statuses)
		Expect(count(statuses, 400)).To(Equal(19), "%v", statuses)
		Expect(transfersOf(p.account)).To(HaveLen(1))
		// and no customer_uuid of a loser stays claimed, once the claim controller released them
		Eventually(func(g Gomega) int {
			claims := &payoutv1.ClaimList{}
			g.Expect(env.Client.List(ctx, claims)).To(Succeed())
			held := 0
			for _, c := range claims.Items {
				if c.Spec.Kind == payoutv1.ClaimCustomerUUID && c.Spec.Holder.Namespace == payoutv1.AccountNamespace(p.name) {
					held++
				}
			}
			return held
		}).Should(Equal(1))
	})

	It("judges the KYC wallet before a malformed, mistyped or unknown field (issue 18 item 5)", func() {
		p := newPayee(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true })
		for name, mutate := range map[string]func(obj){
			"malformed wallet": func(b obj) { b["wallet_address"] = "0xnot-a-wallet" },
			"mistyped amount":  func(b obj) { b["amount"] = "25.00"; b["wallet_address"] = "0x0000000000000000000000000000000000000bad" },
			"unknown field":    func(b obj) { b["colour"] = "blue"; b["wallet_address"] = "0x0000000000000000000000000000000000000bad" },
			"mistyped wallet":  func(b obj) { b["wallet_address"] = 42 },
			"missing wallet":   func(b obj) { delete(b, "wallet_address") },
			"bad source_token": func(b obj) {
				b["source_token"] = "dai"
				b["wallet_address"] = "0x0000000000000000000000000000000000000bad"
			},
		} {
			b := v1Body(uuid.NewString(), "25.00", p.rid)
			mutate(b)
			Expect(errorText(p.c.post("/api/payouts/transfer", b), 403)).To(ContainSubstring("KYC"), name)
		}
		v2 := newPayee(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true; a.Spec.V2WalletScreening = false })
		b := v1Body(uuid.NewString(), "25.00", v2.rid)
		b["colour"] = "blue"
		b["wallet_address"] = "0x0000000000000000000000000000000000000bad"
		Expect(errorText(v2.c.post("/api/payouts/transfer/v2", b), 403)).To(ContainSubstring("KYC"))
	})

	It("answers an unknown recipientId with 404 (issue 18 item 6)", func() {
		p := newPayee()
		for _, id := range []int64{1, 999999999999999} {
			Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "20.00"), "20.00", id)), 404)).To(ContainSubstring("not found"))
		}
	})

	It("refuses a quote that delivers nothing, with 400 naming amount (issue 18 item 1)", func() {
		p := newPayee()
		usd := idOf(p.create(obj{"currency": "USD", "type": "aba", "accountHolderName": "Dollar Payee",
			"details": obj{"legalType": "PRIVATE", "abartn": "026009593", "accountNumber": "12345678", "accountType": "CHECKING",
				"address": obj{"country": "US", "city": "New York", "firstLine": "1 Main Street", "postCode": "10001", "state": "NY"}}}))
		qid := p.quote("USD", "0.01")
		Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(qid, "0.01", usd)), 400)).To(HavePrefix("amount"))
	})

	It("refuses a quote priced for another recipient type (issue 18 item 2)", func() {
		p := newPayee()
		email := idOf(p.create(obj{"currency": "EUR", "type": "email_recipient", "accountHolderName": "Mail Payee",
			"details": obj{"email": "payee@example.com"}}))
		forEmail := p.quote("EUR", "20.00", "recipientType", "email_recipient")
		Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(forEmail, "20.00", p.rid)), 400)).To(HavePrefix("quote_id"))
		plain := p.quote("EUR", "20.00")
		Expect(errorText(p.c.post("/api/payouts/transfer", v1Body(plain, "20.00", email)), 400)).To(HavePrefix("quote_id"))
		Expect(p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "20.00", "recipientType", "email_recipient"), "20.00", email)).status).To(Equal(200))
	})

	It("refuses a wallet that is not an address of source_network (issue 18 item 3)", func() {
		p := newPayee()
		for network, wallet := range map[string]string{"solana": senderWallet, "tron": "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"} {
			b := v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)
			b["source_token"], b["source_network"], b["wallet_address"] = "usdt", network, wallet
			Expect(errorText(p.c.post("/api/payouts/transfer", b), 400)).To(HavePrefix("wallet_address"), network)
		}
		off := newPayee(func(a *payoutv1.PayoutAccount) { a.Spec.V2WalletScreening = false })
		b := v1Body(off.quote("EUR", "20.00"), "20.00", off.rid)
		b["wallet_address"] = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
		Expect(errorText(off.c.post("/api/payouts/transfer/v2", b), 400)).To(HavePrefix("wallet_address"))
	})
})

var _ = Describe("the networks of spec 2.3 that are not EVM (issue 22 item 14)", func() {
	It("takes a v1 tron sender in EVM format, its 20-byte body, and names that form for a Base58Check one", func() {
		p := newPayee()
		c := p.c.on(allNetworksServer())
		body := func(wallet string) obj {
			b := v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)
			b["source_token"], b["source_network"], b["wallet_address"] = "usdt", "tron", wallet
			return b
		}
		r := c.post("/api/payouts/transfer", body(senderWallet))
		Expect(r.status).To(Equal(200), "%s", r)
		tr := r.json()["transfer"].(map[string]any)
		deposit := tr["deposit_address"].(string)
		Expect(chain.IsTronAddress(deposit)).To(BeTrue(), "a Base58Check deposit address, not %s", deposit)
		Expect(tr["wallet_address"]).To(Equal(senderWallet))
		Expect(tr).To(And(HaveKeyWithValue("sourceToken", "usdt"), HaveKeyWithValue("sourceNetwork", "tron")))
		t := storedTransfer(p.account, tr["id"].(string))
		Expect(t.Spec.DepositAddress).To(Equal(deposit))
		Expect(t.Spec.DepositPath).NotTo(BeEmpty(), "the sweeper derives the deposit key from the path")

		body58 := strings.ToLower(senderWallet)
		tron58, err := chain.TronAddressFromHex(body58)
		Expect(err).NotTo(HaveOccurred())
		for _, spelled := range []string{tron58, "41" + body58[2:]} {
			msg := errorText(c.post("/api/payouts/transfer", body(spelled)), 400)
			Expect(msg).To(HavePrefix("wallet_address"), spelled)
			Expect(msg).To(ContainSubstring("give this Tron sender as "+body58), "the message names the EVM-format body of %s", spelled)
		}
	})

	It("refuses solana on an account that screens v2 wallets, saying why (spec 4.11)", func() {
		screened := newPayee() // v2 wallet screening is on by default
		b := v1Body(screened.quote("EUR", "20.00"), "20.00", screened.rid)
		b["source_network"], b["wallet_address"] = "solana", "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
		msg := errorText(screened.c.post("/api/payouts/transfer/v2", b), 400)
		Expect(msg).To(HavePrefix("wallet_address"))
		Expect(msg).To(And(ContainSubstring("Solana address"), ContainSubstring("screens v2 sender wallets"), ContainSubstring("EVM wallets only")))

		b["wallet_address"] = senderWallet // screened, and cannot send on solana
		msg = errorText(screened.c.post("/api/payouts/transfer/v2", b), 400)
		Expect(msg).To(HavePrefix("source_network"))
		Expect(msg).To(And(ContainSubstring("screens v2 sender wallets"), ContainSubstring("an EVM wallet cannot send on solana")))

		blocked := "0x00000000000000000000000000000000000b10c2"
		Expect(env.Client.Create(ctx, &payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(blocked)},
			Spec: payoutv1.BlockedWalletSpec{Address: blocked}})).To(Succeed())
		b["wallet_address"] = blocked
		Eventually(func() int { return screened.c.post("/api/payouts/transfer/v2", b).status }).Should(Equal(403),
			"screening comes before any other processing")
	})
})

var _ = Describe("v2 transfer creation and confirmation (spec 4.11, 4.12)", func() {
	It("creates a v2 transfer on the fixed address with its instructions", func() {
		p := newPayee()
		b := v1Body(p.quote("EUR", "21.00"), "21.00", p.rid)
		delete(b, "customer_email")
		r := p.c.post("/api/payouts/transfer/v2", b)
		Expect(r.status).To(Equal(200), "%s", r)
		m := r.json()
		id := m["transfer_id"].(string)
		addr, ok := srv.cfg.Deposits.V2Address(payoutv1.NetworkBase, payoutv1.TokenUSDC)
		Expect(ok).To(BeTrue())
		Expect(m["deposit_address"]).To(Equal(addr))
		in := m["instructions"].(map[string]any)
		Expect(in["send_amount"]).To(Equal(json.Number("21.00")))
		Expect(in["send_token"]).To(Equal("usdc"))
		Expect(in["send_network"]).To(Equal("base"))
		Expect(in["deposit_address"]).To(Equal(addr))
		Expect(in["note"]).To(ContainSubstring(id))
		t := storedTransfer(p.account, id)
		Expect(t.Spec.CustomerEmail).To(Equal(p.model.Spec.Email), "v2 mails the account's address when customer_email is omitted")
		Expect(t.Spec.ExpiresAt).To(BeNil(), "v2 transfers do not expire")
		Expect(p.c.get("/api/payouts/transfer/" + id).json()["transfer"].(map[string]any)["status"]).To(Equal("ready_to_process"))

		for field, value := range map[string]string{"source_token": "usdt", "source_network": "tron"} {
			b := v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)
			b[field] = value
			Expect(errorText(p.c.post("/api/payouts/transfer/v2", b), 400)).To(HavePrefix(field))
		}
	})

	It("follows the rules of confirm-transfer", func() {
		p := newPayee()
		create := func() string {
			r := p.c.post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid))
			Expect(r.status).To(Equal(200), "%s", r)
			return r.json()["transfer_id"].(string)
		}
		confirm := func(id, hash string) *response {
			return p.c.post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": id, "tx_hash": hash})
		}
		t1, t2 := create(), create()
		hash := "0x" + strings.Repeat("1a", 32)
		r := confirm(t1, hash)
		Expect(r.status).To(Equal(200), "%s", r)
		Expect(r.json()).To(And(HaveKeyWithValue("transfer_id", t1), HaveKeyWithValue("status", "pending_match"), HaveKey("message")))
		Expect(storedTransfer(p.account, t1).Spec.TxHash).To(Equal(hash))

		Expect(confirm(t1, "0x"+strings.ToUpper(hash[2:])).status).To(Equal(200), "rule 2: the same hash again, any case")
		Expect(errorText(confirm(t1, "0x"+strings.Repeat("2b", 32)), 409)).To(ContainSubstring("another transaction hash"), "rule 3")
		Expect(errorText(confirm(t2, hash), 409)).To(ContainSubstring("already linked"), "rule 1")

		other := newPayee()
		Expect(errorText(other.c.post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": t2, "tx_hash": "0x" + strings.Repeat("3c", 32)}), 403)).To(ContainSubstring("another account"))
		Expect(errorText(confirm(strings.Repeat("0", 24), "0x"+strings.Repeat("3c", 32)), 404)).To(ContainSubstring("not found"))
		Expect(errorText(confirm(t2, "0x1234"), 400)).To(HavePrefix("tx_hash"))
		Expect(errorText(confirm(t2, "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi6kYgKLgWkuzjmF7BvbP9fBm8hRsZqU4A4sr4XUvT6PTgn"), 400)).To(HavePrefix("tx_hash"), "a Solana signature on base")

		v1 := p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)).json()["transfer"].(map[string]any)["id"].(string)
		Expect(errorText(confirm(v1, "0x"+strings.Repeat("4d", 32)), 400)).To(HavePrefix("transfer_id"))
	})

	It("answers 503 and records nothing when the deposits' hashes cannot be read (issue 22 item 11)", func() {
		p := newPayee()
		r := p.c.post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid))
		Expect(r.status).To(Equal(200), "%s", r)
		id := r.json()["transfer_id"].(string)
		cfg := baseCfg
		cfg.Client = failingDepositLists{Client: baseCfg.Client}
		blind := openServer(cfg)
		confirm := obj{"transfer_id": id, "tx_hash": "0x" + strings.Repeat("6f", 32)}
		r = p.c.on(blind).post("/api/payouts/transfer/v2/confirm-transfer", confirm)
		Expect(errorText(r, 503)).To(ContainSubstring("retry shortly"))
		Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())
		Expect(storedTransfer(p.account, id).Spec.TxHash).To(BeEmpty(), "rule 1 could not be checked: nothing is recorded")
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimTxHash, confirm["tx_hash"].(string))), &payoutv1.Claim{}))).To(BeTrue())
		Expect(p.c.post("/api/payouts/transfer/v2/confirm-transfer", confirm).status).To(Equal(200), "a facade that can read them records it")
	})

	It("confirms one hash on two transfers at once for one of them only", func() {
		p := newPayee()
		hash := "0x" + strings.Repeat("5e", 32)
		for round := range 3 {
			h := hash[:len(hash)-1] + strconv.Itoa(round)
			fresh := make([]string, 2)
			for i := range fresh {
				fresh[i] = p.c.post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid)).json()["transfer_id"].(string)
			}
			statuses := race(2, func(i int) int {
				return p.c.post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": fresh[i], "tx_hash": h}).status
			})
			Expect(statuses).To(ConsistOf(200, 409), "round %d", round)
			set := 0
			for _, id := range fresh {
				if storedTransfer(p.account, id).Spec.TxHash == h {
					set++
				}
			}
			Expect(set).To(Equal(1))
		}
	})
})

var _ = Describe("DELETE recipient during transfers (spec 4.8, issue 18 item 4)", func() {
	It("counts the transfers of every id of the recipient, once", func() {
		p := newPayee()
		tr := func() string {
			r := p.c.post("/api/payouts/transfer", v1Body(p.quote("EUR", "20.00"), "20.00", p.rid))
			Expect(r.status).To(Equal(200), "%s", r)
			return r.json()["transfer"].(map[string]any)["id"].(string)
		}
		old := p.rid
		first := tr()
		// an update gives the recipient a new id; transfers made with the old one are its too
		r := p.c.do("PATCH", rpath(old), obj{"accountHolderName": "Transfer Payee Renamed"})
		Expect(r.status).To(Equal(200), "%s", r)
		p.rid = idOf(r.json())
		Expect(p.rid).NotTo(Equal(old))
		second := tr()

		del := p.c.do("DELETE", rpath(p.rid), nil)
		Expect(del.body).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":2}`, p.rid)))
		for _, id := range []string{first, second} {
			Eventually(func() string {
				return p.c.get("/api/payouts/transfer/" + id).json()["transfer"].(map[string]any)["status"].(string)
			}).Should(Equal("failed"))
		}
		Expect(p.c.do("DELETE", rpath(old), nil).body).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":0}`, old)))
		Expect(p.c.do("DELETE", rpath(p.rid), nil).body).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":0}`, p.rid)))
	})
})

// race runs fn n times at once and returns the results.
func race(n int, fn func(i int) int) []int {
	out := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			<-start
			out[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func count(xs []int, v int) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}

func transfersOf(acct *account) []payoutv1.Transfer {
	GinkgoHelper()
	list := &payoutv1.TransferList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(payoutv1.AccountNamespace(acct.name)))).To(Succeed())
	return list.Items
}

// aroundTransferCreate runs before and after the facade's create of a transfer (either may be
// nil): a recipient's deletion racing with the create, on either side of it.
type aroundTransferCreate struct {
	client.Client
	before, after func()
}

func (c aroundTransferCreate) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	_, isTransfer := obj.(*payoutv1.Transfer)
	if isTransfer && c.before != nil {
		c.before()
	}
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	if isTransfer && c.after != nil {
		c.after()
	}
	return nil
}

// deletingAround opens a facade on which p's recipient is deleted through the API just before
// the create of a transfer (before) or just after it; the deletion's answer is kept in deleted.
func deletingAround(p *payee, before bool, deleted *[]byte) *Server {
	GinkgoHelper()
	del := func() {
		defer GinkgoRecover() // in the facade's handler, not the spec's goroutine
		*deleted = p.c.do("DELETE", rpath(p.rid), nil).body
	}
	around := aroundTransferCreate{Client: baseCfg.Client}
	if before {
		around.before = del
	} else {
		around.after = del
	}
	cfg := baseCfg
	cfg.Client = around
	return openServer(cfg)
}

// lostCreateAnswer answers every create of a transfer or a recipient with the API server's
// timeout, after carrying it out when store is set (etcd committed, the answer was lost) and
// without when not (the outcome unknown to the caller).
type lostCreateAnswer struct {
	client.Client
	store bool
}

func (c lostCreateAnswer) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	switch obj.(type) {
	case *payoutv1.Transfer, *payoutv1.Recipient:
	default:
		return c.Client.Create(ctx, obj, opts...)
	}
	if c.store {
		if err := c.Client.Create(ctx, obj.DeepCopyObject().(client.Object), opts...); err != nil {
			return err
		}
	}
	return apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
}

// noClaimDeletes refuses every deletion of a claim, as the facade's role does.
type noClaimDeletes struct {
	client.Client
}

func (c noClaimDeletes) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if _, ok := obj.(*payoutv1.Claim); ok {
		return apierrors.NewForbidden(payoutv1.GroupVersion.WithResource("claims").GroupResource(), obj.GetName(), errors.New("the facade may not delete claims"))
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// refusedTransferCreate answers every create of a transfer with the API server's refusal (a 400
// that stored nothing), after it read the transfer's customer_uuid claimed (past the cache).
type refusedTransferCreate struct {
	client.Client
	claimed bool
}

func (c *refusedTransferCreate) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	t, ok := obj.(*payoutv1.Transfer)
	if !ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	c.claimed = env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, t.Spec.CustomerUUID)), &payoutv1.Claim{}) == nil
	return apierrors.NewBadRequest("refused by the test")
}

// failingDepositLists fails every list of deposits, as a cache that cannot answer would.
type failingDepositLists struct {
	client.Client
}

func (c failingDepositLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*payoutv1.DepositList); ok {
		return errors.New("the deposit informer is not synced")
	}
	return c.Client.List(ctx, list, opts...)
}
