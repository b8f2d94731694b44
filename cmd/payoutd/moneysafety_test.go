package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/compliance/siwe"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/kycsite"
	"github.com/stablepay/payout-operator/internal/refund"
)

// The shared v2 address (issue 22, "whose deposit it is"): every v2 deposit of a network goes to
// one platform address, and a confirmed hash is a claim, not a proof. Another account that sees
// a customer's payment on chain, or its hash, must not be paid with it, nor keep the customer
// from confirming it.
var _ = Describe("a v2 hash confirmed by another account", Ordered, func() {
	var url string
	BeforeAll(func() { url = startInProcess(env.Config) })

	// v2 creates a v2 transfer of amount from the suite's funded wallet, and returns its id and
	// the platform address.
	v2 := func(a *account, amount string) (id, platform string) {
		GinkgoHelper()
		m := a.must(200, "POST", "/api/payouts/transfer/v2", transferBody(a.quote(amount), amount, a.recipient("Owner Payee"), false))
		return m["transfer_id"].(string), m["deposit_address"].(string)
	}
	confirm := func(a *account, id string, hash common.Hash) (int, map[string]any) {
		return a.call("POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": id, "tx_hash": hash.Hex()})
	}
	finalStatus := func(a *account, id string) string {
		GinkgoHelper()
		var s string
		Eventually(func() bool { s, _ = a.status(id); return s == "completed" || s == "failed" }).WithTimeout(90 * time.Second).Should(BeTrue())
		return s
	}
	paidFor := func(id string) int {
		n := 0
		for _, e := range bank.Ledger() {
			if e.Reference == id && e.Sent() {
				n++
			}
		}
		return n
	}
	// createdAfter creates a v2 transfer of a for amount once the service has seen hash mined: the
	// transfer's recorded head is at or after the hash's block (a transfer created while the
	// facade's view of the head was older is left unconfirmed, and another one made).
	createdAfter := func(a *account, amount string, hash common.Hash) string {
		GinkgoHelper()
		r, err := base.WaitMined(context.Background(), hash)
		Expect(err).NotTo(HaveOccurred())
		var id string
		Eventually(func() int64 {
			id, _ = v2(a, amount)
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(a.name), Name: id}, t)).To(Succeed())
			return t.Spec.HeadAtCreation
		}).WithPolling(time.Second).Should(BeNumerically(">=", r.BlockNumber.Int64()))
		return id
	}

	It("gets 409 (403 on the owner's transfer) once the owner confirmed; nothing is paid to it", func() {
		owner, other := newAccount(url), newAccount(url)
		id, platform := v2(owner, "21.00")
		hash := deposit(platform, "21.00")
		code, m := confirm(owner, id, hash)
		Expect(code).To(Equal(200), "%v", m)

		squat, _ := v2(other, "21.00")
		code, m = confirm(other, squat, hash)
		Expect(code).To(Equal(409), "another account confirming the owner's hash on its own transfer: %v", m)
		code, m = confirm(other, id, hash)
		Expect(code).To(Equal(403), "another account confirming on the owner's transfer: %v", m)

		Expect(finalStatus(owner, id)).To(Equal("completed"))
		Expect(paidFor(id)).To(Equal(1))
		Expect(paidFor(squat)).To(BeZero())
	})

	It("fails the squatter's transfer for a hash mined before it existed, releases the hash, and the owner's confirmation still succeeds", func() {
		owner, other := newAccount(url), newAccount(url)
		id, platform := v2(owner, "22.00")
		hash := deposit(platform, "22.00")

		// the other account saw the payment on chain: it creates a transfer of the same amount
		// from the same wallet, and confirms the hash first
		squat := createdAfter(other, "22.00", hash)
		code, m := confirm(other, squat, hash)
		Expect(code).To(Equal(200), "%v", m)
		code, m = confirm(owner, id, hash)
		Expect(code).To(Equal(409), "the hash is the squatter's while it is judged: %v", m)

		Expect(finalStatus(other, squat)).To(Equal("failed"))
		_, got := other.status(squat)
		Expect(got["error"]).To(ContainSubstring("before the transfer existed"))
		Expect(paidFor(squat)).To(BeZero(), "nothing is paid to the squatter")

		// released: the owner confirms its own payment and is paid, once
		Eventually(func() int { code, m = confirm(owner, id, hash); return code }).Should(Equal(200), "%v", m)
		Expect(finalStatus(owner, id)).To(Equal("completed"))
		Expect(paidFor(id)).To(Equal(1))
		Expect(paidFor(squat)).To(BeZero())
		// and the squatter's transfer owes nothing: its refund is refused, nothing created
		_, _, err := admin.RequestRefund(context.Background(), env.Client, squat, "e2e")
		Expect(err).To(MatchError(refund.ErrNotRefundable))
	})

	It("never pays a transaction twice, even once its hash claim is gone (an etcd restore, a claim deleted by hand)", func() {
		owner, other := newAccount(url), newAccount(url)
		id, platform := v2(owner, "25.50")
		second, _ := v2(other, "25.50") // made before the payment: its recorded head cannot refuse it
		hash := deposit(platform, "25.50")
		code, m := confirm(owner, id, hash)
		Expect(code).To(Equal(200), "%v", m)
		Expect(finalStatus(owner, id)).To(Equal("completed"))
		Expect(paidFor(id)).To(Equal(1))

		// the hash's claim is lost, as a restore from before the confirmation loses it
		claim := &payoutv1.Claim{}
		key := client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, hash.Hex()))}
		Expect(env.Client.Get(context.Background(), key, claim)).To(Succeed())
		Expect(env.Client.Delete(context.Background(), claim)).To(Succeed())
		Eventually(func() int { code, m = confirm(other, second, hash); return code }).Should(Equal(200), "%v", m)

		Expect(finalStatus(other, second)).To(Equal("failed"))
		_, got := other.status(second)
		Expect(got["error"]).To(ContainSubstring("already pays transfer " + id))
		Expect(paidFor(second)).To(BeZero(), "the transaction pays one transfer")
		Expect(paidFor(id)).To(Equal(1))
		// the provider keeps which deposit paid the payout: the binding can be rebuilt from it
		e, ok := bank.Find(id)
		Expect(ok).To(BeTrue())
		Expect(e.SourceOfFunds).To(Equal("crypto deposit base " + strings.ToLower(hash.Hex()) + ":" + fmt.Sprint(logIndexOf(hash))))
	})

	It("refuses another account's v2 transfer from a wallet bound to an account that binds wallets", func() {
		// a wallet of its own: a binding lasts as long as the owner's account, and the suite's
		// funded wallet sends every other spec's deposits
		key, wallet := freshWallet(50_000_000)
		fromWallet := func(a *account, amount string) map[string]any {
			b := transferBody(a.quote(amount), amount, a.recipient("Owner Payee"), false)
			b["wallet_address"] = wallet.Hex()
			return b
		}
		owner := newAccount(url, func(s *admin.AccountSettings) { s.BindWallets = true })
		other := newAccount(url)
		// issue 28: an account binds only a wallet whose owner proved control for it
		proveWallet(owner, key)
		m := owner.must(200, "POST", "/api/payouts/transfer/v2", fromWallet(owner, "23.00"))
		id := m["transfer_id"].(string)
		tx, err := base.SendTransfer(context.Background(), key, devchain.USDC, common.HexToAddress(m["deposit_address"].(string)), big.NewInt(23_000_000))
		Expect(err).NotTo(HaveOccurred())
		code, m := confirm(owner, id, tx.Hash())
		Expect(code).To(Equal(200), "%v", m)
		Expect(finalStatus(owner, id)).To(Equal("completed"))
		Eventually(func() error {
			return env.Client.Get(context.Background(), client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimWalletBinding,
				payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, wallet.Hex()))}, &payoutv1.Claim{})
		}).Should(Succeed(), "the wallet is bound to the owner's account")

		code, m = other.call("POST", "/api/payouts/transfer/v2", fromWallet(other, "23.00"))
		Expect(code).To(Equal(403), "%v", m)
		Expect(m["error"]).To(ContainSubstring("bound to another account"))
		// the owner itself still sends from it
		owner.must(200, "POST", "/api/payouts/transfer/v2", fromWallet(owner, "24.00"))
	})
})

