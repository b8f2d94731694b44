package main_test

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/text"
	"github.com/stablepay/payout-operator/test/testgen"
)

// recordEvent stores an event about t, as the transfer controller's recorder would.
func recordEvent(t *payoutv1.Transfer, name string, at time.Time, typ, reason, note string) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: name},
		Regarding: corev1.ObjectReference{APIVersion: payoutv1.GroupVersion.String(), Kind: "Transfer",
			Namespace: t.Namespace, Name: t.Name, UID: t.UID},
		EventTime: metav1.NewMicroTime(at), Type: typ, Reason: reason, Action: "Transition", Note: note,
		ReportingController: "transfer", ReportingInstance: "transfer-test",
	})).To(Succeed())
}

var _ = Describe("describe transfer", func() {
	It("shows the transfer, its history and only its own events", func() {
		succeeds("account", "create", "describe-literal")
		minute := func(n int) metav1.Time { return metav1.NewTime(testgen.Epoch.Add(time.Duration(n) * time.Minute)) }
		t := storeTransfer("describe-literal", payoutv1.TransferStatus{
			Phase: payoutv1.PhaseFailed, Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected by the bank"), Deposit: arrivedDeposit(),
			History: []payoutv1.StatusChange{
				{Status: payoutv1.PhaseReadyToProcess, At: minute(0), Reason: "Created", Message: "waiting for the deposit"},
				{Status: payoutv1.PhaseFailed, At: minute(3), Reason: "PayoutRejected", Message: "payout rejected by the bank"},
			},
		}, named("00000000000000000000d001"))
		other := storeTransfer("describe-literal", payoutv1.TransferStatus{})
		recordEvent(t, t.Name+".2", minute(3).Time, "Warning", "PayoutRejected", "failed: payout rejected by the bank")
		recordEvent(t, t.Name+".1", minute(0).Time, "Normal", "Created", "ready_to_process: waiting for the deposit")
		recordEvent(other, other.Name+".1", minute(1).Time, "Normal", "Created", "not about the described transfer")

		Expect(succeeds("describe", "transfer", t.Name)).To(Equal(`Transfer:        00000000000000000000d001
Account:         describe-literal (namespace payout-describe-literal)
Created:         ` + t.CreationTimestamp.UTC().Format(time.RFC3339) + `
Method:          v1
Amount:          25.00 USD in usdc on base
Recipient:       123456789 Jane Doe (EUR iban, DE)
Quote:           5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d: 25.00 USD -> 21.56 EUR at 0.88022588, transfer fee 0.50, service fee 0%
Pays:            21.56 EUR for 25.00 USD
Wallet:          0x8ba1f109551bD432803012645Ac136ddd64DBA72
Deposit address: 0x71C7656EC7ab88b098defB751B7401B5f6d8976F
Customer:        7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d payer@example.com
Status:          failed
Error:           PayoutRejected: payout rejected by the bank (2026-11-22T12:00:00Z)
Deposit:         25 usdc on base in 0xabababababababababababababababababababababababababababababababab from 0x8ba1f109551bd432803012645ac136ddd64dba72 (block 1234, 3 confirmations), seen 2026-11-22T12:01:00Z, at depth 2026-11-22T12:01:00Z
Payout:          <none>
Refund:          <none>
History:
  2026-11-22T12:00:00Z  ready_to_process  Created         waiting for the deposit
  2026-11-22T12:03:00Z  failed            PayoutRejected  payout rejected by the bank
Events:
  TIME                  TYPE     REASON          FROM      MESSAGE
  2026-11-22T12:00:00Z  Normal   Created         transfer  ready_to_process: waiting for the deposit
  2026-11-22T12:03:00Z  Warning  PayoutRejected  transfer  failed: payout rejected by the bank
`))
	})

	It("shows control and bidi formatting characters of stored text as escapes, never as they are (issue 25 item 10)", func() {
		// stored by a release before the facade refused them, or written with kubectl directly
		account := newAccount("describe-escapes")
		t := storeTransfer(account, payoutv1.TransferStatus{
			Phase: payoutv1.PhaseFailed, Failure: failure(payoutv1.FailurePayoutRejected, "rejected\x1b[2K"),
			History: []payoutv1.StatusChange{{Status: payoutv1.PhaseFailed, At: testgen.Epoch, Reason: "PayoutRejected", Message: "bank said\nStatus: completed"}},
		}, func(t *payoutv1.Transfer) {
			t.Spec.Recipient.AccountHolderName = "Ann\x1b]0;pwned\x07 \u202eeoD"
			t.Spec.CustomerEmail = "payer\u2066@example.com"
		})
		recordEvent(t, t.Name+".1", testgen.Epoch.Time, "Warning", "PayoutRejected", "failed: \x1b[31mred\u200f")

		out := succeeds("describe", "transfer", t.Name)
		Expect(out).To(ContainSubstring("Recipient:       123456789 Ann\\u001b]0;pwned\\u0007 \\u202eeoD (EUR iban, DE)\n"))
		Expect(out).To(ContainSubstring(" payer\\u2066@example.com\n"))
		Expect(out).To(ContainSubstring("Error:           PayoutRejected: rejected\\u001b[2K (2026-11-22T12:00:00Z)\n"))
		Expect(out).To(ContainSubstring("bank said\\u000aStatus: completed\n"))
		Expect(out).To(ContainSubstring("failed: \\u001b[31mred\\u200f\n"))
		_, unsafe := text.Unsafe(strings.ReplaceAll(out, "\n", ""))
		Expect(unsafe).To(BeFalse(), "only line ends and no other control reach the terminal:\n%q", out)
	})

	It("refuses a transfer that does not exist", func() {
		fails("error: transfer 0000000000000000deadbeef does not exist\n", "describe", "transfer", "0000000000000000deadbeef")
	})
})

var _ = Describe("describe transfer -o json|yaml", func() {
	It("prints the transfer and its events as resources", func() {
		account := newAccount("describe-json")
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed,
			Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected by the bank"), Deposit: arrivedDeposit(),
			History: []payoutv1.StatusChange{{Status: payoutv1.PhaseFailed, At: testgen.Epoch, Reason: "PayoutRejected"}}})
		recordEvent(t, t.Name+".1", testgen.Epoch.Time, "Warning", "PayoutRejected", "failed: payout rejected by the bank")

		var d struct {
			Transfer payoutv1.Transfer `json:"transfer"`
			Events   []eventsv1.Event  `json:"events"`
		}
		Expect(json.Unmarshal([]byte(succeeds("describe", "transfer", t.Name, "-o", "json")), &d)).To(Succeed())
		Expect(d.Transfer.Kind).To(Equal("Transfer"))
		Expect(d.Transfer.Name).To(Equal(t.Name))
		Expect(d.Transfer.Status.History).To(HaveLen(1))
		Expect(d.Events).To(HaveLen(1))
		Expect(d.Events[0].Kind).To(Equal("Event"))
		Expect(d.Events[0].APIVersion).To(Equal("events.k8s.io/v1"))
		Expect(d.Events[0].Reason).To(Equal("PayoutRejected"))

		out := succeeds("describe", "transfer", t.Name, "-o", "yaml")
		Expect(out).To(HavePrefix("events:\n- action: Transition\n"))
		Expect(out).To(ContainSubstring("\ntransfer:\n  apiVersion: payout.stablepay.dev/v1alpha1\n"))
	})

	It("has no wide form", func() {
		fails("error: --output \"wide\" is not one of json, yaml\nRun 'kubectl payout describe transfer --help' for usage.\n",
			"describe", "transfer", "0000000000000000deadbeef", "-o", "wide")
	})
})
