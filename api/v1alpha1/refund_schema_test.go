package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The transition rules of a Refund's status (issue 23 item 6): every move the refund controller
// makes is stored, and every hand edit that would move a refund backwards (and so make the
// controller sign a second transaction) is refused.
var _ = Describe("a Refund's status transitions", func() {
	var (
		ns  string
		seq int
	)
	BeforeEach(func() { ns = freshNamespace() })

	const (
		to     = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
		first  = "0x1111111111111111111111111111111111111111111111111111111111111111"
		second = "0x2222222222222222222222222222222222222222222222222222222222222222"
	)
	pending := payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: to, Amount: "25000000"}
	with := func(st payoutv1.RefundStatus, change func(*payoutv1.RefundStatus)) payoutv1.RefundStatus {
		st.RevertedTxs = append([]string(nil), st.RevertedTxs...)
		change(&st)
		return st
	}
	signedAs := func(st payoutv1.RefundStatus, state payoutv1.RefundState, hash, raw string, nonce int64) payoutv1.RefundStatus {
		return with(st, func(s *payoutv1.RefundStatus) {
			s.State, s.TxHash, s.SignedTx, s.Nonce, s.From = state, hash, raw, ptr.To(nonce), "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
		})
	}
	// reverted is what the controller stores when the transaction of st reverted at depth
	reverted := func(st payoutv1.RefundStatus) payoutv1.RefundStatus {
		return payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: st.Network, Token: st.Token, To: st.To, Amount: st.Amount,
			From: st.From, RevertedTxs: append(append([]string(nil), st.RevertedTxs...), st.TxHash), Message: "reverted"}
	}
	signed := signedAs(pending, payoutv1.RefundSigned, first, "0xf86b01", 7)
	broadcast := with(signed, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundBroadcast })
	confirmed := with(broadcast, func(s *payoutv1.RefundStatus) {
		s.State, s.ConfirmedAt = payoutv1.RefundConfirmed, ptr.To(metav1.NewTime(metav1.Now().Rfc3339Copy().Time))
	})

	// newRefund stores a refund and walks its status through path; each step must be stored.
	newRefund := func(path ...payoutv1.RefundStatus) *payoutv1.Refund {
		GinkgoHelper()
		seq++
		id := "ab000000000000000000000" + string(rune('0'+seq%10))
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id}, Spec: payoutv1.RefundSpec{Transfer: id}}
		Expect(env.Client.Create(ctx, rf)).To(Succeed())
		for i, st := range path {
			rf.Status = st
			Expect(env.Client.Status().Update(ctx, rf)).To(Succeed(), "step %d to %q", i, st.State)
		}
		return rf
	}
	// refused asserts that writing st over rf's status is refused with want, and changes nothing.
	refused := func(rf *payoutv1.Refund, st payoutv1.RefundStatus, want string) {
		GinkgoHelper()
		edited := rf.DeepCopy()
		edited.Status = st
		expectInvalid(env.Client.Status().Update(ctx, edited), want)
		stored := &payoutv1.Refund{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), stored)).To(Succeed())
		Expect(stored.Status.State).To(Equal(rf.Status.State))
		Expect(stored.Status.TxHash).To(Equal(rf.Status.TxHash))
	}
	const backwards = "a refund's state only moves forward"

	It("stores every move the refund controller makes", func() {
		held := with(pending, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundHeld })
		msg := func(st payoutv1.RefundStatus, m string) payoutv1.RefundStatus {
			return with(st, func(s *payoutv1.RefundStatus) { s.Message = m })
		}
		// admitted, held, cleared, signed, a broadcast that failed (same state), broadcast, confirmed
		newRefund(pending, held, msg(held, "screened again"), pending, signed, msg(signed, "broadcast failed"), broadcast,
			msg(broadcast, "1 of 3 confirmations"), confirmed)
		newRefund(with(pending, func(s *payoutv1.RefundStatus) {
			s.State = payoutv1.RefundRefused
			s.To, s.Amount, s.Network, s.Token = "", "", "", ""
		}))
		newRefund(pending, signed, confirmed) // mined at depth before the Broadcast state was written
		// a transaction reverted at depth goes back to Pending with its hash listed, twice over
		again := signedAs(reverted(broadcast), payoutv1.RefundSigned, second, "0xf86b02", 8)
		rf := newRefund(pending, signed, broadcast, reverted(broadcast), again, reverted(again))
		Expect(rf.Status.RevertedTxs).To(Equal([]string{first, second}))
		newRefund(pending, signed, reverted(signed)) // reverted before its Broadcast state was written
		// a transaction found on chain is adopted (refund.Adopt): Broadcast with no bytes of its
		// own, from Pending or Held; and Pending again when a reorg took it (refund.Lost)
		adopted := with(pending, func(s *payoutv1.RefundStatus) { s.State, s.TxHash = payoutv1.RefundBroadcast, second })
		newRefund(pending, adopted, with(adopted, func(s *payoutv1.RefundStatus) {
			s.State, s.ConfirmedAt = payoutv1.RefundConfirmed, ptr.To(metav1.NewTime(metav1.Now().Rfc3339Copy().Time))
		}))
		newRefund(pending, with(pending, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundHeld }), adopted)
		newRefund(pending, adopted, pending)
	})

	It("refuses every edit that moves a refund backwards or changes what it signed", func() {
		rf := newRefund(pending, signed)
		refused(rf, pending, backwards)                                                                            // a reset: the controller would sign again
		refused(rf, payoutv1.RefundStatus{}, backwards)                                                            // the state removed: it would be admitted again
		refused(rf, with(pending, func(s *payoutv1.RefundStatus) { s.RevertedTxs = []string{second} }), backwards) // another hash "reverted"
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.SignedTx = "0xf86b99" }), "a signed refund's transaction (txHash, signedTx, nonce) cannot change")
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.Nonce = ptr.To(int64(8)) }), "cannot change")
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.TxHash = second }), "cannot change")
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.Amount = "26000000" }), "a refund's destination, amount, network and token are fixed once it is admitted")
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.To = "0x8ba1f109551bd432803012645ac136ddd64dba72" }), "fixed once it is admitted")
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundHeld }), backwards)
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundRefused }), backwards)

		// the operator's one-line reset, as `kubectl patch --subresource=status` sends it
		for _, patch := range []string{`{"status":{"state":"Pending"}}`, `{"status":null}`, `{"status":{"state":null}}`} {
			err := env.Client.Status().Patch(ctx, rf.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))
			Expect(err).To(HaveOccurred(), patch)
			Expect(err.Error()).To(Or(ContainSubstring(backwards), ContainSubstring("a refund's status cannot be removed")), patch)
		}

		rf = newRefund(pending, signed, broadcast)
		refused(rf, signed, backwards)
		refused(rf, pending, backwards)
		refused(rf, with(broadcast, func(s *payoutv1.RefundStatus) { s.TxHash = second }), "cannot change")

		rf = newRefund(pending, signed, broadcast, reverted(broadcast))
		refused(rf, with(rf.Status, func(s *payoutv1.RefundStatus) { s.RevertedTxs = nil }), "status.revertedTxs only grows")

		rf = newRefund(pending, signed, broadcast, confirmed)
		for _, st := range []payoutv1.RefundStatus{pending, signed, broadcast, reverted(confirmed),
			with(confirmed, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundRefused })} {
			refused(rf, st, backwards)
		}

		rf = newRefund(with(pending, func(s *payoutv1.RefundStatus) {
			s.State = payoutv1.RefundRefused
			s.To, s.Amount, s.Network, s.Token = "", "", "", ""
		}))
		refused(rf, pending, backwards)

		rf = newRefund()
		refused(rf, signed, backwards) // never signed without being admitted
		rf = newRefund(pending)
		refused(rf, broadcast, backwards) // Broadcast without Signed only for an adopted transaction (no signed bytes)
		refused(rf, confirmed, backwards)
		rf = newRefund(pending, with(pending, func(s *payoutv1.RefundStatus) { s.State = payoutv1.RefundHeld }))
		refused(rf, with(signed, func(s *payoutv1.RefundStatus) {}), backwards) // held: screened again before it is signed
	})
})
