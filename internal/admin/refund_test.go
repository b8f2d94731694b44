package admin

import (
	"errors"
	"strings"
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/testgen"
)

func TestCheckRefundable(t *testing.T) {
	const id = "0123456789abcdef01234567"
	deposit := &payoutv1.ObservedDeposit{TxHash: "0xabc", Amount: "25000000", Token: payoutv1.TokenUSDC, DetectedAt: testgen.Epoch}
	transfer := func(phase payoutv1.TransferPhase, dep *payoutv1.ObservedDeposit, requested bool) *payoutv1.Transfer {
		return testgen.Transfer("payout-acme", id, func(t *payoutv1.Transfer) {
			t.Status.Phase, t.Status.Deposit, t.Spec.RefundRequested = phase, dep, requested
		})
	}
	cases := []struct {
		name      string
		transfer  *payoutv1.Transfer
		wantKind  error // nil: refundable
		wantInMsg string
	}{
		{"failed with deposit", transfer(payoutv1.PhaseFailed, deposit, false), nil, ""},
		{"failed before the deposit", transfer(payoutv1.PhaseFailed, nil, false), ErrNotRefundable, "failed before its deposit arrived"},
		{"completed", transfer(payoutv1.PhaseCompleted, deposit, false), ErrNotRefundable, "is completed"},
		{"processing", transfer(payoutv1.PhaseProcessing, deposit, false), ErrNotRefundable, "is processing"},
		{"no status yet", transfer("", nil, false), ErrNotRefundable, "has no status yet"},
		{"already requested", transfer(payoutv1.PhaseFailed, deposit, true), ErrRefundAlreadyRequested, "already requested"},
		{"refunded", transfer(payoutv1.PhaseRefunded, deposit, true), ErrRefundAlreadyRequested, "already refunded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRefundable(c.transfer)
			if c.wantKind == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, c.wantKind) || !strings.Contains(err.Error(), c.wantInMsg) || !strings.Contains(err.Error(), id) {
				t.Fatalf("got %v; want %v saying %q about %s", err, c.wantKind, c.wantInMsg, id)
			}
		})
	}
}
