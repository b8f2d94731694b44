package treasury

import (
	"math/big"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/test/testgen"
)

const id = "0123456789abcdef01234567"

// logAt is the Deposit object of log index i of the fixture's deposit transaction, of units.
func logAt(i int64, units string) payoutv1.Deposit {
	f := testgen.Deposit()
	return payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: "payout-acme", Name: payoutv1.DepositName(f.Network, f.TxHash, i)},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: f.Network, Token: f.Token, Contract: "0x" + strings.Repeat("11", 20),
			To: "0x71c7656ec7ab88b098defb751b7401b5f6d8976f", From: f.From, Amount: units, TxHash: f.TxHash, LogIndex: i,
			BlockNumber: f.BlockNumber, BlockHash: f.BlockHash, BlockTime: f.SeenAt, Confirmations: 3},
	}
}

var (
	// credited pays the transfer exactly; overpaid pays it with 5 USDC too many (its excess is a
	// stray part of the same log); stray is a second log after the amount was reached
	credited = logAt(0, "25000000")
	overpaid = logAt(0, "30000000")
	stray    = logAt(1, "7000000")
)

func deposited(t *payoutv1.Transfer) {
	t.Status.Deposit = testgen.Deposit()
	t.Spec.DepositPath = "74565/6785451/13496065/2311527"
}

func completed(t *payoutv1.Transfer) {
	t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "sim", State: payoutv1.PayoutCompleted}
	t.Status.Phase = payoutv1.PhaseCompleted
}

func processing(t *payoutv1.Transfer) {
	t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "sim", State: payoutv1.PayoutAccepted}
	t.Status.Phase = payoutv1.PhaseTransferCreated
}

func returned(t *payoutv1.Transfer) {
	completed(t)
	t.Status.Payout.Returned = &payoutv1.PayoutReturn{Message: "account closed"}
}

var failed = testgen.Failed(payoutv1.FailurePayoutRejected, "rejected by the bank")

func refunded(t *payoutv1.Transfer) {
	t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x" + strings.Repeat("ef", 32), ConfirmedAt: testgen.Epoch}
}

// strayRefundedIn records a confirmed refund of the stray log of dep, as the transfer controller does.
func strayRefundedIn(dep payoutv1.Deposit, units string) func(*payoutv1.Transfer) {
	return func(t *payoutv1.Transfer) {
		t.Status.StrayDeposits = append(t.Status.StrayDeposits, payoutv1.StrayDeposit{TxHash: dep.Spec.TxHash, LogIndex: dep.Spec.LogIndex,
			Token: dep.Spec.Token, Amount: units, Reason: "excess",
			Refund: &payoutv1.StrayRefundFacts{Name: "x", Network: dep.Spec.Network, Token: dep.Spec.Token, TxHash: "0x" + strings.Repeat("12", 32)}})
	}
}

func refundIn(state payoutv1.RefundState, dep *payoutv1.Deposit) payoutv1.Refund {
	rf := payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: "payout-acme", Name: id}, Spec: payoutv1.RefundSpec{Transfer: id}}
	if dep != nil {
		ref := payoutv1.DepositRef{Network: dep.Spec.Network, TxHash: dep.Spec.TxHash, LogIndex: dep.Spec.LogIndex}
		rf.Spec.Deposit, rf.Name = &ref, payoutv1.StrayRefundName(id, ref)
	}
	rf.Status.State = state
	return rf
}

