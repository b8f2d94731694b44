package controllers

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// The provider after the payout intent: a payout the bank lost, one it rejected behind a hundred
// newer ones, one its recipient's bank returned after it was sent.

// withBank gives the fixture a simulated bank of its own, started with o.
func (f *transferFixture) withBank(o simbank.Options) *transferFixture {
	GinkgoHelper()
	f.bank, f.r.Provider = startBankWith(o)
	return f
}

// condition is t's condition of type kind, nil when it has none.
func condition(t *payoutv1.Transfer, kind string) *metav1.Condition {
	return apimeta.FindStatusCondition(t.Status.Conditions, kind)
}

var _ = Describe("TransferReconciler and the provider", func() {
	It("fails a payout the bank rejects after accepting it, although a hundred newer payouts hide it from the first page of the bank's list (issue 23 item 10)", func() {
		f := newTransferFixture(simbank.FailureName, simbank.Faults{}).withBank(simbank.Options{IgnoreKeyFilter: true, SettleAfter: 2 * time.Second})
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0101")
		f.deposit(t, "25000000")
		f.reconcile(t)
		Expect(f.reconcile(t).Status.Phase).To(Equal(payoutv1.PhaseTransferCreated))
		// 120 newer payouts: the bank lists the newest first and, as Wise, without the key filter
		for i := range 120 {
			_, err := f.r.Provider.Create(ctx, fiat.PayoutRequest{Reference: fmt.Sprintf("other-%03d", i), SourceCurrency: "USD", TargetCurrency: "EUR",
				TargetAmount: decimal.RequireFromString("21.56"), Rate: decimal.RequireFromString(string(t.Spec.Quote.USDToTargetRate)),
				Recipient: fiat.Recipient{AccountHolderName: "Jane Doe", Currency: "EUR", Type: "iban", Details: map[string]string{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}}})
			Expect(err).NotTo(HaveOccurred())
		}
		got := f.until(t, payoutv1.PhaseFailed)
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailurePayoutRejected))
		all, sent := sentEntries(f.bank, t.Name)
		Expect([]int{all, sent}).To(Equal([]int{1, 0}), "one payout, never sent")
	})

	It("keeps a payout the bank lost after accepting it as transfer_created, creates nothing again, and says so (issue 23 item 10)", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{}).withBank(simbank.Options{SettleAfter: time.Hour})
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0102")
		f.deposit(t, "25000000")
		f.reconcile(t)
		Expect(f.reconcile(t).Status.Phase).To(Equal(payoutv1.PhaseTransferCreated))
		Expect(f.bank.Lose(t.Name)).To(BeTrue())
		for range 3 {
			f.reconcile(t)
		}
		got := f.reconcile(t)
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseTransferCreated), "its money may be out: never failed by the service")
		Expect(got.Status.Failure).To(BeNil())
		Expect(got.Status.Payout.LostAt).NotTo(BeNil())
		all, _ := sentEntries(f.bank, t.Name)
		Expect(all).To(BeZero(), "the bank would take the key again: nothing is created anew")
		c := condition(got, payoutv1.NeedsAttentionCondition)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(transfer.ReasonPayoutLost))
		Expect(condition(got, payoutv1.ReadyCondition).Message).To(ContainSubstring("does not know payout"))
	})

	It("asks about a completed payout while its recipient's bank may return it, and owes the deposit back once it does; the transfer stays completed (issue 23 item 10)", func() {
		// The bank runs on a clock of its own that only this spec moves, so that the payout comes
		// back after the transfer was seen completed however slow the machine: on real time, a
		// return 300 ms after the payout was sent could come before a loaded reconciler saw it sent.
		bankClk := clocktesting.NewFakeClock(time.Now())
		f := newTransferFixture(simbank.ReturnName, simbank.Faults{}).withBank(simbank.Options{ReturnAfter: time.Hour, Now: bankClk.Now})
		clk := clocktesting.NewFakeClock(time.Now())
		f.r.Clock = clk
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0103")
		f.deposit(t, "25000000")
		var got *payoutv1.Transfer
		Eventually(func() payoutv1.TransferPhase {
			bankClk.Step(100 * time.Millisecond) // the bank settles the payout along the way
			got = f.reconcile(t)
			return got.Status.Phase
		}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(payoutv1.PhaseCompleted))
		Expect(got.Status.Payout.ReturnWindowEndsAt.Time).To(BeTemporally("~", clk.Now().Add(wise.DefaultReturnWindow), time.Second))
		res, err := f.r.Reconcile(ctx, request(t))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically("~", time.Hour, time.Second), "the first return check")

		// bounced_back, then cancelled: returned for good
		bankClk.Step(time.Hour + time.Second)
		Eventually(func() string { e, _ := f.bank.Find(t.Name); return e.Status }).WithTimeout(5 * time.Second).Should(Equal(simbank.StatusFundsRefunded))
		Expect(f.reconcile(t).Status.Payout.Returned).To(BeNil(), "a pass between checks asks nothing")
		clk.Step(time.Hour)
		got = f.reconcile(t)
		Expect(got.Status.Payout.Returned).NotTo(BeNil())
		Expect(got.Status.Payout.Returned.Message).To(ContainSubstring("returned the payment after it was sent"))
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseCompleted), "completed is terminal (spec 3.1)")
		Expect(got.Status.Failure).To(BeNil())
		c := condition(got, payoutv1.NeedsAttentionCondition)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(transfer.ReasonPayoutReturned))
		Expect(c.Message).To(ContainSubstring("kubectl payout refund " + t.Name))
		Expect(f.mail.all()).To(ConsistOf(t.Name+"/PayoutSent"), "no second outcome is mailed")

		// the operator refunds what it owes: its deposit, once
		_, requested, err := admin.RequestRefund(ctx, env.Client, t.Name, "operator")
		Expect(err).NotTo(HaveOccurred())
		Expect(requested).To(HaveLen(1))
		Expect(requested[0].Deposit).To(BeNil())
		Expect(requested[0].Units).To(Equal("25000000"))
		rf := &payoutv1.Refund{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, rf)).To(Succeed())
		confirmRefund(rf, got.Status.Deposit.From, "25000000")
		got = f.reconcile(t)
		Expect(got.Status.Refund).NotTo(BeNil())
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseCompleted))
		Expect(condition(got, payoutv1.NeedsAttentionCondition).Status).To(Equal(metav1.ConditionFalse))
		_, _, err = admin.RequestRefund(ctx, env.Client, t.Name, "operator")
		Expect(err).To(MatchError(ContainSubstring("already refunded")))
	})
})
