package describe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

func ptr(t metav1.Time) *metav1.Time { return &t }

func at(minutes int) metav1.Time {
	return metav1.NewTime(testgen.Epoch.Add(time.Duration(minutes) * time.Minute))
}

// failedTransfer has every section filled: a failed payout whose deposit arrived, mailed.
func failedTransfer() payoutv1.Transfer {
	return *testgen.Transfer("payout-acme", "0123456789abcdef01234567", func(t *payoutv1.Transfer) {
		t.CreationTimestamp = at(0)
		rejected := at(3)
		t.Status = payoutv1.TransferStatus{
			Phase:   payoutv1.PhaseFailed,
			Failure: &payoutv1.TransferFailure{Reason: payoutv1.FailurePayoutRejected, Message: "payout rejected by the bank", At: at(3)},
			Deposit: testgen.Deposit(),
			Payout: &payoutv1.PayoutFacts{Reference: "0123456789abcdef01234567", Provider: "simbank", ProviderID: "po_42",
				State: payoutv1.PayoutRejected, RequestedAt: at(2), UpdatedAt: &rejected, Message: "account closed"},
			Notifications: []payoutv1.NotificationRecord{{Kind: payoutv1.NotificationFailed, State: payoutv1.NotificationSent, To: "payer@example.com", SentAt: ptr(at(3))}},
			History: []payoutv1.StatusChange{
				{Status: payoutv1.PhaseReadyToProcess, At: at(0), Reason: "Created", Message: "waiting for the deposit"},
				{Status: payoutv1.PhaseProcessing, At: at(1), Reason: "DepositConfirmed", Message: "25 usdc arrived"},
				{Status: payoutv1.PhaseFailed, At: at(3), Reason: "PayoutRejected", Message: "payout rejected by the bank"},
			},
		}
	})
}

