package controllers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/refund"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// crashingWallet stands for a controller that dies around its broadcast: the first `before`
// broadcasts fail without sending (a crash after the signed transaction was persisted and
// before it left), the next `after` send and then fail (a crash after sending, before the
// Broadcast state was written).
type crashingWallet struct {
	*evm.Wallet
	before, after int
}

var errCrash = errors.New("the controller crashed")

func (w *crashingWallet) Broadcast(ctx context.Context, raw []byte) error {
	if w.before > 0 {
		w.before--
		return errCrash
	}
	if w.after > 0 {
		w.after--
		if err := w.Wallet.Broadcast(ctx, raw); err != nil {
			return err
		}
		return errCrash
	}
	return w.Wallet.Broadcast(ctx, raw)
}

var _ = Describe("RefundReconciler (on a Base dev chain)", Ordered, func() {
	var (
		set      *devchain.Set
		base     *devchain.Chain
		wallet   *evm.Wallet
		walletAt common.Address
		bank     *simbank.Server
		provider fiat.Provider
	)
	BeforeAll(func() {
		anvil, err := devchain.FindAnvil()
		Expect(err).NotTo(HaveOccurred())
		set, err = devchain.Start(ctx, devchain.Options{Anvil: anvil, Dir: GinkgoT().TempDir(), Networks: []string{devchain.Base}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(set.Stop)
		base = set.Chains[devchain.Base]
		chaintest.ManualMining(GinkgoT(), base)
		ch, err := evm.NewChain(payoutv1.NetworkBase, chaintest.Network(base, 2))
		Expect(err).NotTo(HaveOccurred())
		wallet, err = evm.NewWallet(ch, payoutv1.TokenUSDC, common.Bytes2Hex(crypto.FromECDSA(set.RefundKey)))
		Expect(err).NotTo(HaveOccurred())
		walletAt = crypto.PubkeyToAddress(set.RefundKey.PublicKey)
		bank, provider = startBank(simbank.Faults{})
	})

	// failedTransfer stores a failed transfer whose deposit of amount came from sender.
	failedTransfer := func(ns, id string, sender common.Address, amount string) {
		t := testgen.Transfer(ns, id)
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		testgen.Failed(payoutv1.FailureDepositShort, "the deposit was short")(t)
		t.Status.Deposit = testgen.Deposit()
		t.Status.Deposit.From, t.Status.Deposit.Amount = sender.Hex(), amount
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
	}
	newRefund := func(ns, id string) *payoutv1.Refund {
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}, Spec: payoutv1.RefundSpec{Transfer: id}}
		Expect(env.Client.Create(ctx, rf)).To(Succeed())
		return rf
	}
	reconciler := func(w refund.Wallet) *RefundReconciler {
		return &RefundReconciler{Client: env.Client, APIReader: env.Client, Wallets: refund.Single(w), Screener: walletscreen.LocalList{Reader: env.Client},
			Provider: provider, Clock: fakeClock, PollInterval: time.Millisecond}
	}
	reload := func(rf *payoutv1.Refund) *payoutv1.Refund {
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), rf)).To(Succeed())
		return rf
	}
	// untilConfirmed reconciles rf, mining blocks (blocks at a time) while its transaction is on
	// its way, until it is confirmed.
	untilConfirmed := func(r *RefundReconciler, rf *payoutv1.Refund, blocks int) {
		GinkgoHelper()
		Eventually(func() payoutv1.RefundState {
			_, err := r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
			if st := reload(rf).Status.State; st == payoutv1.RefundSigned || st == payoutv1.RefundBroadcast {
				chaintest.Mine(GinkgoT(), base, blocks)
			}
			return rf.Status.State
		}).WithTimeout(30 * time.Second).Should(Equal(payoutv1.RefundConfirmed))
	}
	balance := func(a common.Address) int64 {
		b, err := base.BalanceOf(ctx, devchain.USDC, a)
		Expect(err).NotTo(HaveOccurred())
		return b.Int64()
	}
	nonceOf := func(a common.Address) uint64 {
		n, err := base.Client.NonceAt(ctx, a, nil)
		Expect(err).NotTo(HaveOccurred())
		return n
	}

	It("sends exactly one transaction, the persisted one, across restarts around the broadcast", func() {
		ns := namespace()
		id := "fa0000000000000000000001"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f0001")
		failedTransfer(ns, id, sender, "25000000")
		rf := newRefund(ns, id)
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)

		// first controller: admits, signs and persists, then dies before the bytes leave
		first := reconciler(&crashingWallet{Wallet: wallet, before: 1})
		_, err := first.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundPending))
		Expect(rf.Status.To).To(Equal(payoutv1.NormalizeWallet(sender.Hex())))
		Expect(rf.Status.Amount).To(Equal("25000000"))
		_, err = first.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundSigned))
		signedTx, txHash := rf.Status.SignedTx, rf.Status.TxHash
		Expect(*rf.Status.Nonce).To(Equal(int64(nonceBefore)))
		_, err = first.Reconcile(ctx, request(rf))
		Expect(err).To(MatchError(errCrash))
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundSigned))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore))
		pending, err := base.Client.PendingNonceAt(ctx, walletAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(pending).To(Equal(nonceBefore), "nothing reached the node")

		// second controller (a restart): broadcasts the persisted bytes, then dies before
		// recording it
		second := reconciler(&crashingWallet{Wallet: wallet, after: 1})
		_, err = second.Reconcile(ctx, request(rf))
		Expect(err).To(MatchError(errCrash))
		Expect(reload(rf).Status.SignedTx).To(Equal(signedTx), "never signed again")

		// third controller: the node has the transaction; the same bytes again, then the receipt
		third := reconciler(wallet)
		_, err = third.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundBroadcast))
		chaintest.Mine(GinkgoT(), base, 1)
		_, err = third.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundBroadcast), "one confirmation of two")
		Expect(rf.Status.Confirmations).To(Equal(int64(1)))
		chaintest.Mine(GinkgoT(), base, 1)
		_, err = third.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundConfirmed))
		Expect(rf.Status.TxHash).To(Equal(txHash))
		Expect(rf.Status.SignedTx).To(Equal(signedTx))
		Expect(rf.Status.BlockNumber).To(BeNumerically(">", 0))
		Expect(rf.Status.ConfirmedAt).NotTo(BeNil())
		status, reason := readyOf(rf)
		Expect(status).To(Equal(metav1.ConditionTrue))
		Expect(reason).To(Equal(refund.ReasonConfirmed))

		// on chain: the sender got the amount once, the wallet spent one nonce
		Expect(balance(sender) - balanceBefore).To(Equal(int64(25_000_000)))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 1))

		// a confirmed refund is done: more passes send nothing
		rv := rf.ResourceVersion
		_, err = third.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		chaintest.Mine(GinkgoT(), base, 1)
		Expect(reload(rf).ResourceVersion).To(Equal(rv))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 1))
		Expect(balance(sender) - balanceBefore).To(Equal(int64(25_000_000)))
	})

	It("gives refunds signed before either is mined consecutive nonces", func() {
		ns := namespace()
		a, b := common.HexToAddress("0x00000000000000000000000000000000000f00a1"), common.HexToAddress("0x00000000000000000000000000000000000f00b1")
		failedTransfer(ns, "fa00000000000000000000a1", a, "1000000")
		failedTransfer(ns, "fa00000000000000000000b1", b, "2000000")
		ra, rb := newRefund(ns, "fa00000000000000000000a1"), newRefund(ns, "fa00000000000000000000b1")
		nonceBefore := nonceOf(walletAt)
		r := reconciler(wallet)
		for _, rf := range []*payoutv1.Refund{ra, rb, ra, rb} { // admit both, then sign both
			_, err := r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(*reload(ra).Status.Nonce).To(Equal(int64(nonceBefore)))
		Expect(*reload(rb).Status.Nonce).To(Equal(int64(nonceBefore + 1)))
		for range 4 {
			for _, rf := range []*payoutv1.Refund{rb, ra} {
				_, err := r.Reconcile(ctx, request(rf))
				Expect(err).NotTo(HaveOccurred())
			}
			chaintest.Mine(GinkgoT(), base, 1)
		}
		Expect(reload(ra).Status.State).To(Equal(payoutv1.RefundConfirmed))
		Expect(reload(rb).Status.State).To(Equal(payoutv1.RefundConfirmed))
		Expect(balance(a)).To(Equal(int64(1_000_000)))
		Expect(balance(b)).To(Equal(int64(2_000_000)))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 2))
	})

	It("refuses a transfer that is not refundable and sends nothing", func() {
		ns := namespace()
		t := testgen.Transfer(ns, "fa0000000000000000000002")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		rf := newRefund(ns, t.Name)
		nonceBefore := nonceOf(walletAt)
		r := reconciler(wallet)
		_, err := r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundRefused))
		Expect(rf.Status.Message).To(ContainSubstring("only a failed transfer"))
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.Nonce).To(BeNil())
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore))
	})

	It("adopts a refund the chain shows sent, when its record was lost (restored from before it), and sends nothing again", func() {
		ns := namespace()
		id := "fa0000000000000000000006"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f0006")
		failedTransfer(ns, id, sender, "6000000")
		rf := newRefund(ns, id)
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)
		r := reconciler(wallet)
		untilConfirmed(r, rf, 1)
		sent := rf.Status.TxHash
		Expect(balance(sender) - balanceBefore).To(Equal(int64(6_000_000)))

		// an etcd restore from before the refund: the Refund is back as new, its transfer failed
		// (a restore replaces the object outright; here it is deleted and its finalizer, which
		// keeps a confirmed refund its transfer has not recorded, taken off by hand)
		Expect(env.Client.Delete(ctx, rf)).To(Succeed())
		Expect(env.Client.Patch(ctx, reload(rf), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), &payoutv1.Refund{}))
		}).Should(BeTrue())
		rf = newRefund(ns, id)
		Eventually(func() payoutv1.RefundState {
			_, err := r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
			if reload(rf).Status.State == payoutv1.RefundBroadcast {
				chaintest.Mine(GinkgoT(), base, 1)
			}
			return rf.Status.State
		}).Should(Equal(payoutv1.RefundConfirmed))
		Expect(rf.Status.TxHash).To(Equal(sent), "the transaction on chain is adopted")
		Expect(rf.Status.SignedTx).To(BeEmpty())
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore+1), "nothing signed again")
		Expect(balance(sender)-balanceBefore).To(Equal(int64(6_000_000)), "the sender got the amount once")
	})

	It("never refunds a transfer whose payout the provider holds (a status restored from before it)", func() {
		ns := namespace()
		id := "fa0000000000000000000005"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f0005")
		failedTransfer(ns, id, sender, "5000000")
		t := testgen.Transfer(ns, id)
		_, err := provider.Create(ctx, fiat.PayoutRequest{Reference: id, SourceCurrency: "USD", TargetCurrency: "EUR",
			TargetAmount: decimal.RequireFromString("4.40"), Rate: decimal.RequireFromString("0.88022588"),
			Recipient: fiat.Recipient{AccountHolderName: t.Spec.Recipient.AccountHolderName, Currency: "EUR", Type: "iban", Country: "DE",
				Details: transfer.DetailsMap(t.Spec.Recipient.Details)}})
		Expect(err).NotTo(HaveOccurred())
		Expect(bank.Ledger()).To(ContainElement(HaveField("Reference", id)))
		rf := newRefund(ns, id)
		nonceBefore := nonceOf(walletAt)
		r := reconciler(wallet)
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundRefused))
		Expect(rf.Status.Message).To(ContainSubstring("its money went out"))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore))
	})

	It("holds a refund to a blocked address, sending nothing, until screening clears it", func() {
		ns := namespace()
		sender := common.HexToAddress("0x00000000000000000000000000000000000f0004")
		failedTransfer(ns, "fa0000000000000000000004", sender, "4000000")
		blocked := &payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(sender.Hex())},
			Spec: payoutv1.BlockedWalletSpec{Address: payoutv1.NormalizeWallet(sender.Hex()), Reason: "test"}}
		Expect(env.Client.Create(ctx, blocked)).To(Succeed())
		rf := newRefund(ns, "fa0000000000000000000004")
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)
		r := reconciler(wallet)
		_, err := r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		res, err := r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundHeld))
		Expect(rf.Status.Message).To(ContainSubstring("failed wallet screening"))
		Expect(rf.Status.Nonce).To(BeNil())
		Expect(res.RequeueAfter).To(Equal(time.Hour), "screened again later")
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore), "nothing is signed to a blocked address")

		// a screening service that cannot answer holds it too (fail closed)
		down := reconciler(wallet)
		down.Screener = unreachableScreener{}
		_, err = down.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundHeld))
		Expect(rf.Status.Message).To(ContainSubstring("waiting to screen the destination"))

		Expect(env.Client.Delete(ctx, blocked)).To(Succeed())
		untilConfirmed(r, rf, 3)
		Expect(balance(sender) - balanceBefore).To(Equal(int64(4_000_000)))
	})

	It("signs nothing while money waits for an operator (the recovery gate), and sends once it opens", func() {
		ns := namespace()
		sender := common.HexToAddress("0x00000000000000000000000000000000000f00c1")
		failedTransfer(ns, "fa00000000000000000000c1", sender, "6000000")
		rf := newRefund(ns, "fa00000000000000000000c1")
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)
		gate := &gateSwitch{}
		gate.set("the recovery check found the records behind the chain; money waits for an operator")
		r := reconciler(wallet)
		r.Gate = gate
		var res ctrl.Result
		for range 3 {
			var err error
			res, err = r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(res.RequeueAfter).To(Equal(pausedRetry), "asked again later")
		Expect(reload(rf).Status.Nonce).To(BeNil())
		Expect(rf.Status.SignedTx).To(BeEmpty())
		Expect(rf.Status.Message).To(ContainSubstring("money waits for an operator"))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore), "nothing is signed while the gate is closed")

		gate.set("")
		untilConfirmed(r, rf, 3)
		Expect(balance(sender) - balanceBefore).To(Equal(int64(6_000_000)))
	})

	It("waits with a message while the wallet cannot pay, taking no nonce", func() {
		ns := namespace()
		sender := common.HexToAddress("0x00000000000000000000000000000000000f0003")
		failedTransfer(ns, "fa0000000000000000000003", sender, "999999999999999999")
		rf := newRefund(ns, "fa0000000000000000000003")
		r := reconciler(wallet)
		_, err := r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).To(MatchError(evm.ErrInsufficientFunds))
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundPending))
		Expect(rf.Status.Nonce).To(BeNil())
		Expect(rf.Status.Message).To(ContainSubstring("insufficient funds"))
		Expect(rf.Status.Message).To(ContainSubstring(wallet.Address()))

		noWallet := reconciler(nil)
		res, err := noWallet.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(time.Minute))
		Expect(reload(rf).Status.Message).To(ContainSubstring("no refund wallet can send usdc on base"))
	})

	It("keeps a deleted refund whose transaction may be on its way until it is confirmed: a second request signs nothing (issue 23 item 6)", func() {
		ns := namespace()
		id := "fa000000000000000000000d"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f000d")
		failedTransfer(ns, id, sender, "5000000")
		_, requested, err := admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(err).NotTo(HaveOccurred())
		Expect(requested).To(HaveLen(1))
		rf := reload(&payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}})
		Expect(rf.Finalizers).To(ContainElement(payoutv1.MoneyFinalizer), "the request carries the finalizer: no write of its own")
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)

		// admitted, signed, sent, and the controller dies before it records the broadcast
		first := reconciler(&crashingWallet{Wallet: wallet, after: 1})
		for range 2 {
			_, err = first.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = first.Reconcile(ctx, request(rf))
		Expect(err).To(MatchError(errCrash))
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundSigned))
		txHash := rf.Status.TxHash

		// the operator deletes it, and asks again: the Refund stays, so nothing new is requested
		Expect(env.Client.Delete(ctx, rf)).To(Succeed())
		_, _, err = admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(errors.Is(err, refund.ErrAlreadyRequested)).To(BeTrue(), "%v", err)
		Expect(reload(rf).DeletionTimestamp).NotTo(BeNil())

		// the controller takes the same transaction to depth
		r := reconciler(wallet)
		untilConfirmed(r, rf, 1)
		Expect(rf.Status.TxHash).To(Equal(txHash))

		// confirmed, it stays until its transfer records it (the transfer controller's part)
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Finalizers).To(ContainElement(payoutv1.MoneyFinalizer))
		t := &payoutv1.Transfer{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, t)).To(Succeed())
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: rf.Status.TxHash, Amount: rf.Status.Amount, To: rf.Status.To, ConfirmedAt: *rf.Status.ConfirmedAt}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), &payoutv1.Refund{}))).To(BeTrue(), "released")

		// a third request: the transfer is refunded
		_, _, err = admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(errors.Is(err, refund.ErrAlreadyRequested)).To(BeTrue(), "%v", err)

		// on chain: one transaction, the amount once
		chaintest.Mine(GinkgoT(), base, 3)
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 1))
		Expect(balance(sender) - balanceBefore).To(Equal(int64(5_000_000)))
	})

	It("lets a deleted refund with nothing signed go; the next request sends the money once", func() {
		ns := namespace()
		id := "fa000000000000000000000e"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f000e")
		failedTransfer(ns, id, sender, "6000000")
		_, _, err := admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(err).NotTo(HaveOccurred())
		rf := reload(&payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}})
		r := reconciler(wallet)
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundPending))
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)

		Expect(env.Client.Delete(ctx, rf)).To(Succeed())
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), &payoutv1.Refund{}))).To(BeTrue())
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore), "nothing was signed")

		_, _, err = admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(err).NotTo(HaveOccurred())
		rf = reload(&payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}})
		untilConfirmed(r, rf, 1)
		chaintest.Mine(GinkgoT(), base, 3)
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 1))
		Expect(balance(sender) - balanceBefore).To(Equal(int64(6_000_000)))
	})

	It("signs nothing after a hand edit that claims its transaction reverted while it is on its way; the chain's transaction is followed (issue 23 item 6)", func() {
		ns := namespace()
		id := "fa000000000000000000000f"
		sender := common.HexToAddress("0x00000000000000000000000000000000000f000f")
		failedTransfer(ns, id, sender, "7000000")
		rf := newRefund(ns, id)
		r := reconciler(wallet)
		nonceBefore, balanceBefore := nonceOf(walletAt), balance(sender)
		// admitted, signed, broadcast: the transaction waits in the node's pool, not mined
		for range 3 {
			_, err := r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundBroadcast))
		sent := rf.Status.TxHash

		// the one backward move the schema allows: to Pending with the transaction listed as
		// reverted; a hand edit can write that too. Nothing on chain shows it sent yet (no
		// adoption), and the chain does not show it reverted: nothing is signed
		forged := rf.DeepCopy()
		forged.Status = payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: rf.Status.Network, Token: rf.Status.Token, To: rf.Status.To,
			Amount: rf.Status.Amount, From: rf.Status.From, RevertedTxs: []string{sent}}
		Expect(env.Client.Status().Update(ctx, forged)).To(Succeed())
		for range 3 {
			_, err := r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundPending))
		Expect(rf.Status.Nonce).To(BeNil())
		Expect(rf.Status.Message).To(ContainSubstring("listed as reverted, is not on chain"))
		pending, err := base.Client.PendingNonceAt(ctx, walletAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(pending).To(Equal(nonceBefore+1), "no second transaction in the pool")

		// mined, the chain shows it sent: the refund follows it to depth
		chaintest.Mine(GinkgoT(), base, 1)
		untilConfirmed(r, rf, 1)
		Expect(rf.Status.TxHash).To(Equal(sent))
		chaintest.Mine(GinkgoT(), base, 3)
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore + 1))
		Expect(balance(sender)-balanceBefore).To(Equal(int64(7_000_000)), "the sender got the amount once")
	})

	It("refuses a new request for a stray whose refund its transfer records, its Refund object deleted or not (issue 23 item 6)", func() {
		ns := namespace()
		id := "fa0000000000000000000011"
		t := testgen.Transfer(ns, id)
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		stray := depositOf(ns, id, "0x"+strings.Repeat("11", 32), "1")
		Expect(env.Client.Create(ctx, stray)).To(Succeed())
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: metav1.NewTime(fakeClock.Now())}
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{{TxHash: stray.Spec.TxHash, Token: payoutv1.TokenUSDC, Amount: "1", From: stray.Spec.From,
			Reason: "it was sent by a stranger", Refund: &payoutv1.StrayRefundFacts{Name: "x", Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				TxHash: "0x" + strings.Repeat("fd", 32), ConfirmedAt: metav1.NewTime(fakeClock.Now())}}}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())

		_, _, err := admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(errors.Is(err, refund.ErrAlreadyRequested)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("already requested and sent"))
		list := &payoutv1.RefundList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(BeEmpty(), "nothing requested again")
	})

	It("refunds a deposit recorded after its account was deleted, once, and keeps that refund as the record (issue 23 item 7)", func() {
		id := "fa0000000000000000000010"
		sender, ref, _ := orphanDeposit(id, "08", 3, "8000000")
		balanceBefore := balance(sender)

		// the transfer is gone with its account: the refund tool finds the deposit anyway
		t, requested, err := admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Spec.Account).To(Equal("gone"))
		Expect(requested).To(HaveLen(1))
		Expect(requested[0].Reason).To(Equal(transfer.OrphanReason))
		rf := reload(&payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.OrphanNamespace, Name: payoutv1.StrayRefundName(id, ref)}})
		r := reconciler(wallet)
		untilConfirmed(r, rf, 1)
		chaintest.Mine(GinkgoT(), base, 3)
		Expect(balance(sender) - balanceBefore).To(Equal(int64(8_000_000)))

		// nothing else records it: deleted, it stays, and a new request changes nothing
		Expect(env.Client.Delete(ctx, rf)).To(Succeed())
		_, err = r.Reconcile(ctx, request(rf))
		Expect(err).NotTo(HaveOccurred())
		Expect(reload(rf).Finalizers).To(ContainElement(payoutv1.MoneyFinalizer))
		Expect(rf.Status.Message).To(ContainSubstring("the only record"))
		_, _, err = admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(errors.Is(err, refund.ErrAlreadyRequested)).To(BeTrue(), "%v", err)
		Expect(balance(sender) - balanceBefore).To(Equal(int64(8_000_000)))
	})

	It("refuses the refund of a deposit an operator wrote off, though the Refund was made past the refund tool (issue 27)", func() {
		id := "fa0000000000000000000011"
		_, ref, dep := orphanDeposit(id, "09", 1, "4000000")
		sw, _, err := admin.WriteOff(ctx, env.Client, dep.Name, "operator", "the account's owner gave it up")
		Expect(err).NotTo(HaveOccurred())
		Expect(sw.Spec.Reason).To(Equal(payoutv1.SweepWrittenOff))

		// the refund tool refuses it
		_, _, err = admin.RequestRefund(ctx, env.Client, id, "operator")
		Expect(errors.Is(err, refund.ErrWrittenOff)).To(BeTrue(), "%v", err)

		// a Refund created by hand (or by a request that raced the write-off): the controller refuses it
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.OrphanNamespace, Name: payoutv1.StrayRefundName(id, ref),
			Labels: map[string]string{payoutv1.RefundTransferLabel: id}}, Spec: payoutv1.RefundSpec{Transfer: id, Deposit: &ref}}
		Expect(env.Client.Create(ctx, rf)).To(Succeed())
		nonceBefore := nonceOf(walletAt)
		r := reconciler(wallet)
		for range 3 {
			_, err = r.Reconcile(ctx, request(rf))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(reload(rf).Status.State).To(Equal(payoutv1.RefundRefused))
		Expect(rf.Status.Message).To(ContainSubstring("was written off by operator: the account's owner gave it up"))
		Expect(nonceOf(walletAt)).To(Equal(nonceBefore), "nothing was signed")
	})
})

