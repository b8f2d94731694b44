package ledger

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestFactsOf: the objects as stored become facts that balance: a deposit credited in two parts
// with the excess of the second, a stray whose refund both its Refund and the transfer's status
// record (counted once), an archived copy of a live transfer (the live one counts), a v2 deposit
// to the platform address, and a v2 transfer whose hash was released (not its money).
func TestFactsOf(t *testing.T) {
	at := metav1.NewTime(day(2))
	dep := func(tr *payoutv1.Transfer, tx string, units string) payoutv1.Deposit {
		return payoutv1.Deposit{ObjectMeta: metav1.ObjectMeta{Namespace: tr.Namespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0)},
			Spec: payoutv1.DepositSpec{Transfer: tr.Name, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: tr.Spec.DepositAddress,
				Amount: units, TxHash: tx, BlockTime: at}}
	}
	v1 := testgen.Transfer("payout-acme", "aaaaaaaaaaaaaaaaaaaaaaaa")
	v1.Status = payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted,
		Deposit: &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0xP1", Amount: "25000000",
			SeenAt: at, ConfirmedAt: &at, Parts: []payoutv1.DepositPart{{TxHash: "0xP1", Amount: "10000000"}, {TxHash: "0xP2", Amount: "15000000"}}},
		Payout: &payoutv1.PayoutFacts{Reference: v1.Name, State: payoutv1.PayoutCompleted, RequestedAt: at, TargetAmount: "21.56"},
		StrayDeposits: []payoutv1.StrayDeposit{
			{TxHash: "0xP2", Token: payoutv1.TokenUSDC, Amount: "1000000", Reason: "the excess"},
			{TxHash: "0xS1", Token: payoutv1.TokenUSDC, Amount: "3000000", Reason: "another wallet",
				Refund: &payoutv1.StrayRefundFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0xR1", ConfirmedAt: at}},
		},
	}
	archived := v1.DeepCopy()
	archived.Status.Payout = nil
	strayName := payoutv1.StrayRefundName(v1.Name, payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0xS1"})
	refund := payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: v1.Namespace, Name: strayName},
		Spec:   payoutv1.RefundSpec{Transfer: v1.Name, Deposit: &payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0xs1"}},
		Status: payoutv1.RefundStatus{State: payoutv1.RefundConfirmed, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Amount: "3000000", ConfirmedAt: &at}}

	v2 := testgen.Transfer("payout-acme", "bbbbbbbbbbbbbbbbbbbbbbbb", testgen.V2())
	v2.Status.Deposit = &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0xV2", Amount: "25000000",
		SeenAt: at, ConfirmedAt: &at, BlockTime: &at}
	released := testgen.Transfer("payout-acme", "cccccccccccccccccccccccc", testgen.V2())
	released.Status.Deposit = v2.Status.Deposit.DeepCopy()
	released.Status.Deposit.TxHash = "0xV3"
	released.Status.TxMatch = &payoutv1.TxMatch{RecordedAt: at, ReleasedAt: &at}

	f := FactsOf(Objects{
		Transfers: []payoutv1.Transfer{*v1, *v2, *released, *archived},
		Deposits:  []payoutv1.Deposit{dep(v1, "0xP1", "10000000"), dep(v1, "0xP2", "16000000"), dep(v1, "0xS1", "3000000"), dep(v1, "0xP2", "16000000")},
		Refunds:   []payoutv1.Refund{refund},
	})
	r := Build(f, day(1), day(30))
	if !r.Balanced() {
		t.Fatalf("failures: %+v", r.Failures)
	}
	want := TokenLine{Network: "base", Token: "usdc", Opening: n(0), Received: n(29_000_000), Credited: n(25_000_000), Overpaid: n(1_000_000),
		Stray: n(3_000_000), Swept: n(0), Closing: n(29_000_000), Refunded: n(3_000_000), Direct: n(25_000_000)}
	if len(r.Tokens) != 1 || !reflect.DeepEqual(r.Tokens[0], want) {
		t.Errorf("lines %+v, want %+v", r.Tokens, want)
	}
	if len(f.Payouts) != 1 || len(f.Refunds) != 1 {
		t.Errorf("payouts %+v refunds %+v: want the live transfer's one payout and the stray's one refund", f.Payouts, f.Refunds)
	}
	if len(r.Fiat) != 1 || r.Fiat[0].Payouts != 1 || r.Fiat[0].Paid.String() != "21.56" || r.Fiat[0].Quoted.String() != "21.56" {
		t.Errorf("fiat %+v", r.Fiat)
	}
}