func TestDescribeFailedTransfer(t *testing.T) {
	d := TransferDescription{
		Transfer: failedTransfer(),
		Events: []eventsv1.Event{
			{EventTime: metav1.NewMicroTime(at(0).Time), Type: "Normal", Reason: "Created", ReportingController: "transfer",
				Note: "ready_to_process: waiting for the deposit"},
			{DeprecatedLastTimestamp: at(3), DeprecatedCount: 2, Type: "Warning", Reason: "PayoutRejected",
				Note: "failed: payout rejected by the bank"},
		},
	}
	want := `Transfer:        0123456789abcdef01234567
Account:         acme (namespace payout-acme)
Created:         2026-11-22T12:00:00Z
Method:          v1
Amount:          25.00 USD in usdc on base
Recipient:       123456789 Jane Doe (EUR iban, DE)
Quote:           5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d: 25.00 USD -> 21.56 EUR at 0.88022588, transfer fee 0.50, service fee 0%
Pays:            21.56 EUR for 25.00 USD
Wallet:          0x8ba1f109551bD432803012645Ac136ddd64DBA72
Deposit address: 0x71C7656EC7ab88b098defB751B7401B5f6d8976F
Customer:        7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d payer@example.com
Status:          failed
Error:           PayoutRejected: payout rejected by the bank (2026-11-22T12:03:00Z)
Deposit:         25 usdc on base in 0xabababababababababababababababababababababababababababababababab from 0x8ba1f109551bd432803012645ac136ddd64dba72 (block 1234, 3 confirmations), seen 2026-11-22T12:01:00Z, at depth 2026-11-22T12:01:00Z
Payout:          simbank, reference 0123456789abcdef01234567, Rejected, id po_42: account closed, requested 2026-11-22T12:02:00Z
Refund:          <none>
Mailed:          Failed to payer@example.com at 2026-11-22T12:03:00Z
History:
  2026-11-22T12:00:00Z  ready_to_process  Created           waiting for the deposit
  2026-11-22T12:01:00Z  processing        DepositConfirmed  25 usdc arrived
  2026-11-22T12:03:00Z  failed            PayoutRejected    payout rejected by the bank
Events:
  TIME                  TYPE     REASON          FROM      MESSAGE
  2026-11-22T12:00:00Z  Normal   Created         transfer  ready_to_process: waiting for the deposit
  2026-11-22T12:03:00Z  Warning  PayoutRejected  <none>    failed: payout rejected by the bank (x2)
`
	if got := d.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestDescribeNewTransfer(t *testing.T) {
	tr := *testgen.Transfer("payout-acme", "0123456789abcdef01234567", testgen.V2(), func(t *payoutv1.Transfer) {
		t.Spec.WalletAddress = ""
		fixed := payoutv1.Decimal("0.99")
		t.Spec.Quote.ServiceFeePercent, t.Spec.Quote.ServiceFeeFixed = "1.5", &fixed
		// 25.00 - 0.38 service fee - 0.50 transfer fee = 24.12, × 0.88022588 = 21.2310...
		t.Spec.Quote.TargetAmount = "21.23"
	})
	want := `Transfer:        0123456789abcdef01234567
Account:         acme (namespace payout-acme)
Created:         <none>
Method:          v2
Amount:          25.00 USD in usdc on base
Recipient:       123456789 Jane Doe (EUR iban, DE)
Quote:           5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d: 25.00 USD -> 21.23 EUR at 0.88022588, transfer fee 0.50, service fee 1.5% + 0.99
Pays:            21.23 EUR for 25.00 USD
Wallet:          <none>
Deposit address: 0x71C7656EC7ab88b098defB751B7401B5f6d8976F
Customer:        7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d payer@example.com
Status:          <none>
Error:           <none>
Deposit:         <none>
Payout:          <none>
Refund:          <none>
History:
  <none>
Events:
  <none>
`
	if got := (TransferDescription{Transfer: tr}).String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestDescribeRefundedTransfer(t *testing.T) {
	tr := failedTransfer()
	tr.Status.Phase = payoutv1.PhaseRefunded
	tr.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x" + strings.Repeat("cd", 32), Amount: "25000000",
		To: "0x8ba1f109551bd432803012645ac136ddd64dba72", ConfirmedAt: at(9)}
	got := TransferDescription{Transfer: tr}.String()
	for _, line := range []string{
		"Status:          refunded\n",
		"Refund:          25 USDC to 0x8ba1f109551bd432803012645ac136ddd64dba72 in 0x" + strings.Repeat("cd", 32) + " on base, confirmed 2026-11-22T12:09:00Z\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
}

// TestDescribeWaitingTransfer: while a v1 transfer waits for the rest of its amount, describe
// shows what its wallet has sent so far; a stranger's deposit is listed as a stray.
func TestDescribeWaitingTransfer(t *testing.T) {
	tr := *testgen.Transfer("payout-acme", "0123456789abcdef01234567", func(t *payoutv1.Transfer) {
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{{Network: payoutv1.NetworkPolygon, TxHash: "0xdd", Token: payoutv1.TokenUSDC, Amount: "1",
			From: "0x1111111111111111111111111111111111111111", Reason: "it was sent on polygon; the transfer takes usdc on base",
			Refund: &payoutv1.StrayRefundFacts{Name: "r", Network: payoutv1.NetworkPolygon, Token: payoutv1.TokenUSDC, TxHash: "0xee", ConfirmedAt: at(9)}}}
	})
	dep := func(from, amount string, block int64) payoutv1.Deposit {
		return payoutv1.Deposit{Spec: payoutv1.DepositSpec{Transfer: tr.Name, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
			From: from, Amount: amount, TxHash: fmt.Sprintf("0x%064x", block), BlockNumber: block, BlockTime: at(1)}}
	}
	d := TransferDescription{Transfer: tr, Deposits: []payoutv1.Deposit{
		dep("0x8ba1f109551bd432803012645ac136ddd64dba72", "10000000", 10),
		dep("0x8ba1f109551bd432803012645ac136ddd64dba72", "2500000", 11),
		dep("0x1111111111111111111111111111111111111111", "5", 12),
	}}
	got := d.String()
	for _, want := range []string{
		"Received:        12.5 of 25 usdc from 0x8ba1f109551bD432803012645Ac136ddd64DBA72 so far\n",
		"Stray deposit:   0.000001 usdc on polygon in 0xdd from 0x1111111111111111111111111111111111111111: it was sent on polygon; the transfer takes usdc on base; refunded in 0xee on polygon 2026-11-22T12:09:00Z\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// TestDescribeCentUnderQuote: spec 4.10 lets the amount be a cent under the quote; describe shows
// what that amount is paid beside what the quote said (issue 22 item 9).
func TestDescribeCentUnderQuote(t *testing.T) {
	tr := failedTransfer()
	tr.Spec.Amount = "24.99"
	got := TransferDescription{Transfer: tr}.String()
	for _, line := range []string{
		"Amount:          24.99 USD in usdc on base\n",
		"Quote:           5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d: 25.00 USD -> 21.56 EUR at 0.88022588, transfer fee 0.50, service fee 0%\n",
		"Pays:            21.55 EUR for 24.99 USD (the quote's 21.56 EUR is for 25.00 USD)\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
}

// TestDescribeReturnedAndLostPayouts: describe shows a completed payout's return window, a
// return by the recipient's bank, and a payout the provider lost (issue 23 item 10).
func TestDescribeReturnedAndLostPayouts(t *testing.T) {
	tr := failedTransfer()
	tr.Status.Phase, tr.Status.Failure = payoutv1.PhaseCompleted, nil
	tr.Status.Payout.State, tr.Status.Payout.Message = payoutv1.PayoutCompleted, ""
	tr.Status.Payout.ReturnWindowEndsAt = ptr(at(60))
	if got := (TransferDescription{Transfer: tr}).String(); !strings.Contains(got, "Return window:   the recipient's bank may return the payout until 2026-11-22T13:00:00Z\n") {
		t.Errorf("no return window in:\n%s", got)
	}
	tr.Status.Payout.Returned = &payoutv1.PayoutReturn{At: at(30), Message: "account closed"}
	tr.Status.Payout.LostAt = ptr(at(20))
	got := TransferDescription{Transfer: tr}.String()
	for _, line := range []string{
		"Payout lost:     the provider does not know it since 2026-11-22T12:20:00Z: nothing is created again; ask the provider's support\n",
		"Payout returned: by the recipient's bank, seen 2026-11-22T12:30:00Z: account closed; the deposit is owed to its sender\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
	if strings.Contains(got, "Return window") {
		t.Errorf("a returned payout's window is over:\n%s", got)
	}
}
