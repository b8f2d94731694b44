package transfer

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

const sixWeeks = 42 * 24 * time.Hour

// accepted is a transfer whose payout po_1 the provider accepted at the epoch.
func accepted() *payoutv1.Transfer {
	return v1(func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutAccepted, ProviderID: "po_1",
			RequestedAt: metav1.NewTime(epoch), TargetAmount: "21.56"}
	})
}

// answer is the provider's word on po_1, with a six-week return window.
func answer(state payoutv1.PayoutState, msg string) func(*Input) {
	return func(in *Input) {
		in.Provider = &ProviderPayout{Found: true, State: state, ProviderID: "po_1", TargetAmount: "21.56", Message: msg, ReturnWindow: sixWeeks}
	}
}

func unknown(in *Input) { in.Provider = &ProviderPayout{Found: false} }

func attention(t *payoutv1.Transfer) (metav1.ConditionStatus, string) {
	c, ok := Attention(t)
	if !ok {
		return "", ""
	}
	t.Status.Conditions = []metav1.Condition{c}
	return c.Status, c.Reason
}

// TestPayoutLostAndFound: a payout the provider accepted and then no longer knows stays
// transfer_created, is never failed (its money may be out), is recorded as lost once, says so in
// Ready and NeedsAttention, and is found again when the provider knows it again.
func TestPayoutLostAndFound(t *testing.T) {
	tr := accepted()
	d := Decide(input(tr, at(time.Hour), unknown))
	lost := stored(tr, d)
	if d.Status.Phase != payoutv1.PhaseTransferCreated || d.Status.Failure != nil || d.Status.Payout.LostAt == nil || !d.Status.Payout.LostAt.Time.Equal(at(time.Hour)) {
		t.Fatalf("lost: %+v", d.Status)
	}
	if !hasWarning(d, ReasonProviderLost) || !strings.Contains(d.Waiting, "does not know payout") || d.RequeueAfter == 0 {
		t.Errorf("a lost payout warns, waits saying why, and is asked about again: %+v", d)
	}
	if s, r := attention(lost); s != metav1.ConditionTrue || r != ReasonPayoutLost {
		t.Errorf("NeedsAttention %s %s", s, r)
	}
	again := Decide(input(lost, at(2*time.Hour), unknown))
	if !again.Status.Payout.LostAt.Time.Equal(at(time.Hour)) || hasWarning(again, ReasonProviderLost) {
		t.Errorf("lost since the first time, warned once: %+v %+v", again.Status.Payout, again.Events)
	}
	found := Decide(input(lost, at(3*time.Hour), answer(payoutv1.PayoutAccepted, "")))
	if found.Status.Payout.LostAt != nil || found.Waiting != "" || !hasEvent(found, ReasonPayoutFound) {
		t.Errorf("found again: %+v %+v", found.Status.Payout, found.Events)
	}
	if s, r := attention(stored(lost, found)); s != metav1.ConditionFalse || r != ReasonPayoutFound {
		t.Errorf("NeedsAttention once found: %s %s", s, r)
	}
	if _, ok := Attention(accepted()); ok {
		t.Error("a transfer that never needed a person has no NeedsAttention condition")
	}
}

