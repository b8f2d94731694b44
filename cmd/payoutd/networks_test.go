package main

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/chain"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// USDT on Tron and USDC on Solana through the whole service (issue 22 item 14). No node of either
// runs here, so payoutd watches chaintest's Tron and Solana RPC test servers, which answer in the
// nodes' documented JSON-RPC shapes, beside the dev chain (anvil) that refunds are sent on.
var _ = Describe("the networks that are not EVM", Ordered, func() {
	var (
		url      string
		tronNode *chaintest.TronRPCTestServer
		solNode  *chaintest.SolanaRPCTestServer
		platform = chaintest.SolanaAddress("payoutd suite platform")
	)
	BeforeAll(func() {
		for _, n := range []payoutv1.Network{payoutv1.NetworkTron, payoutv1.NetworkSolana} {
			// a cursor of another run of these servers would be ahead of their chains
			err := env.Client.Delete(context.Background(), &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(n)}})
			Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		}
		tronNode = chaintest.NewTronRPCTestServer(GinkgoT(), chaintest.TronMainnetChainID, 30)
		solNode = chaintest.NewSolanaRPCTestServer(GinkgoT(), chaintest.SolanaMainnetGenesis)
		// Both make blocks as their networks do (a Tron block every 3 s, a Solana slot every
		// 400 ms, faster here): a node whose head stands still reads as stuck.
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(250 * time.Millisecond):
					tronNode.Mine(1)
					solNode.Advance(1)
				}
			}
		}()
		DeferCleanup(func() { close(stop) })
		url = startInProcess(env.Config, "--chains-config", withTronAndSolana(tronNode.URL, solNode.URL, platform))
	})

	It("lists usdt on tron and usdc on solana as available while their RPC is configured (CONTRACT.md)", func() {
		acct := newAccount(url)
		Eventually(func() map[string]string {
			_, m := acct.call("GET", "/api/payouts/deposit-options", nil)
			out := map[string]string{}
			opts, _ := m["options"].([]any)
			for _, o := range opts {
				o := o.(map[string]any)
				out[o["token"].(string)+"/"+o["network"].(string)] = o["status"].(string)
			}
			return out
		}).Should(And(HaveKeyWithValue("usdt/tron", "available"), HaveKeyWithValue("usdc/solana", "available")))
	})

	It("completes a v1 USDT transfer on tron sent from the wallet given as its EVM-format body", func() {
		acct := newAccount(url)
		sender := freshAddress()
		id, deposit := tronTransfer(acct, acct.recipient("Tron Payee"), "25.00", sender)
		tx := tronNode.Transfer(chaintest.TronUSDT, sender, tronBody(deposit), 25_000_000)
		Eventually(func() string { s, _ := acct.status(id); return s }).Should(Equal("completed"))

		t := &payoutv1.Transfer{}
		Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: id}, t)).To(Succeed())
		dep := t.Status.Deposit
		Expect(dep.TxHash).To(Equal(strings.ToLower(tx.Hex()[2:])), "a Tron transaction id")
		Expect(dep.From).To(Equal(chain.TronAddress(sender)), "the watcher spells the sender the Tron way")
		Expect(chain.SameSender(dep.From, t.Spec.WalletAddress)).To(BeTrue(), "the declared body and the Tron sender are one key")
	})

	It("refunds a failed tron transfer on Base, to the sender's body: the same key", func() {
		acct := newAccount(url)
		sender := freshAddress()
		id, deposit := tronTransfer(acct, acct.recipient("Simulated Failure"), "23.45", sender)
		tronNode.Transfer(chaintest.TronUSDT, sender, tronBody(deposit), 23_450_000)
		Eventually(func() string { s, _ := acct.status(id); return s }).Should(Equal("failed"))
		before, err := base.BalanceOf(context.Background(), devchain.USDC, sender)
		Expect(err).NotTo(HaveOccurred())

		_, _, err = admin.RequestRefund(context.Background(), env.Client, id, "e2e") // kubectl payout refund
		Expect(err).NotTo(HaveOccurred())
		var got map[string]any
		Eventually(func() string { s, t := acct.status(id); got = t; return s }).WithTimeout(90 * time.Second).Should(Equal("refunded"))
		Expect(got["refund_tx_hash"]).To(MatchRegexp(`^0x[0-9a-f]{64}$`))
		after, err := base.BalanceOf(context.Background(), devchain.USDC, sender)
		Expect(err).NotTo(HaveOccurred())
		Expect(new(big.Int).Sub(after, before)).To(Equal(big.NewInt(23_450_000)), "the deposit went back to the sender's key on Base")
	})

	It("completes a v2 USDC transfer on solana from a Solana wallet when screening is off, and says why not when it is on", func() {
		acct := newAccount(url, func(s *admin.AccountSettings) { s.V2WalletScreening = false })
		wallet := chaintest.SolanaAddress("payoutd suite payer")
		body := transferBody(acct.quote("21.00"), "21.00", acct.recipient("Solana Payee"), false)
		body["source_network"], body["wallet_address"] = "solana", wallet
		created := acct.must(200, "POST", "/api/payouts/transfer/v2", body)
		id := created["transfer_id"].(string)
		Expect(created["deposit_address"]).To(Equal(platform))
		Expect(created["wallet_address"]).To(Equal(wallet))

		processed, _, _ := solNode.Slots()
		sig := solNode.AddTx(chaintest.SolanaTestTx{Slot: processed + 1, Transfers: []chaintest.SolanaTokenTransfer{
			{From: wallet, To: platform, Mint: chaintest.SolanaUSDCMint, Amount: 21_000_000},
		}})
		confirmed := acct.must(200, "POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": id, "tx_hash": sig})
		Expect(confirmed["status"]).To(Equal("pending_match"))
		solNode.Advance(40) // the transaction's slot is finalized
		Eventually(func() string { s, _ := acct.status(id); return s }).Should(Equal("completed"))

		screened := newAccount(url) // v2 wallet screening is on by default
		body = transferBody(screened.quote("21.00"), "21.00", screened.recipient("Solana Payee"), false)
		body["source_network"], body["wallet_address"] = "solana", wallet
		refused := screened.must(400, "POST", "/api/payouts/transfer/v2", body)
		Expect(refused["error"]).To(And(HavePrefix("wallet_address"), ContainSubstring("screens v2 sender wallets"), ContainSubstring("EVM wallets only")))
	})
})