// orphanDeposit records, in the orphan namespace, a confirmed base USDC deposit of amount base
// units for transfer id of the deleted account "gone": what the controllers keep of a deposit
// recorded after its account was deleted. hashByte fills its transaction hash; the sender's
// address ends in the id's last four digits.
func orphanDeposit(id, hashByte string, logIndex int64, amount string) (common.Address, payoutv1.DepositRef, *payoutv1.Deposit) {
	GinkgoHelper()
	sender := common.HexToAddress("0x00000000000000000000000000000000000f" + id[len(id)-4:])
	Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.OrphanNamespace}}))).To(Succeed())
	ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0x" + strings.Repeat(hashByte, 32), LogIndex: logIndex}
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.OrphanNamespace, Name: payoutv1.DepositName(ref.Network, ref.TxHash, ref.LogIndex),
			Labels: map[string]string{payoutv1.DepositTransferLabel: id, payoutv1.AccountLabel: "gone"}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: ref.Network, Token: payoutv1.TokenUSDC, Contract: "0xc0ffee", To: "0x71c7656ec7ab88b098defb751b7401b5f6d8976f",
			From: strings.ToLower(sender.Hex()), Amount: amount, TxHash: ref.TxHash, LogIndex: ref.LogIndex, BlockNumber: 9, BlockHash: "0xbb",
			BlockTime: metav1.NewTime(fakeClock.Now()), Confirmations: 3},
	}
	Expect(env.Client.Create(ctx, dep)).To(Succeed())
	return sender, ref, dep
}
