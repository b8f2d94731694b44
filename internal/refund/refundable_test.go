package refund

import (
	"errors"
	"strings"
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

func TestRefundable(t *testing.T) {
	const id = "0123456789abcdef01234567"
	transfer := func(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
		return testgen.Transfer("payout-acme", id, mods...)
	}
	deposited := func(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }
	phase := func(p payoutv1.TransferPhase) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) { t.Status.Phase = p }
	}
	failed := testgen.Failed(payoutv1.FailurePayoutRejected, "rejected by the bank")
	cases := []struct {
		name      string
		transfer  *payoutv1.Transfer
		wantKind  error // nil: refundable
		wantInMsg string
	}{
		{"failed with deposit", transfer(deposited, failed), nil, ""},
		{"failed before the deposit", transfer(failed), ErrNotRefundable, "failed before its deposit arrived"},
		{"failed, deposit not at depth", transfer(deposited, failed, func(t *payoutv1.Transfer) { t.Status.Deposit.ConfirmedAt = nil }), ErrNotRefundable, "failed before its deposit arrived"},
		{"failed, Solana sender", transfer(deposited, failed, func(t *payoutv1.Transfer) {
			t.Status.Deposit.From = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
		}), ErrNotRefundable, "has no address on Base"},
		// a Tron sender's key has an address on Base: its 0x body
		{"failed, Tron sender", transfer(deposited, failed, func(t *payoutv1.Transfer) {
			t.Status.Deposit.Network, t.Status.Deposit.From = payoutv1.NetworkTron, "TBhCfAytTEh52WFL6HYr64i2nmc3u3TCUp"
		}), nil, ""},
		{"completed", transfer(deposited, phase(payoutv1.PhaseCompleted)), ErrNotRefundable, "is completed"},
		{"processing", transfer(deposited, phase(payoutv1.PhaseProcessing)), ErrNotRefundable, "is processing"},
		{"no status yet", transfer(), ErrNotRefundable, "has no status yet"},
		{"refunded", transfer(deposited, failed, func(t *payoutv1.Transfer) {
			t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x" + strings.Repeat("ef", 32), ConfirmedAt: testgen.Epoch}
		}), ErrAlreadyRequested, "already refunded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Refundable(c.transfer)
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
