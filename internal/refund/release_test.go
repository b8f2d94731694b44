package refund

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestRevertedTransactionsAreListed: a transaction that reverted at depth is listed in
// revertedTxs when the refund goes back to Pending (the one backward move the schema allows),
// and a refund whose list is full signs no more.
func TestRevertedTransactionsAreListed(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	broadcast := payoutv1.RefundStatus{State: payoutv1.RefundBroadcast, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: wallet,
		Amount: "5", TxHash: "0xbb", SignedTx: "0x01", Nonce: nonce(3), RevertedTxs: []string{"0xaa"}}
	atDepth := Receipt{Found: true, Reverted: true, Block: 10, Confirmations: 3, Required: 3}
	st := Observed(broadcast, atDepth, now)
	if st.State != payoutv1.RefundPending || strings.Join(st.RevertedTxs, ",") != "0xaa,0xbb" || st.TxHash != "" {
		t.Fatalf("after a revert: %+v", st)
	}
	if strings.Join(broadcast.RevertedTxs, ",") != "0xaa" {
		t.Fatalf("the observed status was changed in place: %+v", broadcast.RevertedTxs)
	}
	full := broadcast
	full.RevertedTxs = make([]string, payoutv1.MaxRevertedTxs)
	if st := Observed(full, atDepth, now); st.State != payoutv1.RefundBroadcast || st.TxHash != "0xbb" || !strings.Contains(st.Message, "an operator must look") {
		t.Fatalf("a refund reverted %d times: %+v", payoutv1.MaxRevertedTxs, st)
	}
}

func TestUnprovenRevert(t *testing.T) {
	cases := []struct {
		name string
		r    Receipt
		want string
	}{
		{"reverted at depth", Receipt{Found: true, Reverted: true, Block: 9, Confirmations: 3, Required: 3}, ""},
		{"not on chain", Receipt{}, "is not on chain"},
		{"succeeded", Receipt{Found: true, Block: 9, Confirmations: 3, Required: 3}, "succeeded in block 9"},
		{"reverted, not at depth", Receipt{Found: true, Reverted: true, Block: 9, Confirmations: 1, Required: 3}, "has 1 of 3 confirmations"},
	}
	for _, tc := range cases {
		got := UnprovenRevert("0xaa", tc.r)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	st := RevertUnproven(payoutv1.RefundStatus{State: payoutv1.RefundPending}, "transaction 0xaa, listed as reverted, succeeded in block 9")
	if st.State != payoutv1.RefundPending || !strings.Contains(st.Message, "nothing is signed") {
		t.Fatalf("%+v", st)
	}
}

// TestRelease: a deleted Refund goes only when its deletion cannot make money go out twice.
func TestRelease(t *testing.T) {
	id := "0123456789abcdef01234567"
	ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0x5a", LogIndex: 1}
	deposit := refundOf(id)
	stray := refundOf(payoutv1.StrayRefundName(id, ref))
	stray.Spec.Deposit = &ref
	at := func(rf *payoutv1.Refund, state payoutv1.RefundState) *payoutv1.Refund {
		c := rf.DeepCopy()
		c.Status.State, c.Status.TxHash = state, "0xfe"
		return c
	}
	failed := testgen.Transfer("payout-acme", id, testgen.Failed(payoutv1.FailureDepositShort, "short"))
	refunded := failed.DeepCopy()
	refunded.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xFE"}
	strayRecorded := failed.DeepCopy()
	strayRecorded.Status.StrayDeposits = []payoutv1.StrayDeposit{{TxHash: "0x5a", LogIndex: 1, Token: payoutv1.TokenUSDC, Amount: "5", Reason: "stray",
		Refund: &payoutv1.StrayRefundFacts{Name: stray.Name, TxHash: "0xfe", ConfirmedAt: metav1.Now()}}}
	orphan := at(stray, payoutv1.RefundConfirmed)
	orphan.Namespace = payoutv1.OrphanNamespace

	cases := []struct {
		name string
		rf   *payoutv1.Refund
		t    *payoutv1.Transfer
		ok   bool
		why  string
	}{
		{"new", deposit, failed, true, "nothing was sent"},
		{"pending", at(deposit, payoutv1.RefundPending), failed, true, "nothing was sent"},
		{"held", at(deposit, payoutv1.RefundHeld), failed, true, "nothing was sent"},
		{"refused", at(deposit, payoutv1.RefundRefused), failed, true, "nothing was sent"},
		{"signed", at(deposit, payoutv1.RefundSigned), failed, false, "may be on its way"},
		{"broadcast", at(deposit, payoutv1.RefundBroadcast), nil, false, "may be on its way"},
		{"confirmed, not recorded", at(deposit, payoutv1.RefundConfirmed), failed, false, "does not record it yet"},
		{"confirmed and recorded", at(deposit, payoutv1.RefundConfirmed), refunded, true, "its transfer records it"},
		{"a stray's, not recorded", at(stray, payoutv1.RefundConfirmed), refunded, false, "does not record it yet"},
		{"a stray's, recorded", at(stray, payoutv1.RefundConfirmed), strayRecorded, true, "its transfer records it"},
		{"confirmed, the transfer gone", at(deposit, payoutv1.RefundConfirmed), nil, true, "its transfer is gone"},
		{"confirmed, of a deleted account's deposit", orphan, nil, false, "the only record"},
	}
	for _, tc := range cases {
		ok, why := Release(tc.rf, tc.t)
		if ok != tc.ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %v %q, want %v %q", tc.name, ok, why, tc.ok, tc.why)
		}
	}
}

// TestAdmitOrphan: a refund in OrphanNamespace needs no transfer: it refunds a deposit recorded
// there after its account was deleted, whole, to its sender; elsewhere a missing transfer is
// still refused.
func TestAdmitOrphan(t *testing.T) {
	id := "0123456789abcdef01234567"
	ref := payoutv1.DepositRef{Network: payoutv1.NetworkPolygon, TxHash: "0x5a", LogIndex: 1}
	dep := payoutv1.Deposit{Spec: payoutv1.DepositSpec{Transfer: id, Network: ref.Network, Token: payoutv1.TokenUSDC, From: testgen.Deposit().From,
		Amount: "7000000", TxHash: ref.TxHash, LogIndex: ref.LogIndex}}
	rf := refundOf(payoutv1.StrayRefundName(id, ref))
	rf.Namespace, rf.Spec.Transfer, rf.Spec.Deposit = payoutv1.OrphanNamespace, id, &ref
	st := Admit(rf, nil, transfer.OrphanOwed(id, []payoutv1.Deposit{dep}), twoNetworks{}, nil)
	if st.State != payoutv1.RefundPending || st.Network != payoutv1.NetworkPolygon || st.Amount != "7000000" || st.To != testgen.Deposit().From {
		t.Fatalf("%+v", st)
	}
	elsewhere := rf.DeepCopy()
	elsewhere.Namespace = "payout-acme"
	if st := Admit(elsewhere, nil, nil, twoNetworks{}, nil); st.State != payoutv1.RefundRefused || !strings.Contains(st.Message, "does not exist") {
		t.Fatalf("%+v", st)
	}
}
