package recovery_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/recovery"
	"github.com/stablepay/payout-operator/internal/transfer"
)

var (
	hashA = "0x" + strings.Repeat("a1", 32)
	hashB = "0x" + strings.Repeat("b2", 32)
)

// paidV2 is a v2 transfer whose deposit (hash, log 3) is confirmed, and the provider's payout of
// it naming that deposit.
func paidV2(id, hash string) (*payoutv1.Transfer, *fiat.Payout) {
	now := metav1.Now()
	t := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Namespace: "acct-a", Name: id, CreationTimestamp: now},
		Spec: payoutv1.TransferSpec{Method: payoutv1.TransferV2, TxHash: hash, SourceNetwork: payoutv1.NetworkBase},
		Status: payoutv1.TransferStatus{
			Deposit: &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, TxHash: hash, LogIndex: 3, ConfirmedAt: &now},
			Payout:  &payoutv1.PayoutFacts{Reference: id, State: payoutv1.PayoutCompleted},
		}}
	p := &fiat.Payout{ProviderID: "9" + id[:3], Reference: id, State: fiat.StateCompleted, TargetCurrency: "EUR",
		TargetAmount: decimal.RequireFromString("91.20"), SourceOfFunds: transfer.SourceOfFunds(t)}
	return t, p
}

func claimName(kind payoutv1.ClaimKind, key string) string { return payoutv1.ClaimName(kind, key) }

func depositKey(hash string) string {
	return transfer.DepositClaimKey(payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: hash, LogIndex: 3})
}

func kinds(r recovery.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Kind)
	}
	return out
}

func TestCheckAgreesWithAClusterThatKnowsEveryPayout(t *testing.T) {
	tr, p := paidV2("aaa000000000000000000001", hashA)
	in := recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{tr.Name: tr},
		Holders: map[string]string{
			claimName(payoutv1.ClaimDeposit, depositKey(hashA)): "acct-a/" + tr.Name,
			claimName(payoutv1.ClaimTxHash, hashA):              "acct-a/" + tr.Name,
		}}
	r := recovery.Check(in)
	if r.Required() || len(r.Bind) != 0 || len(r.Rehash) != 0 {
		t.Fatalf("a cluster that knows every payout needs nothing: %+v", r)
	}
}

// After a restore, the claims made after the snapshot are gone: the payout's source of funds
// makes them again, for the transfer it paid.
func TestCheckRebindsWhatTheProviderPaid(t *testing.T) {
	tr, p := paidV2("aaa000000000000000000002", hashA)
	r := recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{tr.Name: tr}, Holders: map[string]string{}})
	if got := kinds(r); len(got) != 1 || got[0] != recovery.DepositRebound {
		t.Fatalf("findings: %v", got)
	}
	if len(r.Bind) != 2 {
		t.Fatalf("want the deposit claim and the hash claim, got %+v", r.Bind)
	}
	for _, b := range r.Bind {
		if b.Holder != (payoutv1.ObjectRef{Namespace: "acct-a", Name: tr.Name}) {
			t.Errorf("claim %s %s for %v, want the transfer the provider paid", b.Kind, b.Key, b.Holder)
		}
	}
	if r.Bind[0].Kind != payoutv1.ClaimDeposit || r.Bind[0].Key != depositKey(hashA) || r.Bind[1].Kind != payoutv1.ClaimTxHash || r.Bind[1].Key != hashA {
		t.Errorf("bindings: %+v", r.Bind)
	}
}

// A transfer created and paid after the snapshot is gone with it: its deposit, at the shared
// platform address, must pay nothing else, so it is claimed for the lost transfer (no
// namespace), and the hash too, so the facade refuses it.
func TestCheckClaimsTheDepositOfALostTransfer(t *testing.T) {
	_, p := paidV2("aaa000000000000000000003", hashB)
	r := recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{}, Holders: map[string]string{}})
	if got := kinds(r); len(got) != 2 || got[0] != recovery.LostTransfer || got[1] != recovery.DepositRebound {
		t.Fatalf("findings: %v", got)
	}
	if !r.Required() {
		t.Fatal("a lost transfer needs an operator")
	}
	for _, b := range r.Bind {
		if b.Holder != (payoutv1.ObjectRef{Name: p.Reference}) || b.ProviderID != p.ProviderID {
			t.Errorf("claim %s for %+v", b.Key, b)
		}
	}
	// an archived transfer is not lost: the archive holds its hash
	r = recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}, Archived: map[string]bool{p.Reference: true}})
	if r.Required() || len(r.Bind) != 0 {
		t.Fatalf("an archived transfer: %+v", r)
	}
}

