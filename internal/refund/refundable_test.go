package refund

import (
	"errors"
	"strings"
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The transfer of the refusal tables, and what happened to it.
const id = "0123456789abcdef01234567"

func transferOf(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	return testgen.Transfer("payout-acme", id, mods...)
}

func deposited(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }

var failed = testgen.Failed(payoutv1.FailurePayoutRejected, "rejected by the bank")

// expectRefusal fails t unless err is nil where wantKind is, or else of wantKind, naming the
// transfer and saying wantInMsg.
func expectRefusal(t *testing.T, err, wantKind error, wantInMsg string) {
	t.Helper()
	if wantKind == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !errors.Is(err, wantKind) || !strings.Contains(err.Error(), wantInMsg) || !strings.Contains(err.Error(), id) {
		t.Fatalf("got %v; want %v saying %q about %s", err, wantKind, wantInMsg, id)
	}
}

func TestRefundable(t *testing.T) {
	transfer := transferOf
	phase := func(p payoutv1.TransferPhase) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) { t.Status.Phase = p }
	}
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
			expectRefusal(t, Refundable(c.transfer), c.wantKind, c.wantInMsg)
		})
	}
}

func TestRequestable(t *testing.T) {
	tr := transferOf
	released := func(t *payoutv1.Transfer) {
		testgen.V2()(t)
		t.Spec.TxHash = "0x" + strings.Repeat("ab", 32)
		at := testgen.Epoch
		t.Status.TxMatch = &payoutv1.TxMatch{RecordedAt: at, ReleasedAt: &at}
	}
	strayRefunded := func(t *payoutv1.Transfer) {
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{{TxHash: "0x01", Refund: &payoutv1.StrayRefundFacts{Name: "x"}}}
	}
	deposit := []transfer.Owed{{Name: id}}
	stray := []transfer.Owed{{Name: "stray", Deposit: &payoutv1.DepositRef{TxHash: "0x02"}}}
	cases := []struct {
		name             string
		transfer         *payoutv1.Transfer
		owed, orphanOwed []transfer.Owed
		reclaimable      bool
		wantKind         error // nil: requested
		wantInMsg        string
	}{
		{"its deposit owed", tr(deposited, failed), deposit, nil, false, nil, ""},
		{"a stray owed, the transfer in flight", tr(deposited), stray, nil, false, nil, ""},
		{"only orphans owed", tr(), nil, stray, false, nil, ""},
		{"its deposit owed, a Solana sender", tr(deposited, failed, func(t *payoutv1.Transfer) { t.Status.Deposit.From = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV" }),
			deposit, nil, false, ErrNotRefundable, "has no address on Base"},
		{"its hash released to another transfer", tr(deposited, failed, released), nil, nil, false, ErrNotRefundable, "another transfer holds it now"},
		{"its hash released, reclaimable, nothing owed", tr(failed, released), nil, nil, true, ErrNotRefundable, "failed before its deposit arrived"},
		{"its strays refunded", tr(deposited, strayRefunded), nil, nil, false, ErrAlreadyRequested, "already requested and sent"},
		{"refunded", tr(deposited, failed, func(t *payoutv1.Transfer) { t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x03"} }),
			nil, nil, false, ErrAlreadyRequested, "already refunded"},
		{"failed and refundable, nothing owed", tr(deposited, failed), nil, nil, false, ErrNotRefundable, "owes nothing"},
		{"in flight, nothing owed", tr(deposited), nil, nil, false, ErrNotRefundable, "only a failed transfer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectRefusal(t, Requestable(c.transfer, c.owed, c.orphanOwed, c.reclaimable, nil), c.wantKind, c.wantInMsg)
		})
	}
}