// TestPayoutReturnedAfterCompleted: a completed payout is asked about during its return window;
// a bounce is reported, a return (the provider cancelled the payout) is recorded, keeps the
// transfer completed, makes its deposit owed again and refundable once, and stops the checks.
func TestPayoutReturnedAfterCompleted(t *testing.T) {
	done := stored(accepted(), Decide(input(accepted(), at(time.Hour), answer(payoutv1.PayoutCompleted, ""))))
	p := done.Status.Payout
	if done.Status.Phase != payoutv1.PhaseCompleted || p.ReturnWindowEndsAt == nil || !p.ReturnWindowEndsAt.Time.Equal(at(time.Hour+sixWeeks)) {
		t.Fatalf("completed, its return window recorded: %+v", p)
	}
	mailed(done, at(time.Hour))
	d := Decide(input(done, at(time.Hour+time.Second), recipientTidied))
	if d.RequeueAfter != time.Hour-time.Second {
		t.Errorf("the first return check is an hour after the completion, not %s", d.RequeueAfter)
	}
	if AskProvider(done, at(time.Hour+time.Second)) || !AskProvider(done, at(2*time.Hour)) {
		t.Error("the provider is asked at the checks only")
	}
	bounced := Decide(input(done, at(2*time.Hour), recipientTidied, answer(payoutv1.PayoutAccepted, "account closed")))
	if !hasWarning(bounced, ReasonPayoutBounced) || bounced.Status.Payout.Returned != nil || bounced.Status.Payout.State != payoutv1.PayoutCompleted {
		t.Errorf("a bounce is reported, not recorded: %+v %+v", bounced.Status.Payout, bounced.Events)
	}
	if owed := OwedOf(done, nil, false); len(owed) != 0 {
		t.Errorf("a completed payout owes nothing: %+v", owed)
	}
	d = Decide(input(done, at(3*time.Hour), recipientTidied, answer(payoutv1.PayoutRejected, "the recipient's bank returned it")))
	returned := stored(done, d)
	if d.Status.Phase != payoutv1.PhaseCompleted || d.Status.Failure != nil || d.Status.Payout.Returned == nil || !hasWarning(d, ReasonPayoutReturned) {
		t.Fatalf("returned: the transfer stays completed, the return recorded: %+v", d.Status)
	}
	if len(d.Actions) != 0 || len(d.Status.History) != len(done.Status.History) {
		t.Errorf("no mail, no history line: %+v", d)
	}
	if d.RequeueAfter != 0 || AskProvider(returned, at(4*time.Hour)) {
		t.Errorf("a returned payout is asked about no more: %s", d.RequeueAfter)
	}
	owed := OwedOf(returned, nil, false)
	if len(owed) != 1 || owed[0].Name != id || owed[0].Units != "25000000" || !strings.Contains(owed[0].Reason, "returned") {
		t.Fatalf("the deposit is owed again: %+v", owed)
	}
	if s, r := attention(returned); s != metav1.ConditionTrue || r != ReasonPayoutReturned {
		t.Errorf("NeedsAttention %s %s", s, r)
	}
	confirmed := &payoutv1.Refund{Status: payoutv1.RefundStatus{State: payoutv1.RefundConfirmed, TxHash: "0xfeed", Amount: "25000000", To: wallet}}
	d = Decide(input(returned, at(5*time.Hour), recipientTidied, func(in *Input) { in.Refund = confirmed }))
	refunded := stored(returned, d)
	if d.Status.Refund == nil || d.Status.Phase != payoutv1.PhaseCompleted || len(OwedOf(refunded, nil, false)) != 0 {
		t.Fatalf("refunded: recorded, still completed (spec 3.1), nothing owed: %+v", d.Status)
	}
	if s, r := attention(refunded); s != metav1.ConditionFalse || r != ReasonReturnRefunded {
		t.Errorf("NeedsAttention after the refund: %s %s", s, r)
	}
}

// TestReturnChecks: the checks of a six-week window come 1, 2, 4, 8 and 16 hours after the
// completion, then daily, and at the window's end: 47 in all, each asked once by the requeues
// that follow them; a pass between checks asks nothing.
func TestReturnChecks(t *testing.T) {
	done := accepted()
	done.Status.Payout.State = payoutv1.PayoutCompleted
	updated := metav1.NewTime(epoch)
	end := metav1.NewTime(epoch.Add(sixWeeks))
	done.Status.Payout.UpdatedAt, done.Status.Payout.ReturnWindowEndsAt = &updated, &end

	var asked []time.Duration
	now := epoch.Add(time.Second)
	for range 100 {
		wait := NextReturnCheck(done, now)
		if wait == 0 {
			break
		}
		now = now.Add(wait)
		if !ReturnCheckDue(done, now) {
			t.Fatalf("the requeue at %s is not a check", now.Sub(epoch))
		}
		asked = append(asked, now.Sub(epoch))
	}
	if len(asked) != 47 || asked[0] != time.Hour || asked[4] != 16*time.Hour || asked[5] != 40*time.Hour || asked[45] != 1000*time.Hour || asked[46] != sixWeeks {
		t.Fatalf("%d checks: %v", len(asked), asked)
	}
	for _, c := range []struct {
		age  time.Duration
		want bool
	}{
		{59 * time.Minute, false},
		{time.Hour + 14*time.Minute, true}, // a quarter of the hour to the next check
		{time.Hour + 16*time.Minute, false},
		{16*time.Hour + 5*time.Hour, true}, // a quarter of a day
		{16*time.Hour + 7*time.Hour, false},
		{sixWeeks + 5*time.Hour, true}, // the last check, at the end
		{sixWeeks + 7*time.Hour, false},
	} {
		if got := ReturnCheckDue(done, epoch.Add(c.age)); got != c.want {
			t.Errorf("a pass %s after the completion asks: %v, want %v", c.age, got, c.want)
		}
	}
	none := done.DeepCopy()
	none.Status.Payout.ReturnWindowEndsAt = nil
	if ReturnCheckDue(none, epoch.Add(time.Hour)) || NextReturnCheck(none, epoch) != 0 {
		t.Error("without a return window (a provider that never returns, or a payout completed before windows were recorded) nothing is asked")
	}
}

func hasEvent(d Decision, reason string) bool {
	for _, e := range d.Events {
		if e.Reason == reason {
			return true
		}
	}
	return false
}
