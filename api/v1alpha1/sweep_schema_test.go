package v1alpha1_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The transition rules of a Sweep's and a SweepBatch's status (issue 27): every move the sweeper
// makes is stored, and a hand edit that would make it sign for a deposit again is refused.
var _ = Describe("a Sweep's and a SweepBatch's status transitions", func() {
	var (
		ns  string
		seq int
	)
	BeforeEach(func() { ns = freshNamespace() })

	newSweep := func(mods ...func(*payoutv1.Sweep)) *payoutv1.Sweep {
		GinkgoHelper()
		seq++
		sw := &payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("base-%d", seq)},
			Spec: payoutv1.SweepSpec{Transfer: strings.Repeat("a", 24), Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Address: "0x" + strings.Repeat("12", 20), Path: "1/2/3/4", Amount: "25000000", DepositTxHash: "0x" + strings.Repeat("ab", 32),
				Reason: payoutv1.SweepPaidOut}}
		for _, m := range mods {
			m(sw)
		}
		Expect(env.Client.Create(ctx, sw)).To(Succeed())
		return sw
	}
	// walk stores each status in turn; every step must be stored
	walk := func(sw *payoutv1.Sweep, path ...payoutv1.SweepStatus) {
		GinkgoHelper()
		for i, st := range path {
			sw.Status = st
			Expect(env.Client.Status().Update(ctx, sw)).To(Succeed(), "step %d to %q", i, st.State)
		}
	}
	refused := func(sw *payoutv1.Sweep, st payoutv1.SweepStatus, want string) {
		GinkgoHelper()
		edited := sw.DeepCopy()
		edited.Status = st
		expectInvalid(env.Client.Status().Update(ctx, edited), want)
	}
	pending := payoutv1.SweepStatus{State: payoutv1.SweepPending}
	batched := payoutv1.SweepStatus{State: payoutv1.SweepBatched, Batch: "base-usdc-1"}
	at := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	confirmed := payoutv1.SweepStatus{State: payoutv1.SweepConfirmed, Batch: "base-usdc-1", TxHash: "0xabc", Moved: "25000000", ConfirmedAt: &at}
	released := payoutv1.SweepStatus{State: payoutv1.SweepPending, ReleasedBatches: []string{"base-usdc-1"}}
	const backwards = "a sweep's state only moves forward"

	It("stores every move the sweeper makes, a release after a batch that moved nothing among them", func() {
		walk(newSweep(), pending, batched, released, payoutv1.SweepStatus{State: payoutv1.SweepBatched, Batch: "base-usdc-2", ReleasedBatches: []string{"base-usdc-1"}},
			payoutv1.SweepStatus{State: payoutv1.SweepConfirmed, Batch: "base-usdc-2", TxHash: "0xdef", Moved: "25000000", ConfirmedAt: &at, ReleasedBatches: []string{"base-usdc-1"}})
		walk(newSweep(), payoutv1.SweepStatus{State: payoutv1.SweepRefused})
	})

	It("refuses the edits that would sweep a deposit again", func() {
		sw := newSweep()
		walk(sw, pending, batched)
		refused(sw, pending, backwards) // out of its batch without the batch released
		refused(sw, payoutv1.SweepStatus{State: payoutv1.SweepBatched, Batch: "other"}, "a batched sweep's batch cannot change")
		walk(sw, confirmed)
		refused(sw, pending, backwards)
		refused(sw, payoutv1.SweepStatus{State: payoutv1.SweepPending, ReleasedBatches: []string{"base-usdc-1"}}, backwards) // a confirmed sweep is final
		withOtherTx := *confirmed.DeepCopy()
		withOtherTx.TxHash = "0x999"
		refused(sw, withOtherTx, "a confirmed sweep's transaction cannot change")
		fresh := newSweep()
		refused(fresh, batched, backwards) // a new sweep is admitted first
	})

	It("keeps the spec and the write-off rule", func() {
		sw := newSweep()
		sw.Spec.Amount = "1"
		expectInvalid(env.Client.Update(ctx, sw), "a sweep's spec is immutable")
		seq++
		bad := &payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("base-%d", seq)},
			Spec: payoutv1.SweepSpec{Transfer: strings.Repeat("a", 24), Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Address: "0x" + strings.Repeat("12", 20), Path: "1/2/3/4", Amount: "5", DepositTxHash: "0x1", Reason: payoutv1.SweepWrittenOff}}
		expectInvalid(env.Client.Create(ctx, bad), "a sweep carries a write-off exactly when its reason is WrittenOff")
		bad.Spec.WriteOff = &payoutv1.WriteOff{By: "ops@example.com", Why: "the sender cannot be reached"}
		Expect(env.Client.Create(ctx, bad)).To(Succeed())
	})

	It("keeps a signed batch's transaction", func() {
		seq++
		b := &payoutv1.SweepBatch{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("base-usdc-schema-%d-%s", seq, ns)},
			Spec: payoutv1.SweepBatchSpec{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: "0x" + strings.Repeat("34", 20),
				Items: []payoutv1.SweepItem{{Namespace: ns, Address: "0x" + strings.Repeat("12", 20), Path: "1/2/3/4", Amount: "5",
					Sweeps: []payoutv1.SweepShare{{Name: "base-1", Amount: "5"}}}}}}
		Expect(env.Client.Create(ctx, b)).To(Succeed())
		signed := payoutv1.SweepBatchStatus{State: payoutv1.SweepBatchSigned, From: "0x" + strings.Repeat("56", 20), Nonce: ptr.To(int64(3)), SignedTx: "0x04f8", TxHash: "0xaaa"}
		for _, st := range []payoutv1.SweepBatchStatus{{State: payoutv1.SweepBatchPending}, signed} {
			b.Status = st
			Expect(env.Client.Status().Update(ctx, b)).To(Succeed())
		}
		resigned := *signed.DeepCopy()
		resigned.SignedTx, resigned.TxHash, resigned.Nonce = "0x04f9", "0xbbb", ptr.To(int64(4))
		edited := b.DeepCopy()
		edited.Status = resigned
		expectInvalid(env.Client.Status().Update(ctx, edited), "a signed sweep batch's transaction (txHash, signedTx, nonce) cannot change")
		edited.Status = payoutv1.SweepBatchStatus{State: payoutv1.SweepBatchPending}
		expectInvalid(env.Client.Status().Update(ctx, edited), "a sweep batch's state only moves forward")
		edited.Spec.Items[0].Amount = "6"
		expectInvalid(env.Client.Update(ctx, edited), "a sweep batch's spec is immutable")
		seq++
		fresh := &payoutv1.SweepBatch{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("base-usdc-schema-%d-%s", seq, ns)}, Spec: b.Spec}
		Expect(env.Client.Create(ctx, fresh)).To(Succeed())
		fresh.Status = signed
		expectInvalid(env.Client.Status().Update(ctx, fresh), "a new batch is Pending first")
	})
})
