package main_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var _ = Describe("refund", func() {
	var account string
	BeforeEach(func() { account = newAccount("refund") })

	noRefund := func(t *payoutv1.Transfer) {
		GinkgoHelper()
		err := k8s.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Refund{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Refund object may exist: %v", err)
	}

	DescribeTable("refuses a transfer that is not failed with its deposit arrived, and changes nothing",
		func(status payoutv1.TransferStatus, why string) {
			t := storeTransfer(account, status)
			fails("error: transfer "+t.Name+" "+why+"\n", "refund", t.Name)
			after := getTransfer(t)
			Expect(after.ResourceVersion).To(Equal(t.ResourceVersion))
			noRefund(t)
		},
		Entry("a fresh v1 transfer, its status unwritten (the schema's default phase)", payoutv1.TransferStatus{},
			"is ready_to_process: only a failed transfer whose deposit arrived can be refunded"),
		Entry("processing with its deposit", payoutv1.TransferStatus{Phase: payoutv1.PhaseProcessing, Deposit: arrivedDeposit()},
			"is processing: only a failed transfer whose deposit arrived can be refunded"),
		Entry("completed", payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted, Deposit: arrivedDeposit()},
			"is completed: only a failed transfer whose deposit arrived can be refunded"),
		Entry("failed before its deposit", payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed, Failure: failure(payoutv1.FailureExpired, "no deposit")},
			"failed before its deposit arrived: there is nothing to send back"),
	)

	It("requests the refund of a failed transfer whose deposit arrived, once", func() {
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed,
			Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected"), Deposit: arrivedDeposit()})

		Expect(succeeds("refund", t.Name)).To(Equal("Requested the refund of transfer " + t.Name + ` of account "` + account + `"` + "\n"))
		after := getTransfer(t)
		Expect(after.ResourceVersion).To(Equal(t.ResourceVersion), "the plugin records a request; the controllers move the transfer")
		rf := &payoutv1.Refund{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), rf)).To(Succeed())
		Expect(rf.Spec.Transfer).To(Equal(t.Name))
		// the audit record is the Kubernetes identity of the kubeconfig, as the API server knows it
		review := &authenticationv1.SelfSubjectReview{}
		Expect(k8s.Create(ctx, review)).To(Succeed())
		Expect(review.Status.UserInfo.Username).NotTo(BeEmpty())
		Expect(rf.Spec.RequestedBy).To(Equal(review.Status.UserInfo.Username))

		fails("error: a refund of transfer "+t.Name+" is already requested; it is sent once (see kubectl get refund -n "+t.Namespace+" "+t.Name+")\n", "refund", t.Name)
		again := &payoutv1.Refund{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), again)).To(Succeed())
		Expect(again.ResourceVersion).To(Equal(rf.ResourceVersion))
	})

	It("refuses a transfer that is already refunded", func() {
		tx := "0x" + strings.Repeat("cd", 32)
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseRefunded, Deposit: arrivedDeposit(),
			Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected"),
			Refund:  &payoutv1.RefundFacts{TxHash: tx, ConfirmedAt: arrivedDeposit().SeenAt}})
		fails("error: transfer "+t.Name+" is already refunded (transaction "+tx+")\n", "refund", t.Name)
		Expect(getTransfer(t).ResourceVersion).To(Equal(t.ResourceVersion))
	})

	It("refuses an unknown or malformed transfer id", func() {
		fails("error: transfer 0000000000000000deadbeef does not exist\n", "refund", "0000000000000000deadbeef")
		fails("error: invalid transfer id \"T-42\": a transfer id is 24 lower-case hex digits\n", "refund", "T-42")
	})
})
