package main

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/refund"
)

var _ = Describe("an operator's refund", func() {
	It("sends a failed transfer's deposit back on Base once and marks it refunded", func() {
		acct := newAccount(startInProcess(env.Config))
		// The sender of this deposit is a fresh wallet, so the refund's arrival is its balance.
		sender, from := freshWallet(30_000_000)

		rid := acct.recipient("Simulated Failure")
		body := transferBody(acct.quote("23.45"), "23.45", rid, false)
		body["wallet_address"] = from.Hex()
		tr := acct.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)
		id := tr["id"].(string)
		_, err := base.Transfer(context.Background(), sender, devchain.USDC, common.HexToAddress(tr["deposit_address"].(string)), big.NewInt(23_450_000))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { s, _ := acct.status(id); return s }).Should(Equal("failed"))
		before, err := base.BalanceOf(context.Background(), devchain.USDC, from)
		Expect(err).NotTo(HaveOccurred())

		_, _, err = admin.RequestRefund(context.Background(), env.Client, id, "e2e")
		Expect(err).NotTo(HaveOccurred())
		var got map[string]any
		Eventually(func() string { s, t := acct.status(id); got = t; return s }).WithTimeout(90 * time.Second).Should(Equal("refunded"))
		hash, _ := got["refund_tx_hash"].(string)
		Expect(hash).To(MatchRegexp(`^0x[0-9a-f]{64}$`))
		after, err := base.BalanceOf(context.Background(), devchain.USDC, from)
		Expect(err).NotTo(HaveOccurred())
		Expect(new(big.Int).Sub(after, before)).To(Equal(big.NewInt(23_450_000)), "the deposit went back to its sender, once")
		rcpt, err := base.Client.TransactionReceipt(context.Background(), common.HexToHash(hash))
		Expect(err).NotTo(HaveOccurred())
		Expect(rcpt.Status).To(Equal(uint64(1)))

		_, _, err = admin.RequestRefund(context.Background(), env.Client, id, "e2e")
		Expect(errors.Is(err, refund.ErrAlreadyRequested)).To(BeTrue(), "%v", err)
		t := &payoutv1.Transfer{}
		Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: id}, t)).To(Succeed())
		Expect(t.Status.Refund.TxHash).To(Equal(hash))
		time.Sleep(3 * time.Second)
		again, err := base.BalanceOf(context.Background(), devchain.USDC, from)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(after), "no second refund")
	})
})
