package transfer

import (
	"reflect"
	"strings"
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TestPayoutStep walks every row of PayoutStep: what the controller does about a stored payout
// intent given the provider's answer, and whether money may move.
func TestPayoutStep(t *testing.T) {
	intent := func(state payoutv1.PayoutState, providerID string) *payoutv1.PayoutFacts {
		return &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: state, ProviderID: providerID, TargetAmount: "21.56"}
	}
	requested := intent(payoutv1.PayoutRequested, "")
	unnamed := &payoutv1.PayoutFacts{Reference: id, State: payoutv1.PayoutRequested} // an intent of a release that did not name its provider
	const window = 42 * 24 * time.Hour
	held := func(state payoutv1.PayoutState, mods ...func(*PayoutAnswer)) PayoutAnswer {
		a := PayoutAnswer{Provider: "simbank", ReturnWindow: window, Reference: id,
			Payout: &ProviderPayout{Found: true, State: state, ProviderID: "po_1", TargetAmount: "21.56"}}
		for _, m := range mods {
			m(&a)
		}
		return a
	}
	none := PayoutAnswer{Provider: "simbank", ReturnWindow: window}
	unfunded := func(a *PayoutAnswer) { a.Unfunded = true }
	created := func(a *PayoutAnswer) { a.Created = true }
	reference := func(ref string) func(*PayoutAnswer) { return func(a *PayoutAnswer) { a.Reference = ref } }
	why := func(msg string) func(*PayoutAnswer) { return func(a *PayoutAnswer) { a.Payout.Message = msg } }
	followed := func(state payoutv1.PayoutState, msg string) *ProviderPayout {
		return &ProviderPayout{Found: true, State: state, ProviderID: "po_1", TargetAmount: "21.56", Message: msg, ReturnWindow: window}
	}
	notFound := &ProviderPayout{Found: false}

	for _, c := range []struct {
		name       string
		stored     *payoutv1.PayoutFacts
		ans        PayoutAnswer
		moneyMoves bool
		kind       PayKind
		provider   *ProviderPayout
		refuse     string
	}{
		// asked by reference, after the intent was stored (and after a restart: ask before create)
		{name: "requested, none held: create", stored: requested, ans: none, moneyMoves: true, kind: PayCreate},
		{name: "requested, none held, money paused: wait, nothing created", stored: requested, ans: none, kind: PayWait, provider: notFound},
		{name: "requested, held unfunded: create funds it", stored: requested, ans: held(payoutv1.PayoutRequested, unfunded), moneyMoves: true, kind: PayCreate},
		{name: "requested, held unfunded, money paused: wait, not funded", stored: requested, ans: held(payoutv1.PayoutRequested, unfunded),
			kind: PayWait, provider: &ProviderPayout{Found: true, State: payoutv1.PayoutRequested, ProviderID: "po_1", TargetAmount: "21.56"}},
		{name: "requested, held accepted (created before a crash): follow, never created again", stored: requested, ans: held(payoutv1.PayoutAccepted), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutAccepted, "")},
		{name: "requested, held accepted, money paused: follow", stored: requested, ans: held(payoutv1.PayoutAccepted), kind: PayFollow, provider: followed(payoutv1.PayoutAccepted, "")},
		{name: "requested, held rejected by the bank: follow (the transfer fails)", stored: requested, ans: held(payoutv1.PayoutRejected, why("account closed")), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutRejected, "account closed")},
		{name: "requested, held without a reference: follow", stored: requested, ans: held(payoutv1.PayoutAccepted, reference("")), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutAccepted, "")},
		{name: "requested, held under another reference: refuse", stored: requested, ans: held(payoutv1.PayoutAccepted, reference("someone-else")), moneyMoves: true,
			kind: PayRefuse, refuse: `the provider answered for reference "someone-else", not "` + id + `"`},
		{name: "intent of no named provider, none held: create", stored: unnamed, ans: none, moneyMoves: true, kind: PayCreate},

		// lost: the provider gave the payout an id, or accepted it, and holds none under the id nor the reference
		{name: "requested with an id, none held: lost, never created again", stored: intent(payoutv1.PayoutRequested, "po_1"), ans: none, moneyMoves: true, kind: PayLost, provider: notFound},
		{name: "accepted, none held: lost, never created again", stored: intent(payoutv1.PayoutAccepted, "po_1"), ans: none, moneyMoves: true, kind: PayLost, provider: notFound},
		{name: "accepted, none held, money paused: lost", stored: intent(payoutv1.PayoutAccepted, "po_1"), ans: none, kind: PayLost, provider: notFound},
		{name: "completed, none held at a return check: lost", stored: intent(payoutv1.PayoutCompleted, "po_1"), ans: none, moneyMoves: true, kind: PayLost, provider: notFound},
		{name: "accepted without an id, none held: lost", stored: intent(payoutv1.PayoutAccepted, ""), ans: none, moneyMoves: true, kind: PayLost, provider: notFound},

		// asked by id
		{name: "accepted, held completed: follow with the return window", stored: intent(payoutv1.PayoutAccepted, "po_1"), ans: held(payoutv1.PayoutCompleted), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutCompleted, "")},
		{name: "accepted, held unfunded: create funds it", stored: intent(payoutv1.PayoutAccepted, "po_1"), ans: held(payoutv1.PayoutRequested, unfunded), moneyMoves: true, kind: PayCreate},
		{name: "completed, held rejected at a return check: follow (returned)", stored: intent(payoutv1.PayoutCompleted, "po_1"), ans: held(payoutv1.PayoutRejected, why("returned")), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutRejected, "returned")},

		// another provider's intent: nobody is asked, nothing is created
		{name: "another provider's intent: refuse", stored: &payoutv1.PayoutFacts{Reference: id, Provider: "wise", State: payoutv1.PayoutRequested}, ans: none, moneyMoves: true,
			kind: PayRefuse, refuse: `the payout intent names provider "wise" but this deployment pays through "simbank"`},

		// Create's answer: never a second create
		{name: "created: follow", stored: requested, ans: held(payoutv1.PayoutAccepted, created), moneyMoves: true, kind: PayFollow, provider: followed(payoutv1.PayoutAccepted, "")},
		{name: "created, still unfunded: follow, no second create", stored: requested, ans: held(payoutv1.PayoutRequested, created, unfunded), moneyMoves: true,
			kind: PayFollow, provider: followed(payoutv1.PayoutRequested, "")},
		{name: "created, refused by the provider: rejected", stored: requested, ans: PayoutAnswer{Provider: "simbank", Created: true, Refused: true, RefusedWhy: "iban is invalid"}, moneyMoves: true,
			kind: PayRejected, provider: &ProviderPayout{Found: true, State: payoutv1.PayoutRejected, Message: "iban is invalid"}},
		{name: "created under another reference: refuse", stored: requested, ans: held(payoutv1.PayoutAccepted, created, reference("someone-else")), moneyMoves: true,
			kind: PayRefuse, refuse: `the provider answered for reference "someone-else", not "` + id + `"`},
		{name: "created, no payout answered: refuse, no second create", stored: requested, ans: PayoutAnswer{Provider: "simbank", Created: true}, moneyMoves: true,
			kind: PayRefuse, refuse: "with no payout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PayoutStep(c.stored, c.ans, c.moneyMoves)
			if got.Kind != c.kind {
				t.Fatalf("kind %s, want %s (%+v)", got.Kind, c.kind, got)
			}
			if !reflect.DeepEqual(got.Provider, c.provider) {
				t.Errorf("provider's word %+v, want %+v", got.Provider, c.provider)
			}
			if (got.Refuse == "") != (c.refuse == "") || !strings.Contains(got.Refuse, c.refuse) {
				t.Errorf("refuse %q, want %q", got.Refuse, c.refuse)
			}
		})
	}
}