// proveWallet records that key's owner proved control for acct, as the wallet verification
// site does (internal/kycsite, tested over HTTP there): a Sign-In with Ethereum message naming
// the account, signed by the key, on the account's Wallet record.
func proveWallet(acct *account, key *ecdsa.PrivateKey) {
	GinkgoHelper()
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	now := time.Now().UTC().Truncate(time.Second)
	m := &siwe.Message{Domain: "kyc.payout.localhost", Address: addr, Statement: kycsite.Statement(acct.name),
		URI: "http://kyc.payout.localhost/verify", Version: "1", ChainID: 1, Nonce: "e2e" + strings.Repeat("0", 13),
		IssuedAt: now.Format(time.RFC3339), ExpirationTime: now.Add(time.Minute).Format(time.RFC3339)}
	text := m.String()
	sig, err := crypto.Sign(accounts.TextHash([]byte(text)), key)
	Expect(err).NotTo(HaveOccurred())
	sig[64] += 27
	w := &payoutv1.Wallet{ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.AccountNamespace(acct.name), Name: payoutv1.WalletName(addr)},
		Spec: payoutv1.WalletSpec{Address: payoutv1.NormalizeWallet(addr),
			Proof: &payoutv1.WalletProof{Message: text, Signature: hexutil.Encode(sig), Signer: addr, ProvenAt: metav1.Now()}}}
	Expect(env.Client.Create(context.Background(), w)).To(Succeed())
}

// logIndexOf is the log index of the token transfer in the transaction hash.
func logIndexOf(hash common.Hash) uint {
	GinkgoHelper()
	r, err := base.WaitMined(context.Background(), hash)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Logs).NotTo(BeEmpty())
	return r.Logs[0].Index
}
