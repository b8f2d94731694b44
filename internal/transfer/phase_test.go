package transfer

import (
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestEndPhase holds the phases of ended transfers to Ended: for every combination of the facts
// Phase reads (a refund is recorded only on a transfer that failed or whose payout completed:
// recordRefunds), the phase is an end phase exactly when the transfer has ended.
func TestEndPhase(t *testing.T) {
	payouts := []*payoutv1.PayoutFacts{nil}
	for _, s := range []payoutv1.PayoutState{payoutv1.PayoutRequested, payoutv1.PayoutAccepted, payoutv1.PayoutCompleted, payoutv1.PayoutRejected} {
		payouts = append(payouts, &payoutv1.PayoutFacts{State: s})
	}
	for _, method := range []payoutv1.TransferMethod{payoutv1.TransferV1, payoutv1.TransferV2} {
		for _, payout := range payouts {
			for _, failed := range []bool{false, true} {
				for _, deposited := range []bool{false, true} {
					for _, refunded := range []bool{false, true} {
						tr := testgen.Transfer("payout-acme", "0123456789abcdef01234567")
						tr.Spec.Method, tr.Status.Payout = method, payout
						if failed {
							testgen.Failed(payoutv1.FailurePayoutRejected, "rejected")(tr)
						}
						if deposited {
							tr.Status.Deposit = testgen.Deposit()
						}
						if refunded {
							if !failed && (payout == nil || payout.State != payoutv1.PayoutCompleted) {
								continue
							}
							tr.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x01"}
						}
						if phase := Phase(tr); Ended(tr) != EndPhase(phase) {
							t.Errorf("%s transfer, payout %+v, failed %v, deposited %v, refunded %v: phase %s, ended %v",
								method, payout, failed, deposited, refunded, phase, Ended(tr))
						}
					}
				}
			}
		}
	}
}
