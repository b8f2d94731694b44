package transfer

import (
	"fmt"
	"math/bits"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The payout after its intent, beyond the happy path: a provider that no longer knows a payout
// it accepted, and a completed payout the recipient's bank returns within the provider's return
// window. Neither changes the public status on its own (a lost payout may have paid; completed
// is terminal, spec 3.1): each is a fact of status.payout, an event, the NeedsAttention
// condition and a metric, for a person to settle.

// Reasons of the NeedsAttention condition and of the events about a lost or returned payout.
const (
	ReasonPayoutLost     = "PayoutLost"
	ReasonPayoutFound    = "PayoutFound"
	ReasonPayoutBounced  = "PayoutBounced"
	ReasonPayoutReturned = "PayoutReturned"
	ReasonReturnRefunded = "ReturnRefunded"
)

// AskProvider reports whether the controller asks the provider about t's payout in a pass at
// now: a stored intent not at its end yet (Pending), or a completed payout at one of its return
// checks (ReturnCheckDue).
func AskProvider(t *payoutv1.Transfer, now time.Time) bool {
	return Pending(t) || ReturnCheckDue(t, now)
}

// Return checks. A completed payout is asked about 1, 2, 4, 8 and 16 hours after its
// completion, then once a day, until its return window ends, and once at that end: most returns
// come within days (Wise: "within 2-3 business days"), so the checks are densest then, and a
// payout costs one call a day after that (a six-week window: 47 calls in all). A pass asks only
// within the first quarter of a check's interval (the last check: returnFinalGrace): a pass for
// another reason between checks (the informer's resync, a stray deposit) asks nothing, and a
// controller that restarts asks each payout at its next check rather than all of them at once.
// Nothing is stored per check, so the checks cost the API server no write.
const returnFinalGrace = 6 * time.Hour

// returnCheck is the age (time since the completion) of check k, from 0.
func returnCheck(k int) time.Duration {
	if k < 5 {
		return time.Hour << k
	}
	return 16*time.Hour + time.Duration(k-4)*24*time.Hour
}

// checksBy is how many checks are due by age.
func checksBy(age time.Duration) int {
	switch {
	case age < time.Hour:
		return 0
	case age < 16*time.Hour:
		return bits.Len64(uint64(age / time.Hour))
	}
	return 5 + int((age-16*time.Hour)/(24*time.Hour))
}

// returnChecks are the latest check of a payout completed at done, whose window ends at end, at
// or before now (zero before the first), and the next one (zero after the last, at end).
func returnChecks(done, end, now time.Time) (last, next time.Time) {
	if !now.Before(end) {
		return end, time.Time{}
	}
	n := checksBy(now.Sub(done))
	if n > 0 {
		last = done.Add(returnCheck(n - 1))
	}
	if next = done.Add(returnCheck(n)); next.After(end) {
		next = end
	}
	return last, next
}

// watchedForReturn is t's completed payout while its return window is open and no return was
// seen, and when it completed; nil otherwise.
func watchedForReturn(t *payoutv1.Transfer) (*payoutv1.PayoutFacts, time.Time) {
	p := t.Status.Payout
	if p == nil || p.State != payoutv1.PayoutCompleted || p.Returned != nil || p.ReturnWindowEndsAt == nil {
		return nil, time.Time{}
	}
	done := p.RequestedAt.Time
	if p.UpdatedAt != nil {
		done = p.UpdatedAt.Time
	}
	return p, done
}

// ReturnCheckDue reports whether a pass at now asks the provider whether t's completed payout
// was returned: the window is open (or just closed) and now is early in a check's interval.
func ReturnCheckDue(t *payoutv1.Transfer, now time.Time) bool {
	p, done := watchedForReturn(t)
	if p == nil {
		return false
	}
	last, next := returnChecks(done, p.ReturnWindowEndsAt.Time, now)
	if last.IsZero() || now.Before(last) {
		return false
	}
	grace := returnFinalGrace
	if !next.IsZero() {
		grace = next.Sub(last) / 4
	}
	return now.Sub(last) < grace
}

// NextReturnCheck is how long after now the next return check of t's completed payout comes; 0
// when none will.
func NextReturnCheck(t *payoutv1.Transfer, now time.Time) time.Duration {
	p, done := watchedForReturn(t)
	if p == nil {
		return 0
	}
	if _, next := returnChecks(done, p.ReturnWindowEndsAt.Time, now); !next.IsZero() {
		return max(next.Sub(now), time.Second)
	}
	return 0
}

// openReturnWindow records, on the completion of the payout, until when the recipient's bank
// may return it: the provider's window from now.
func openReturnWindow(d *decision) {
	if w := d.in.Provider.ReturnWindow; w > 0 {
		end := metav1.NewTime(d.in.Now.Add(w))
		d.st.Payout.ReturnWindowEndsAt = &end
	}
}

// providerLost records that the provider holds no payout under the id and the reference of a
// payout it had accepted (or completed). Nothing is created again (it may have paid) and nothing
// fails: the transfer says so and waits for the provider or a person.
func providerLost(d *decision) {
	cur := d.st.Payout
	if cur.State == payoutv1.PayoutRequested {
		return
	}
	if cur.LostAt == nil {
		now := d.now()
		cur.LostAt = &now
		d.event(corev1.EventTypeWarning, ReasonProviderLost, "the provider no longer knows payout %s (%s) that it had accepted; nothing is created again, and the provider is asked again; if it stays unknown, ask the provider's support what became of it",
			cur.Reference, cur.ProviderID)
	}
	d.out.Waiting = fmt.Sprintf("the provider does not know payout %s (%s) that it accepted, since %s: nothing is created again; ask the provider's support",
		cur.Reference, cur.ProviderID, cur.LostAt.UTC().Format(time.RFC3339))
}

// providerFound clears a payout's loss once the provider knows it again.
func providerFound(d *decision) {
	cur := d.st.Payout
	if cur.LostAt == nil {
		return
	}
	d.event(corev1.EventTypeNormal, ReasonPayoutFound, "the provider knows payout %s (%s) again, lost since %s",
		cur.Reference, cur.ProviderID, cur.LostAt.UTC().Format(time.RFC3339))
	cur.LostAt = nil
}

// followReturn records what the provider says about a completed payout: Rejected is a return
// (the recipient's bank sent the money back and the provider cancelled the payout), which makes
// the deposit owed again; Accepted is a bounce the provider may still send again or cancel.
func followReturn(d *decision, p *ProviderPayout) {
	cur := d.st.Payout
	msg := p.Message
	if msg == "" {
		msg = "no reason given"
	}
	switch p.State {
	case payoutv1.PayoutRejected:
		cur.Returned = &payoutv1.PayoutReturn{At: d.now(), Message: truncate(msg, 512)}
		d.event(corev1.EventTypeWarning, ReasonPayoutReturned, "the recipient's bank returned payout %s of %s %s after it was sent (%s): the deposit is owed to its sender, `kubectl payout refund %s` sends it back",
			cur.ProviderID, cur.TargetAmount, d.t.Spec.Quote.TargetCurrency, truncate(msg, 300), d.t.Name)
	case payoutv1.PayoutAccepted, payoutv1.PayoutRequested:
		d.event(corev1.EventTypeWarning, ReasonPayoutBounced, "the recipient's bank sent payout %s back (%s); the provider may send it again or cancel it", cur.ProviderID, truncate(msg, 300))
	}
}

// Attention is the NeedsAttention condition that t's payout facts call for (Type, Status, Reason
// and Message set), and false when t needs no person and never did: the condition is then left
// absent, so only the transfers that needed one carry it.
func Attention(t *payoutv1.Transfer) (metav1.Condition, bool) {
	c := metav1.Condition{Type: payoutv1.NeedsAttentionCondition, Status: metav1.ConditionTrue}
	p := t.Status.Payout
	switch {
	case p != nil && p.Returned != nil && t.Status.Refund == nil:
		c.Reason = ReasonPayoutReturned
		c.Message = fmt.Sprintf("the recipient's bank returned payout %s at %s (%s)", p.ProviderID, p.Returned.At.UTC().Format(time.RFC3339), p.Returned.Message)
		if dep := t.Status.Deposit; dep != nil {
			c.Message += fmt.Sprintf("; the deposit of %s %s is owed to %s: `kubectl payout refund %s`", TokenAmount(dep.Amount), dep.Token, dep.From, t.Name)
		}
	case p != nil && p.Returned != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonReturnRefunded
		c.Message = fmt.Sprintf("the recipient's bank returned payout %s at %s; the deposit was refunded in %s", p.ProviderID, p.Returned.At.UTC().Format(time.RFC3339), t.Status.Refund.TxHash)
	case p != nil && p.LostAt != nil:
		c.Reason = ReasonPayoutLost
		c.Message = fmt.Sprintf("the provider does not know payout %s (%s) that it accepted, since %s: nothing is created again; ask the provider's support what became of it",
			p.Reference, p.ProviderID, p.LostAt.UTC().Format(time.RFC3339))
	default:
		for _, have := range t.Status.Conditions {
			if have.Type == payoutv1.NeedsAttentionCondition {
				c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonPayoutFound, "the provider knows the payout again"
				return c, true
			}
		}
		return c, false
	}
	c.Message = truncate(c.Message, 1024)
	return c, true
}