func TestJudge(t *testing.T) {
	tr := func(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
		return testgen.Transfer("payout-acme", id, mods...)
	}
	cases := []struct {
		name       string
		transfer   *payoutv1.Transfer
		deps       []payoutv1.Deposit
		refunds    []payoutv1.Refund
		dep        payoutv1.Deposit
		writtenOff bool
		want       Verdict
	}{
		{"paid out", tr(deposited, completed), []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Due: true, Reason: payoutv1.SweepPaidOut}},
		// the payout is fiat, but a rejection or a return would make the deposit owed back
		{"still paying out", tr(deposited, processing), []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Why: "has not ended"}},
		{"failed, not refunded", tr(deposited, failed), []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Why: "owes its deposit back", Owed: true}},
		{"failed, refund in flight", tr(deposited, failed), []payoutv1.Deposit{credited}, []payoutv1.Refund{refundIn(payoutv1.RefundBroadcast, nil)}, credited, false,
			Verdict{Why: "in flight"}},
		{"failed and refunded", tr(deposited, failed, refunded), []payoutv1.Deposit{credited}, []payoutv1.Refund{refundIn(payoutv1.RefundConfirmed, nil)}, credited, false,
			Verdict{Due: true, Reason: payoutv1.SweepRefunded}},
		{"returned by the bank", tr(deposited, returned), []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Why: "owes its deposit back", Owed: true}},
		{"a write-off never frees a credited deposit", tr(deposited, failed), []payoutv1.Deposit{credited}, nil, credited, true,
			Verdict{Why: "owes its deposit back", Owed: true}},
		// an overpaid log: its excess is a stray part that must be settled as well
		{"overpaid, excess not refunded", tr(deposited, completed), []payoutv1.Deposit{overpaid}, nil, overpaid, false,
			Verdict{Why: "stray part is owed back"}},
		{"overpaid, excess refunded", tr(deposited, completed, strayRefundedIn(overpaid, "5000000")), []payoutv1.Deposit{overpaid}, nil, overpaid, false,
			Verdict{Due: true, Reason: payoutv1.SweepRefunded}},
		{"overpaid, excess written off", tr(deposited, completed), []payoutv1.Deposit{overpaid}, nil, overpaid, true,
			Verdict{Due: true, Reason: payoutv1.SweepWrittenOff}},
		{"stray, not refunded", tr(deposited, completed), []payoutv1.Deposit{credited, stray}, nil, stray, false,
			Verdict{Why: "stray part is owed back"}},
		{"stray refund in flight, written off", tr(deposited, completed), []payoutv1.Deposit{credited, stray}, []payoutv1.Refund{refundIn(payoutv1.RefundSigned, &stray)}, stray, true,
			Verdict{Why: "in flight"}},
		{"stray refund refused, written off", tr(deposited, completed), []payoutv1.Deposit{credited, stray}, []payoutv1.Refund{refundIn(payoutv1.RefundRefused, &stray)}, stray, true,
			Verdict{Due: true, Reason: payoutv1.SweepWrittenOff}},
		{"stray refunded", tr(deposited, completed, strayRefundedIn(stray, "7000000")), []payoutv1.Deposit{credited, stray}, []payoutv1.Refund{refundIn(payoutv1.RefundConfirmed, &stray)}, stray, false,
			Verdict{Due: true, Reason: payoutv1.SweepRefunded}},
		// the credited deposit's refund in flight does not hold a stray log, nor the reverse
		{"stray of a transfer whose own refund is in flight", tr(deposited, failed), []payoutv1.Deposit{credited, stray}, []payoutv1.Refund{refundIn(payoutv1.RefundPending, nil)}, stray, true,
			Verdict{Due: true, Reason: payoutv1.SweepWrittenOff}},
		{"stray of a transfer still paying out", tr(deposited, processing), []payoutv1.Deposit{credited, stray}, nil, stray, true,
			Verdict{Why: "has not ended"}},
		{"v2", tr(deposited, completed, func(t *payoutv1.Transfer) { testgen.V2()(t) }), []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Why: "not the deposit of a v1 transfer"}},
		{"no transfer", nil, []payoutv1.Deposit{credited}, nil, credited, false,
			Verdict{Why: "does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Judge(c.transfer, c.deps, c.refunds, &c.dep, c.writtenOff)
			if got.Due != c.want.Due || got.Reason != c.want.Reason || got.Owed != c.want.Owed || !strings.Contains(got.Why, c.want.Why) {
				t.Fatalf("got %+v; want %+v", got, c.want)
			}
			if !got.Due && got.Why == "" {
				t.Fatalf("a deposit that is not due says why: %+v", got)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	sweep := func(reason payoutv1.SweepReason) *payoutv1.Sweep {
		return &payoutv1.Sweep{Spec: payoutv1.SweepSpec{Reason: reason, Amount: "7000000", Token: payoutv1.TokenUSDC, Network: payoutv1.NetworkBase}}
	}
	cases := []struct {
		name  string
		sweep *payoutv1.Sweep
		v     Verdict
		want  payoutv1.SweepState
	}{
		{"due", sweep(payoutv1.SweepPaidOut), Verdict{Due: true, Reason: payoutv1.SweepPaidOut}, payoutv1.SweepPending},
		{"write-off, due", sweep(payoutv1.SweepWrittenOff), Verdict{Due: true, Reason: payoutv1.SweepWrittenOff}, payoutv1.SweepPending},
		{"write-off of an owed deposit", sweep(payoutv1.SweepWrittenOff), Verdict{Why: "owed", Owed: true}, payoutv1.SweepRefused},
		{"write-off while a refund is in flight waits", sweep(payoutv1.SweepWrittenOff), Verdict{Why: "in flight"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Admit(c.sweep, c.v); got.State != c.want || got.Message == "" {
				t.Fatalf("got %q (%q); want %q", got.State, got.Message, c.want)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	now := testgen.Epoch.Add(time.Hour)
	// each sweep at its own address but "a2", at a's
	pending := func(name string, age time.Duration, units string) payoutv1.Sweep {
		return payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: "payout-acme", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Spec: payoutv1.SweepSpec{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Amount: units, Address: "0x" + name[:1]}}
	}
	policy := Policy{Threshold: big.NewInt(100_000000), MaxAge: 6 * time.Hour, MaxItems: 2}
	cases := []struct {
		name     string
		pending  []payoutv1.Sweep
		policy   Policy
		want     []string
		wantWait time.Duration
	}{
		{"nothing due", nil, policy, nil, 0},
		{"below the threshold and young", []payoutv1.Sweep{pending("a", time.Hour, "60000000"), pending("b", 2*time.Hour, "39999999")}, policy, nil, 4 * time.Hour},
		{"at the threshold", []payoutv1.Sweep{pending("a", time.Hour, "60000000"), pending("b", 2*time.Hour, "40000000")}, policy, []string{"b", "a"}, 0},
		{"the oldest reached the maximum age", []payoutv1.Sweep{pending("a", time.Minute, "1"), pending("b", 6*time.Hour, "1")}, policy, []string{"b", "a"}, 0},
		{"at most MaxItems, oldest first", []payoutv1.Sweep{pending("a", 1*time.Hour, "90000000"), pending("b", 3*time.Hour, "90000000"), pending("c", 2*time.Hour, "1")}, policy, []string{"b", "c"}, 0},
		{"no threshold sweeps at once", []payoutv1.Sweep{pending("a", 0, "1")}, Policy{MaxAge: time.Hour}, []string{"a"}, 0},
		// the mechanism empties an address: its sweeps go together, MaxItems counts addresses
		{"an address's sweeps go together", []payoutv1.Sweep{pending("a", 5*time.Hour, "90000000"), pending("b", 4*time.Hour, "90000000"), pending("c", 3*time.Hour, "1"), pending("a2", time.Minute, "1")},
			policy, []string{"a", "b", "a2"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			batch, wait := Schedule(c.pending, now, c.policy)
			var got []string
			for _, sw := range batch {
				got = append(got, sw.Name)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") || wait != c.wantWait {
				t.Fatalf("got %v, wait %v; want %v, wait %v", got, wait, c.want, c.wantWait)
			}
		})
	}
}

func TestReady(t *testing.T) {
	sweepOf := func(dep payoutv1.Deposit) payoutv1.Sweep {
		return *Intent(testgen.Transfer("payout-acme", id, deposited), &dep, payoutv1.SweepPaidOut)
	}
	// two deposits at one address: the address is ready only when both are due
	if got := Ready([]payoutv1.Sweep{sweepOf(credited)}, []payoutv1.Deposit{credited, stray}); len(got) != 0 {
		t.Fatalf("an address with a deposit still owed went in a batch: %v", got)
	}
	if got := Ready([]payoutv1.Sweep{sweepOf(credited), sweepOf(stray)}, []payoutv1.Deposit{credited, stray}); len(got) != 2 {
		t.Fatalf("an address whose deposits are all due: %d ready", len(got))
	}
}

func TestBatchSteps(t *testing.T) {
	sweep := func(ns, name, addr, units string) payoutv1.Sweep {
		return payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:   payoutv1.SweepSpec{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Amount: units, Address: addr, Path: "1/2/3/4"},
			Status: payoutv1.SweepStatus{State: payoutv1.SweepPending}}
	}
	// two deposits at 0xa (one overpaid transfer's credited log and its refunded stray), one at 0xb
	sweeps := []payoutv1.Sweep{sweep("payout-acme", "base-1", "0xa", "25000000"), sweep("payout-acme", "base-2", "0xa", "7000000"),
		sweep("payout-beta", "base-3", "0xb", "2")}
	b := NewBatch(sweeps, "0xTREASURY")
	if len(b.Spec.Items) != 2 || b.Spec.Items[0].Amount != "32000000" || len(b.Spec.Items[0].Sweeps) != 2 {
		t.Fatalf("items %+v: want one per address", b.Spec.Items)
	}
	if again := NewBatch([]payoutv1.Sweep{sweeps[2], sweeps[1], sweeps[0]}, "0xtreasury"); again.Name != b.Name {
		t.Fatalf("the same deposits got batches %s and %s: a crash before marking would batch them twice", b.Name, again.Name)
	}
	released := sweeps[0].DeepCopy()
	released.Status.ReleasedBatches = []string{b.Name}
	if other := NewBatch([]payoutv1.Sweep{*released, sweeps[1], sweeps[2]}, "0xtreasury"); other.Name == b.Name {
		t.Fatalf("a batch after a revert reuses the reverted batch's name %s", b.Name)
	}
	if Next(b.Status) != ActionMark {
		t.Fatalf("a new batch marks its sweeps first")
	}
	b.Status.State = payoutv1.SweepBatchPending
	if Next(b.Status) != ActionSign {
		t.Fatalf("a pending batch is signed")
	}
	b.Status = Broadcast(Signed(b.Status, "0xGAS", 7, []byte{0xf8, 0x6b}, "0xABC"))
	if b.Status.State != payoutv1.SweepBatchBroadcast || b.Status.SignedTx != "0xf86b" || *b.Status.Nonce != 7 || Next(b.Status) != ActionWatch {
		t.Fatalf("after signing and broadcasting: %+v", b.Status)
	}
	// no receipt, or not at depth: unchanged; at depth: confirmed, with what the receipt moved
	if st := Observed(b, &chain.TxObservation{}, now()); st.State != payoutv1.SweepBatchBroadcast {
		t.Fatalf("no receipt moved the batch to %s", st.State)
	}
	if st := Observed(b, &chain.TxObservation{Found: true, BlockNumber: 9, Confirmations: 1, Required: 3}, now()); st.State != payoutv1.SweepBatchBroadcast {
		t.Fatalf("a receipt short of depth moved the batch to %s", st.State)
	}
	reverted := b.DeepCopy()
	reverted.Status = Observed(b, &chain.TxObservation{Found: true, Reverted: true, BlockNumber: 9, Confirmations: 3, Required: 3}, now())
	// 0xa held 1 base unit more than its deposits (a deposit not recorded yet); 0xb's
	// authorization did not apply; a transfer elsewhere and one of another token do not count
	receipt := &chain.TxObservation{Found: true, BlockNumber: 9, Confirmations: 3, Required: 3, Transfers: []chain.TokenTransfer{
		{Token: payoutv1.TokenUSDC, From: "0xA", To: "0xTreasury", Amount: big.NewInt(32000001)},
		{Token: payoutv1.TokenUSDC, From: "0xb", To: "0xelsewhere", Amount: big.NewInt(2)},
		{Token: payoutv1.TokenUSDT, From: "0xb", To: "0xtreasury", Amount: big.NewInt(2)},
	}}
	b.Status = Observed(b, receipt, now())
	if b.Status.State != payoutv1.SweepBatchConfirmed || Next(b.Status) != ActionSettle || Open(b) || len(b.Status.Moved) != 1 || b.Status.Moved[0].Amount != "32000001" {
		t.Fatalf("at depth: %+v", b.Status)
	}
	settle := func(sw payoutv1.Sweep, b *payoutv1.SweepBatch) (payoutv1.SweepStatus, bool) {
		sw.Status = Mark(sw.Status, b.Name)
		return Settle(&sw, b)
	}
	if got, ok := settle(sweeps[0], b); !ok || got.State != payoutv1.SweepConfirmed || got.TxHash != "0xabc" || got.ConfirmedAt == nil || got.To != "0xtreasury" || got.Moved != "25000001" {
		t.Fatalf("settled the first deposit of 0xa into %+v", got)
	}
	if got, ok := settle(sweeps[1], b); !ok || got.State != payoutv1.SweepConfirmed || got.Moved != "7000000" {
		t.Fatalf("settled the second deposit of 0xa into %+v", got)
	}
	if got, ok := settle(sweeps[2], b); !ok || got.State != payoutv1.SweepPending || got.ReleasedBatches[0] != b.Name {
		t.Fatalf("a deposit its batch moved nothing from settled into %+v", got)
	}
	if got, ok := settle(sweeps[0], reverted); !ok || got.State != payoutv1.SweepPending || got.Batch != "" || got.ReleasedBatches[0] != b.Name {
		t.Fatalf("settled a reverted batch into %+v", got)
	}
	other := sweeps[0]
	other.Status = Mark(other.Status, "another")
	if _, ok := Settle(&other, b); ok {
		t.Fatalf("a batch settled a sweep of another batch")
	}
}

func now() time.Time { return testgen.Epoch.Time }

func TestSummarize(t *testing.T) {
	written := logAt(6, "30000000") // a write-off the sweeper refused
	swept, pending, refused := sweepFor(credited, payoutv1.SweepConfirmed), sweepFor(stray, payoutv1.SweepPending), sweepFor(written, payoutv1.SweepRefused)
	swept.Status.Moved = "25000001" // the receipt moved one unit more than the deposit
	stranded := sweepFor(logAt(3, "5"), payoutv1.SweepPending)
	stranded.Status.ReleasedBatches = []string{"a", "b", "c"}
	held := logAt(4, "9")
	usdt := logAt(5, "11")
	usdt.Spec.Token = payoutv1.TokenUSDT
	deps := []payoutv1.Deposit{credited, stray, written, logAt(3, "5"), held, usdt}
	got := Summarize(deps, []payoutv1.Sweep{swept, pending, refused, stranded})
	if len(got) != 2 || got[0].Token != payoutv1.TokenUSDC || got[1].Token != payoutv1.TokenUSDT {
		t.Fatalf("rows %+v: want base usdc, base usdt", got)
	}
	u := got[0]
	if u.Swept.String() != "25000001" || u.Pending.String() != "7000000" || u.Stranded.String() != "30000005" || u.Held.String() != "9" || u.Count != 5 || u.SweptCount != 1 {
		t.Fatalf("base usdc: swept %s, pending %s, stranded %s, held %s (%d deposits, %d swept)", u.Swept, u.Pending, u.Stranded, u.Held, u.Count, u.SweptCount)
	}
	if got[1].Held.String() != "11" {
		t.Fatalf("base usdt: held %s", got[1].Held)
	}
}

func sweepFor(d payoutv1.Deposit, state payoutv1.SweepState) payoutv1.Sweep {
	sw := *Intent(testgen.Transfer("payout-acme", id, deposited), &d, payoutv1.SweepPaidOut)
	sw.Status.State = state
	return sw
}
