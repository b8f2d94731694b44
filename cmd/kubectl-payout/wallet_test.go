package main_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

const (
	checksummed = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	lowerCase   = "0x8ba1f109551bd432803012645ac136ddd64dba72"
	solana      = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
)

func walletsOf(account string) []payoutv1.Wallet {
	GinkgoHelper()
	list := &payoutv1.WalletList{}
	Expect(k8s.List(ctx, list, client.InNamespace(payoutv1.AccountNamespace(account)))).To(Succeed())
	return list.Items
}

func getBlocked(address string) *payoutv1.BlockedWallet {
	GinkgoHelper()
	b := &payoutv1.BlockedWallet{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: payoutv1.WalletName(address)}, b)).To(Succeed())
	return b
}

var _ = Describe("wallet verify", func() {
	It("stores one verified record per account for every spelling of an EVM address", func() {
		acme, other := newAccount("verify"), newAccount("verify")

		Expect(succeeds("wallet", "verify", checksummed, "--account", acme)).
			To(Equal("Verified wallet " + lowerCase + ` for account "` + acme + `"` + "\n"))
		wallets := walletsOf(acme)
		Expect(wallets).To(HaveLen(1))
		w := wallets[0]
		Expect(w.Name).To(Equal(payoutv1.WalletName(checksummed)))
		Expect(w.Spec).To(Equal(payoutv1.WalletSpec{Address: lowerCase, KYCVerified: true, VerifiedBy: "kubectl-payout"}))
		Expect(walletsOf(other)).To(BeEmpty(), "verification is per account")

		succeeds("wallet", "verify", lowerCase, "--account", acme)
		again := walletsOf(acme)
		Expect(again).To(HaveLen(1))
		Expect(again[0].ResourceVersion).To(Equal(w.ResourceVersion), "verifying a verified wallet changes nothing")

		succeeds("wallet", "verify", lowerCase, "--account", other)
		Expect(walletsOf(other)).To(ConsistOf(HaveField("Spec.KYCVerified", true)))
	})

	It("keeps the letter case of a Solana address", func() {
		acme := newAccount("verify")
		succeeds("wallet", "verify", solana, "--account", acme)
		Expect(walletsOf(acme)).To(ConsistOf(HaveField("Spec.Address", solana)))
	})

	It("verifies a wallet the account already knew unverified", func() {
		acme := newAccount("verify")
		known := &payoutv1.Wallet{
			ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.AccountNamespace(acme), Name: payoutv1.WalletName(lowerCase)},
			Spec:       payoutv1.WalletSpec{Address: lowerCase},
		}
		Expect(k8s.Create(ctx, known)).To(Succeed())

		succeeds("wallet", "verify", checksummed, "--account", acme)
		Expect(walletsOf(acme)).To(ConsistOf(HaveField("Spec", payoutv1.WalletSpec{
			Address: lowerCase, KYCVerified: true, VerifiedBy: "kubectl-payout"})))
	})

	It("refuses an address that is neither EVM nor Solana", func() {
		acme := newAccount("verify")
		fails("error: invalid wallet address \"0x8ba1f109\": not an EVM address (0x and 40 hex digits) or a Solana address (32 to 44 base58 characters)\n",
			"wallet", "verify", "0x8ba1f109", "--account", acme)
		fails("error: invalid wallet address \"0x8Ba1f109551bD432803012645Ac136ddd64DBA72\": the EVM address has mixed case but a wrong EIP-55 checksum; check it, or send it all in lower case\n",
			"wallet", "verify", "0x8Ba1f109551bD432803012645Ac136ddd64DBA72", "--account", acme)
		Expect(walletsOf(acme)).To(BeEmpty())
	})

	It("refuses an account that does not exist", func() {
		account := uniqueName("nobody")
		fails(`error: account "`+account+`" does not exist`+"\n", "wallet", "verify", checksummed, "--account", account)
	})
})

var _ = Describe("wallet block", func() {
	const address = "0xdEADbeEF00000000000000000000000000000001" // its EIP-55 spelling

	It("puts the wallet on the risk list once, whatever the spelling", func() {
		Expect(succeeds("wallet", "block", address, "--reason", "chargeback fraud")).
			To(Equal("Blocked wallet 0xdeadbeef00000000000000000000000000000001\n"))
		b := getBlocked(address)
		Expect(b.Spec).To(Equal(payoutv1.BlockedWalletSpec{Address: "0xdeadbeef00000000000000000000000000000001", Reason: "chargeback fraud"}))

		succeeds("wallet", "block", "0xdeadbeef00000000000000000000000000000001")
		Expect(getBlocked(address).ResourceVersion).To(Equal(b.ResourceVersion), "blocking again without a reason changes nothing")

		succeeds("wallet", "block", address, "--reason", "sanctioned")
		Expect(getBlocked(address).Spec.Reason).To(Equal("sanctioned"))
	})

	It("refuses a bad address and stores nothing", func() {
		fails("error: invalid wallet address \"not-a-wallet\": not an EVM address (0x and 40 hex digits) or a Solana address (32 to 44 base58 characters)\n",
			"wallet", "block", "not-a-wallet")
		// mixed case with a wrong EIP-55 checksum: likely mistyped, so refused rather than listed
		fails("error: invalid wallet address \"0xDEADbeef00000000000000000000000000000001\": the EVM address has mixed case but a wrong EIP-55 checksum; check it, or send it all in lower case\n",
			"wallet", "block", "0xDEADbeef00000000000000000000000000000001")
		err := k8s.Get(ctx, client.ObjectKey{Name: payoutv1.WalletName("not-a-wallet")}, &payoutv1.BlockedWallet{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})
})
