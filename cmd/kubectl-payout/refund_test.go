package main_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var _ = Describe("refund", func() {
	var account string
	BeforeEach(func() { account = newAccount("refund") })

	DescribeTable("refuses a transfer that is not failed with its deposit arrived, and changes nothing",
		func(status payoutv1.TransferStatus, why string) {
			t := storeTransfer(account, status)
			fails("error: transfer "+t.Name+" "+why+"\n", "refund", t.Name)
			after := getTransfer(t)
			Expect(after.ResourceVersion).To(Equal(t.ResourceVersion))
			Expect(after.Spec.RefundRequested).To(BeFalse())
		},
		Entry("no status yet", payoutv1.TransferStatus{},
			"has no status yet: only a failed transfer whose deposit arrived can be refunded"),
		Entry("processing with its deposit", payoutv1.TransferStatus{Phase: payoutv1.PhaseProcessing, Deposit: arrivedDeposit()},
			"is processing: only a failed transfer whose deposit arrived can be refunded"),
		Entry("completed", payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted, Deposit: arrivedDeposit()},
			"is completed: only a failed transfer whose deposit arrived can be refunded"),
		Entry("failed before its deposit", payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed, Error: "quote expired"},
			"failed before its deposit arrived: there is nothing to send back"),
	)

	It("requests the refund of a failed transfer whose deposit arrived, once", func() {
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed, Error: "payout rejected", Deposit: arrivedDeposit()})

		Expect(succeeds("refund", t.Name)).To(Equal("Requested the refund of transfer " + t.Name + ` of account "` + account + `"` + "\n"))
		requested := getTransfer(t)
		Expect(requested.Spec.RefundRequested).To(BeTrue())
		Expect(requested.Status.Phase).To(Equal(payoutv1.PhaseFailed), "the controller, not the plugin, moves the status")

		fails("error: a refund of transfer "+t.Name+" is already requested; it is sent once\n", "refund", t.Name)
		Expect(getTransfer(t).ResourceVersion).To(Equal(requested.ResourceVersion))
	})

	It("refuses a transfer that is already refunded", func() {
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseRefunded, Deposit: arrivedDeposit(),
			RefundTxHash: "0x" + strings.Repeat("cd", 32)})
		fails("error: transfer "+t.Name+" is already refunded (transaction "+t.Status.RefundTxHash+")\n", "refund", t.Name)
		Expect(getTransfer(t).ResourceVersion).To(Equal(t.ResourceVersion))
	})

	It("refuses an unknown or malformed transfer id", func() {
		fails("error: transfer 0000000000000000deadbeef does not exist\n", "refund", "0000000000000000deadbeef")
		fails("error: invalid transfer id \"T-42\": a transfer id is 24 lower-case hex digits\n", "refund", "T-42")
	})
})
