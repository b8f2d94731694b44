package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/test/testgen"
)

// Issue 23 item 7: deleting an account (or its namespace) must not erase what it owes.
var _ = Describe("deleting an account", func() {
	It("waits until nothing in its namespace is owed, refusing to delete the namespace meanwhile", func() {
		const name = "ctrl-owing"
		acct, err := admin.CreateAccount(ctx, env.Client, name, admin.DefaultAccountSettings(name))
		Expect(err).NotTo(HaveOccurred())
		Expect(acct.Finalizers).To(ContainElement(payoutv1.MoneyFinalizer), "in the account's create: no write of its own")
		ns := payoutv1.AccountNamespace(name)
		// a failed transfer whose deposit arrived: it owes the deposit
		id := "ac0000000000000000000001"
		t := testgen.Transfer(ns, id, func(t *payoutv1.Transfer) { t.Spec.Account = name })
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		testgen.Failed(payoutv1.FailureDepositShort, "the deposit was short")(t)
		t.Status.Deposit = testgen.Deposit()
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())

		clk := clocktesting.NewFakeClock(fakeClock.Now())
		r := &PayoutAccountReconciler{Client: env.Client, APIReader: env.Client, Clock: clk, ReleaseSettle: 5 * time.Second}
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Delete(ctx, acct)).To(Succeed())
		res, err := r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", 0), "looked at again")
		status, reason := readyOf(acct)
		Expect(status).To(Equal(metav1.ConditionFalse))
		Expect(reason).To(Equal(AccountDeletionWaitsReason))
		Expect(readyMessage(acct)).To(ContainSubstring("transfer " + id + " owes its senders money: refund it with `kubectl payout refund " + id + "`"))

		// its namespace cannot be deleted by hand (config/policy, installed by testenv)
		err = env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("delete the account instead (kubectl delete payoutaccount " + name + ")"))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})).To(Succeed())

		// the refund goes out and the transfer records it (the refund and transfer controllers'
		// part): nothing is owed, and the namespace is released
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x" + "fe", Amount: "25000000", To: t.Status.Deposit.From, ConfirmedAt: metav1.NewTime(fakeClock.Now())}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		_, reason = readyOf(acct)
		Expect(reason).To(Equal(AccountReleasedReason))
		Expect(namespaceLabels(ns)).To(HaveKeyWithValue(payoutv1.ReleasedLabel, "true"))

		// a deposit arriving before the chain watcher saw the label is owed again: the
		// namespace is guarded again until the transfer records it and its refund
		stray := depositOf(ns, id, "0x"+"5a", "1000")
		Expect(env.Client.Create(ctx, stray)).To(Succeed())
		clk.Step(6 * time.Second) // past the settle: the last check, not its wait, must hold it
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(readyMessage(acct)).To(ContainSubstring("transfer " + id + " owes its senders money"))
		Expect(namespaceLabels(ns)).NotTo(HaveKey(payoutv1.ReleasedLabel))
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{{TxHash: stray.Spec.TxHash, Token: payoutv1.TokenUSDC, Amount: "1000", From: stray.Spec.From,
			Reason: "it arrived after the transfer failed", Refund: &payoutv1.StrayRefundFacts{Name: "x", Network: payoutv1.NetworkBase,
				Token: payoutv1.TokenUSDC, TxHash: "0x" + "fd", ConfirmedAt: metav1.NewTime(fakeClock.Now())}}}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())

		// released, and after the settle the account goes: its namespace may go now
		res, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(5*time.Second), "released: the last check after the settle")
		Expect(namespaceLabels(ns)).To(HaveKeyWithValue(payoutv1.ReleasedLabel, "true"))
		res, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", 0), "within the settle it waits")
		clk.Step(6 * time.Second)
		Eventually(func() bool {
			_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: name}})
			Expect(err).NotTo(HaveOccurred())
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &payoutv1.PayoutAccount{}))
		}).Should(BeTrue())
		Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	It("waits for an open v1 transfer and a refund on its way, not for a v2 transfer without a hash", func() {
		const name = "ctrl-open"
		acct, err := admin.CreateAccount(ctx, env.Client, name, admin.DefaultAccountSettings(name))
		Expect(err).NotTo(HaveOccurred())
		ns := payoutv1.AccountNamespace(name)
		open := testgen.Transfer(ns, "ac0000000000000000000002")
		Expect(env.Client.Create(ctx, open)).To(Succeed())
		Expect(env.Client.Create(ctx, testgen.Transfer(ns, "ac0000000000000000000003", testgen.V2()))).To(Succeed())
		r := &PayoutAccountReconciler{Client: env.Client, APIReader: env.Client, Clock: clock.RealClock{}, ReleaseSettle: time.Millisecond}
		Expect(env.Client.Delete(ctx, acct)).To(Succeed())
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(readyMessage(acct)).To(ContainSubstring("transfer ac0000000000000000000002 is open until it expires at"))
		Expect(readyMessage(acct)).NotTo(ContainSubstring("ac0000000000000000000003"))

		// the open transfer expires; a refund of a transfer that is gone is still on its way
		testgen.Failed(payoutv1.FailureExpired, "expired")(open)
		Expect(env.Client.Status().Update(ctx, open)).To(Succeed())
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ac00000000000000000000ff"}, Spec: payoutv1.RefundSpec{Transfer: "ac00000000000000000000ff"}}
		Expect(env.Client.Create(ctx, rf)).To(Succeed())
		rf.Status = payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: testgen.Deposit().From, Amount: "5"}
		Expect(env.Client.Status().Update(ctx, rf)).To(Succeed())
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(readyMessage(acct)).To(ContainSubstring("refund ac00000000000000000000ff of transfer ac00000000000000000000ff is on its way"))
		Expect(readyMessage(acct)).NotTo(ContainSubstring("ac0000000000000000000002"))

		rf.Status.State = payoutv1.RefundRefused
		rf.Status.To, rf.Status.Amount, rf.Status.Network, rf.Status.Token = testgen.Deposit().From, "5", payoutv1.NetworkBase, payoutv1.TokenUSDC
		Expect(env.Client.Status().Update(ctx, rf)).To(HaveOccurred(), "a refund admitted is never refused by hand")
		Expect(env.Client.Delete(ctx, rf)).To(Succeed()) // made without the finalizer: it goes
		Eventually(func() bool {
			_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: name}})
			Expect(err).NotTo(HaveOccurred())
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &payoutv1.PayoutAccount{}))
		}).Should(BeTrue())
	})
})

func readyMessage(acct *payoutv1.PayoutAccount) string {
	GinkgoHelper()
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	for _, c := range acct.Status.Conditions {
		if c.Type == payoutv1.ReadyCondition {
			return c.Message
		}
	}
	return ""
}

func namespaceLabels(name string) map[string]string {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, ns)).To(Succeed())
	return ns.Labels
}

// depositOf is a Deposit record of amount base units to transfer id, from a stranger.
func depositOf(ns, id, tx, amount string) *payoutv1.Deposit {
	return &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0), Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: "0xc0ffee", To: "0x71c7656ec7ab88b098defb751b7401b5f6d8976f",
			From: "0x1111111111111111111111111111111111111111", Amount: amount, TxHash: tx, BlockNumber: 2000, BlockHash: "0xbb",
			BlockTime: metav1.NewTime(fakeClock.Now()), Confirmations: 3},
	}
}
