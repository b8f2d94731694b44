package transfer

import (
	"fmt"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The payout of a stored intent, step by step (the protocol of package fiat): the controller
// asks the provider about the intent (by the id the provider gave it, by reference before or
// when the provider no longer knows the id), PayoutStep says what to do with the answer, and
// only a PayCreate step calls the provider's Create, whose answer goes through PayoutStep again.
// Only an intent read back from the API server is ever asked about, so a payout is created only
// after its intent is stored.

// PayoutAnswer is what the provider said about a stored payout intent: to a lookup, or to the
// create that followed one (Created).
type PayoutAnswer struct {
	// Provider names the provider this deployment pays through. It is not asked about an intent
	// that names another one.
	Provider string
	// ReturnWindow is that provider's return window (fiat.Provider.ReturnWindow).
	ReturnWindow time.Duration
	// Payout is the payout the provider holds under the intent's id or reference; nil when it
	// holds none.
	Payout *ProviderPayout
	// Reference is the reference the provider's payout carries; "" when it did not say.
	Reference string
	// Unfunded: the payout exists but is not funded yet (fiat.StatePending); no money is
	// committed, and Create with the same request funds it.
	Unfunded bool
	// Created: the answer is Create's.
	Created bool
	// Refused: the provider refused the create itself (a Permanent error), RefusedWhy says why;
	// no payout exists or ever will.
	Refused    bool
	RefusedWhy string
}

// PayKind names what the controller does about a stored payout intent.
type PayKind string

const (
	// PayFollow: the provider holds the payout; Decide follows its word (Provider).
	PayFollow PayKind = "Follow"
	// PayCreate: the provider holds no payout of a requested intent it never gave an id, or
	// holds it unfunded, and money may move: create (fund) it, then ask PayoutStep again with
	// Create's answer. Create is idempotent by reference: a crash after it is recovered by the
	// next pass finding the payout.
	PayCreate PayKind = "Create"
	// PayWait: the provider holds no payout of a requested intent, or holds it unfunded, and
	// money may not move now: nothing is created; Decide says why the transfer waits.
	PayWait PayKind = "Wait"
	// PayLost: the provider holds no payout under the id and the reference of a payout it had
	// accepted (or given an id): it may have paid, so nothing is ever created again.
	PayLost PayKind = "Lost"
	// PayRejected: the provider refused the create itself: no payout exists or ever will; the
	// transfer fails (Provider says why).
	PayRejected PayKind = "Rejected"
	// PayRefuse: the provider's records and the intent contradict each other (another
	// provider's intent, another reference's payout): nothing is done and a person must look
	// (Refuse says why).
	PayRefuse PayKind = "Refuse"
)

// PayStep is what PayoutStep says to do.
type PayStep struct {
	Kind PayKind
	// Provider is the provider's word for Decide (Input.Provider); nil for PayCreate and
	// PayRefuse.
	Provider *ProviderPayout
	// Refuse says why the controller stops (PayRefuse).
	Refuse string
}

// PayoutStep says what to do about the stored payout intent given the provider's answer, and
// whether money may move now (no Input.Paused). It is pure; its rows, in order:
//
//	intent names another provider                          → Refuse
//	Create's answer: refused                               → Rejected
//	Create's answer: another reference's payout, or none   → Refuse
//	Create's answer                                        → Follow
//	none held, the intent accepted or given an id          → Lost (never created again)
//	none held, or unfunded, and money may not move         → Wait
//	none held, or unfunded                                 → Create
//	another reference's payout                             → Refuse
//	otherwise                                              → Follow
func PayoutStep(stored *payoutv1.PayoutFacts, ans PayoutAnswer, moneyMoves bool) PayStep {
	if stored.Provider != "" && stored.Provider != ans.Provider {
		return PayStep{Kind: PayRefuse, Refuse: fmt.Sprintf("the payout intent names provider %q but this deployment pays through %q", stored.Provider, ans.Provider)}
	}
	if ans.Created {
		switch {
		case ans.Refused:
			return PayStep{Kind: PayRejected, Provider: &ProviderPayout{Found: true, State: payoutv1.PayoutRejected, Message: ans.RefusedWhy}}
		case ans.Payout == nil:
			return PayStep{Kind: PayRefuse, Refuse: fmt.Sprintf("the provider answered the create of payout %s with no payout", stored.Reference)}
		}
		return follow(stored, ans)
	}
	if ans.Payout == nil && (stored.State != payoutv1.PayoutRequested || stored.ProviderID != "") {
		return PayStep{Kind: PayLost, Provider: &ProviderPayout{Found: false}}
	}
	if ans.Payout == nil || ans.Unfunded {
		if !moneyMoves {
			p := ProviderPayout{Found: false}
			if ans.Payout != nil {
				p = *ans.Payout
			}
			return PayStep{Kind: PayWait, Provider: &p}
		}
		return PayStep{Kind: PayCreate}
	}
	return follow(stored, ans)
}

// follow is the step for a payout the provider holds: followed, unless it carries another
// reference than the intent's.
func follow(stored *payoutv1.PayoutFacts, ans PayoutAnswer) PayStep {
	if ans.Reference != "" && ans.Reference != stored.Reference {
		return PayStep{Kind: PayRefuse, Refuse: fmt.Sprintf("the provider answered for reference %q, not %q", ans.Reference, stored.Reference)}
	}
	p := *ans.Payout
	p.ReturnWindow = ans.ReturnWindow
	return PayStep{Kind: PayFollow, Provider: &p}
}
