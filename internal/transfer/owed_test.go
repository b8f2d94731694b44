package transfer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TestRecordedStrayRefundIsOwedNoMore: once the transfer records a stray deposit's refund as
// confirmed, the stray is owed no more, whether or not its Refund object still exists (an
// operator who deletes it and runs `kubectl payout refund` again must not send it twice).
func TestRecordedStrayRefundIsOwedNoMore(t *testing.T) {
	dust := from(stranger, deposit("1", payoutv1.TokenUSDC, 90, 0, at(time.Second)))
	other := from(stranger, deposit("7", payoutv1.TokenUSDC, 91, 2, at(time.Second)))
	deps := []payoutv1.Deposit{good(at(time.Second)), dust, other}
	paid := stored(v1(), Decide(input(v1(), at(time.Minute), withDeposits(deps...))))
	if owed := OwedOf(paid, deps, false); len(owed) != 2 {
		t.Fatalf("a paid transfer owes its two strays: %+v", owed)
	}
	refunded := paid.DeepCopy()
	for i := range refunded.Status.StrayDeposits {
		sd := &refunded.Status.StrayDeposits[i]
		if sd.TxHash == dust.Spec.TxHash {
			sd.Refund = &payoutv1.StrayRefundFacts{Name: payoutv1.StrayRefundName(id, refOf(&dust)), Network: payoutv1.NetworkBase,
				Token: payoutv1.TokenUSDC, TxHash: "0xfeed", ConfirmedAt: metav1.NewTime(at(time.Hour))}
		}
	}
	owed := OwedOf(refunded, deps, false)
	if len(owed) != 1 || owed[0].Deposit.TxHash != other.Spec.TxHash {
		t.Fatalf("only the stray without a recorded refund is owed: %+v", owed)
	}
}

// TestOrphanOwed: a deposit recorded after its transfer's account was deleted is owed whole to
// its sender, once per log, under the name of a stray deposit's refund.
func TestOrphanOwed(t *testing.T) {
	a := deposit("25000000", payoutv1.TokenUSDC, 100, 0, at(time.Second))
	b := from(stranger, on(payoutv1.NetworkPolygon, deposit("3", payoutv1.TokenUSDC, 101, 1, at(time.Second))))
	zero := deposit("0", payoutv1.TokenUSDC, 102, 0, at(time.Second))
	another := deposit("5", payoutv1.TokenUSDC, 103, 0, at(time.Second))
	another.Spec.Transfer = "ffffffffffffffffffffffff"
	owed := OrphanOwed(id, []payoutv1.Deposit{a, b, a, zero, another})
	if len(owed) != 2 {
		t.Fatalf("two logs of the transfer owe something: %+v", owed)
	}
	for i, d := range []payoutv1.Deposit{a, b} {
		o, ref := owed[i], refOf(&d)
		if o.Name != payoutv1.StrayRefundName(id, ref) || *o.Deposit != ref || o.Units != d.Spec.Amount || o.From != d.Spec.From ||
			o.Network != d.Spec.Network || o.Reason != OrphanReason {
			t.Errorf("deposit %d: %+v", i, o)
		}
	}
}