func TestCheckSetsARestoredV2TransfersHashAgain(t *testing.T) {
	tr, p := paidV2("aaa000000000000000000004", hashA)
	tr.Spec.TxHash, tr.Status.Deposit, tr.Status.Payout = "", nil, nil // restored from before its confirmation
	r := recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{tr.Name: tr}, Holders: map[string]string{}})
	want := []string{recovery.PayoutUnrecorded, recovery.HashRestored, recovery.DepositRebound}
	if got := kinds(r); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("findings %v, want %v", got, want)
	}
	if len(r.Rehash) != 1 || r.Rehash[0].TxHash != hashA || r.Rehash[0].Transfer.Name != tr.Name {
		t.Fatalf("rehash: %+v", r.Rehash)
	}
}

// A deposit another transfer holds is not taken from it: the operator looks at both.
func TestCheckReportsADepositAnotherTransferHolds(t *testing.T) {
	tr, p := paidV2("aaa000000000000000000005", hashA)
	in := recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{tr.Name: tr},
		Holders: map[string]string{claimName(payoutv1.ClaimDeposit, depositKey(hashA)): "acct-b/bbb000000000000000000001"}}
	r := recovery.Check(in)
	if got := kinds(r); len(got) != 1 || got[0] != recovery.DepositConflict {
		t.Fatalf("findings: %v", got)
	}
	for _, b := range r.Bind {
		if b.Kind == payoutv1.ClaimDeposit {
			t.Fatalf("the held deposit is claimed again: %+v", b)
		}
	}
}

func TestCheckIgnoresRejectedPayoutsAndV1Deposits(t *testing.T) {
	tr, p := paidV2("aaa000000000000000000006", hashA)
	p.State = fiat.StateRejected
	if r := recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}}); r.Required() {
		t.Fatalf("a rejected payout moved no money: %+v", r)
	}
	tr.Spec.Method = payoutv1.TransferV1
	p.State = fiat.StateAccepted
	if r := recovery.Check(recovery.Input{Payouts: []*fiat.Payout{p}, Transfers: map[string]*payoutv1.Transfer{tr.Name: tr}}); r.Required() || len(r.Bind) != 0 {
		t.Fatalf("a v1 transfer's address is its own: %+v", r)
	}
}

func TestMoves(t *testing.T) {
	rec := func(st payoutv1.RecoveryState, paused bool, ack string) *payoutv1.Recovery {
		return &payoutv1.Recovery{Spec: payoutv1.RecoverySpec{Paused: paused, Acknowledged: ack},
			Status: payoutv1.RecoveryStatus{State: st, CheckID: "c1"}}
	}
	for _, c := range []struct {
		rec  *payoutv1.Recovery
		want bool
	}{
		{rec(payoutv1.RecoveryClear, false, ""), true},
		{rec(payoutv1.RecoveryClear, true, "c1"), false},
		{rec(payoutv1.RecoveryChecking, false, "c1"), false},
		{rec("", false, ""), false},
		{rec(payoutv1.RecoveryRequired, false, ""), false},
		{rec(payoutv1.RecoveryRequired, false, "c0"), false},
		{rec(payoutv1.RecoveryRequired, false, "c1"), true},
	} {
		if got, why := recovery.Moves(c.rec); got != c.want || (!got && why == "") {
			t.Errorf("%+v %+v: moves %v (%q), want %v", c.rec.Spec, c.rec.Status.State, got, why, c.want)
		}
	}
}

func TestNewestIsTheLatestRecord(t *testing.T) {
	old := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	later := metav1.NewTime(old.Add(time.Hour))
	a := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: old}}
	b := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: old}, Status: payoutv1.TransferStatus{UpdatedAt: &later}}
	if got := recovery.Newest(map[string]*payoutv1.Transfer{"a": a, "b": b}); !got.Equal(later.Time) {
		t.Fatalf("newest %v, want %v", got, later)
	}
}