// withTronAndSolana writes payoutd's chain configuration of the suite's dev chain with tron and
// solana added, watched at the given endpoints, and returns its path. Given after the suite's
// --chains-config, it wins: a flag given twice takes its last value.
func withTronAndSolana(tronURL, solanaURL, solanaPlatform string) string {
	GinkgoHelper()
	cfg, err := chainconfig.Load(chainConfig)
	Expect(err).NotTo(HaveOccurred())
	poll := metav1.Duration{Duration: 100 * time.Millisecond}
	cfg.Networks[payoutv1.NetworkTron] = &chainconfig.Network{
		RPC: []string{tronURL}, ChainID: chaintest.TronMainnetChainID, Confirmations: 3, PollInterval: poll,
		Tokens: map[payoutv1.Token]*chainconfig.Token{payoutv1.TokenUSDT: {Contract: chain.TronAddress(chaintest.TronUSDT)}},
	}
	cfg.Networks[payoutv1.NetworkSolana] = &chainconfig.Network{
		RPC: []string{solanaURL}, GenesisHash: chaintest.SolanaMainnetGenesis, PollInterval: poll,
		Tokens: map[payoutv1.Token]*chainconfig.Token{payoutv1.TokenUSDC: {Contract: chaintest.SolanaUSDCMint, PlatformAddress: solanaPlatform}},
	}
	Expect(cfg.Validate()).To(Succeed())
	data, err := cfg.Marshal()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "chains.yaml")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// tronTransfer creates a v1 USDT transfer on tron from sender, declared in EVM format, and
// returns its id and its deposit address, which is Tron's Base58Check.
func tronTransfer(acct *account, recipient int64, amount string, sender common.Address) (id, deposit string) {
	GinkgoHelper()
	body := transferBody(acct.quote(amount), amount, recipient, false)
	body["source_token"], body["source_network"], body["wallet_address"] = "usdt", "tron", sender.Hex()
	tr := acct.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)
	deposit = tr["deposit_address"].(string)
	Expect(chain.IsTronAddress(deposit)).To(BeTrue(), "deposit address %s", deposit)
	return tr["id"].(string), deposit
}

// tronBody is the 20-byte account id of a Base58Check Tron address.
func tronBody(address string) common.Address {
	GinkgoHelper()
	id, err := chain.TronAddressBytes(address)
	Expect(err).NotTo(HaveOccurred())
	return common.Address(id)
}

// freshAddress is the address of a new key: its balances start at zero on every chain.
func freshAddress() common.Address {
	GinkgoHelper()
	k, err := crypto.GenerateKey()
	Expect(err).NotTo(HaveOccurred())
	return crypto.PubkeyToAddress(k.PublicKey)
}
