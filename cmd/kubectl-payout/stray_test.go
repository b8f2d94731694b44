package main_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("stray write-off", func() {
	const stranger = "0x2222222222222222222222222222222222222222"
	var (
		account string
		t       *payoutv1.Transfer
		paid    *payoutv1.Deposit // credited to t
		stray   *payoutv1.Deposit // from another wallet than t's: owed to its sender
	)

	// record stores a log at t's deposit address, as the chain watcher does.
	record := func(tx, from, units string) *payoutv1.Deposit {
		GinkgoHelper()
		d := &payoutv1.Deposit{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0),
				Labels: map[string]string{payoutv1.DepositTransferLabel: t.Name}},
			Spec: payoutv1.DepositSpec{Transfer: t.Name, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Contract: "0x036cbd53842c5426634e7929541ec2318f3dcf7e", To: t.Spec.DepositAddress, From: from, Amount: units,
				TxHash: tx, BlockNumber: 1234, BlockHash: "0x" + randomHex(32), BlockTime: testgen.Deposit().SeenAt, Confirmations: 3},
		}
		Expect(k8s.Create(ctx, d)).To(Succeed())
		return d
	}
	sweepOf := func(d *payoutv1.Deposit) (*payoutv1.Sweep, error) {
		sw := &payoutv1.Sweep{}
		return sw, k8s.Get(ctx, client.ObjectKeyFromObject(d), sw)
	}
	strayRefund := func() client.ObjectKey {
		ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: stray.Spec.TxHash, LogIndex: 0}
		return client.ObjectKey{Namespace: t.Namespace, Name: payoutv1.StrayRefundName(t.Name, ref)}
	}

	BeforeEach(func() {
		account = newAccount("stray")
		dep := arrivedDeposit()
		dep.TxHash = "0x" + randomHex(32)
		t = storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted, Deposit: dep,
			Payout: &payoutv1.PayoutFacts{Reference: "p", Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: testgen.Epoch}},
			func(t *payoutv1.Transfer) { t.Spec.DepositAddress, t.Spec.DepositPath = "0x"+randomHex(20), "7/8/9/10" })
		paid = record(dep.TxHash, dep.From, dep.Amount)
		stray = record("0x"+randomHex(32), stranger, "3000000")
	})

	It("records who wrote a stray off and why, once; a refund of it is then refused", func() {
		Expect(succeeds("stray", "write-off", stray.Name, "--reason", "the sender cannot be reached")).To(Equal(fmt.Sprintf(
			"Wrote off deposit %s of transfer %s (3 usdc on base from %s): the sweeper moves it to the treasury once it is due (kubectl get sweep -n %s %s)\n",
			stray.Name, t.Name, stranger, t.Namespace, stray.Name)))
		sw, err := sweepOf(stray)
		Expect(err).NotTo(HaveOccurred())
		review := &authenticationv1.SelfSubjectReview{}
		Expect(k8s.Create(ctx, review)).To(Succeed())
		Expect(sw.Spec.Reason).To(Equal(payoutv1.SweepWrittenOff))
		Expect(sw.Spec.WriteOff).To(Equal(&payoutv1.WriteOff{By: review.Status.UserInfo.Username, Why: "the sender cannot be reached"}))
		Expect(sw.Spec.Amount).To(Equal("3000000"))
		Expect(sw.Spec.Path).To(Equal(t.Spec.DepositPath))

		fails(fmt.Sprintf("error: deposit %s has a sweep already (reason WrittenOff, not admitted yet): a deposit is swept once (kubectl get sweep -n %s %s)\n",
			stray.Name, t.Namespace, stray.Name), "stray", "write-off", stray.Name, "--reason", "again")

		// the other way round: the sender would be paid back while the treasury keeps the tokens
		res := kubectlPayout("refund", t.Name)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("was written off by " + review.Status.UserInfo.Username + ": the sender cannot be reached"))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, strayRefund(), &payoutv1.Refund{}))).To(BeTrue(), "no refund is requested")
	})

	It("refuses a write-off while a refund of the stray is in flight, and once it is refunded", func() {
		Expect(succeeds("refund", t.Name)).To(ContainSubstring("the stray deposit of 3 usdc on base from " + stranger))
		fails(fmt.Sprintf("error: a refund of the stray deposit %s is in flight (refund %s/%s): it is not written off\n", stray.Name, t.Namespace, strayRefund().Name),
			"stray", "write-off", stray.Name, "--reason", "too late")
		_, err := sweepOf(stray)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing is written off: %v", err)

		// the refund controller takes it to depth
		rf := &payoutv1.Refund{}
		Expect(k8s.Get(ctx, strayRefund(), rf)).To(Succeed())
		nonce, tx := int64(0), "0x"+randomHex(32)
		for _, st := range []payoutv1.RefundStatus{
			{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: stranger, Amount: "3000000"},
			{State: payoutv1.RefundSigned, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: stranger, Amount: "3000000",
				From: "0x3333333333333333333333333333333333333333", Nonce: &nonce, SignedTx: "0x02f8", TxHash: tx},
		} {
			rf.Status = st
			Expect(k8s.Status().Update(ctx, rf)).To(Succeed())
		}
		rf.Status.State, rf.Status.ConfirmedAt = payoutv1.RefundConfirmed, &testgen.Deposit().SeenAt
		Expect(k8s.Status().Update(ctx, rf)).To(Succeed())
		fails(fmt.Sprintf("error: the stray deposit %s was refunded (refund %s/%s, transaction %s): it is not written off\n", stray.Name, t.Namespace, rf.Name, tx),
			"stray", "write-off", stray.Name, "--reason", "too late")
		_, err = sweepOf(stray)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing is written off: %v", err)
	})

	It("refuses a deposit that is not a stray, and asks for a reason", func() {
		fails(fmt.Sprintf("error: deposit %s is credited to transfer %s, not a stray: only a stray deposit is written off (a failed transfer's deposit is refunded: kubectl payout refund %s)\n",
			paid.Name, t.Name, t.Name), "stray", "write-off", paid.Name, "--reason", "mine now")
		_, err := sweepOf(paid)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		res := kubectlPayout("stray", "write-off", stray.Name)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(HavePrefix("error: --reason is required"))
		fails("error: deposit base-00 does not exist (kubectl get deposits -A lists them)\n", "stray", "write-off", "base-00", "--reason", "x")
	})
})
