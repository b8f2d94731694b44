package docgen

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// A fact is one thing the transfer controller records in a transfer (or a caller in its spec),
// with the condition under which the machine can record it. The phase is never written by
// hand: the diagram applies facts to a transfer and asks transfer.Phase what it reads, so a
// change to how phases are derived changes the picture.
type fact struct {
	label string
	// can reports whether t can take the fact in its state.
	can func(t *payoutv1.Transfer) bool
	// add records it.
	add func(t *payoutv1.Transfer)
}

var epoch = metav1.Unix(1_700_000_000, 0)

func v2(t *payoutv1.Transfer) bool { return t.Spec.Method == payoutv1.TransferV2 }

// open: no failure and no payout the provider has completed (after which nothing fails it).
func open(t *payoutv1.Transfer) bool {
	st := &t.Status
	return st.Failure == nil && (st.Payout == nil || st.Payout.State != payoutv1.PayoutCompleted)
}

func confirmed(t *payoutv1.Transfer) bool {
	return t.Status.Deposit != nil && t.Status.Deposit.ConfirmedAt != nil
}

var facts = []fact{
	{"hash confirmed", func(t *payoutv1.Transfer) bool {
		return v2(t) && t.Spec.TxHash == "" && open(t) && t.Status.Payout == nil
	}, func(t *payoutv1.Transfer) { t.Spec.TxHash = "0xfeed" }},
	{"transaction found", func(t *payoutv1.Transfer) bool {
		return v2(t) && t.Spec.TxHash != "" && t.Status.Deposit == nil && open(t)
	}, func(t *payoutv1.Transfer) { t.Status.Deposit = &payoutv1.DepositFacts{TxHash: "0xfeed"} }},
	{"reorg", func(t *payoutv1.Transfer) bool {
		return v2(t) && t.Status.Deposit != nil && !confirmed(t) && open(t)
	}, func(t *payoutv1.Transfer) { t.Status.Deposit = nil }},
	{"deposit at depth", func(t *payoutv1.Transfer) bool {
		if !open(t) || confirmed(t) {
			return false
		}
		return !v2(t) || t.Status.Deposit != nil // v1: the watcher records deposits at depth only
	}, func(t *payoutv1.Transfer) {
		if t.Status.Deposit == nil {
			t.Status.Deposit = &payoutv1.DepositFacts{TxHash: "0xfeed"}
		}
		t.Status.Deposit.ConfirmedAt = &epoch
	}},
	{"payout intent", func(t *payoutv1.Transfer) bool {
		return confirmed(t) && open(t) && t.Status.Payout == nil
	}, func(t *payoutv1.Transfer) {
		t.Status.Payout = &payoutv1.PayoutFacts{State: payoutv1.PayoutRequested, RequestedAt: epoch}
	}},
	{"provider accepted", func(t *payoutv1.Transfer) bool {
		return open(t) && t.Status.Payout != nil && t.Status.Payout.State == payoutv1.PayoutRequested
	}, func(t *payoutv1.Transfer) { t.Status.Payout.State = payoutv1.PayoutAccepted }},
	{"payout completed", func(t *payoutv1.Transfer) bool {
		return open(t) && t.Status.Payout != nil && t.Status.Payout.State == payoutv1.PayoutAccepted
	}, func(t *payoutv1.Transfer) { t.Status.Payout.State = payoutv1.PayoutCompleted }},
	{"payout returned", func(t *payoutv1.Transfer) bool {
		p := t.Status.Payout
		return p != nil && p.State == payoutv1.PayoutCompleted && p.Returned == nil
	}, func(t *payoutv1.Transfer) { t.Status.Payout.Returned = &payoutv1.PayoutReturn{At: epoch} }},
	{"failure", open, func(t *payoutv1.Transfer) {
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, At: epoch}
	}},
	{"refund at depth", func(t *payoutv1.Transfer) bool {
		// a deposit owed back (OwesDeposit) is refunded once it arrived
		return transfer.OwesDeposit(t) && confirmed(t) && t.Status.Refund == nil
	}, func(t *payoutv1.Transfer) {
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xbeef", ConfirmedAt: epoch}
	}},
}

// Edge is a change of phase and the facts that make it.
type Edge struct {
	From, To payoutv1.TransferPhase
	Facts    []string
}

// Lifecycle walks every sequence of facts a v1 and a v2 transfer can take, from their creation,
// and returns the starting phase of each method, the phase changes met, in the order first met
// (facts that leave the phase as it is, such as a payout intent, draw no edge), and the phases a
// transfer can end in (some state of it takes no fact that changes the phase).
func Lifecycle() (starts map[payoutv1.TransferMethod]payoutv1.TransferPhase, edges []Edge, ends []payoutv1.TransferPhase) {
	starts = map[payoutv1.TransferMethod]payoutv1.TransferPhase{}
	index := map[[2]payoutv1.TransferPhase]int{}
	for _, method := range []payoutv1.TransferMethod{payoutv1.TransferV1, payoutv1.TransferV2} {
		t := &payoutv1.Transfer{Spec: payoutv1.TransferSpec{Method: method}}
		starts[method] = transfer.Phase(t)
		seen := map[string]bool{}
		queue := []*payoutv1.Transfer{t}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			moves := false
			for _, f := range facts {
				if !f.can(cur) {
					continue
				}
				next := cur.DeepCopy()
				f.add(next)
				from, to := transfer.Phase(cur), transfer.Phase(next)
				if from != to {
					moves = true
					k := [2]payoutv1.TransferPhase{from, to}
					i, ok := index[k]
					if !ok {
						i = len(edges)
						index[k] = i
						edges = append(edges, Edge{From: from, To: to})
					}
					if !slices.Contains(edges[i].Facts, f.label) {
						edges[i].Facts = append(edges[i].Facts, f.label)
					}
				}
				if key := stateKey(next); !seen[key] {
					seen[key] = true
					queue = append(queue, next)
				}
			}
			if p := transfer.Phase(cur); !moves && !slices.Contains(ends, p) {
				ends = append(ends, p)
			}
		}
	}
	return starts, edges, ends
}

// stateKey names the facts a transfer holds, so each combination is walked once.
func stateKey(t *payoutv1.Transfer) string {
	st := &t.Status
	var payout, returned string
	if st.Payout != nil {
		payout = string(st.Payout.State)
		returned = fmt.Sprint(st.Payout.Returned != nil)
	}
	return fmt.Sprint(t.Spec.TxHash != "", st.Deposit != nil, confirmed(t), payout, returned,
		st.Failure != nil, st.Refund != nil)
}

// LifecycleMermaid renders Lifecycle as a mermaid state diagram.
func LifecycleMermaid() string {
	starts, edges, ends := Lifecycle()
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s: v1 created\n", starts[payoutv1.TransferV1])
	fmt.Fprintf(&b, "    [*] --> %s: v2 created\n", starts[payoutv1.TransferV2])
	for _, e := range edges {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e.From, e.To, strings.Join(e.Facts, ", "))
	}
	for _, p := range ends {
		fmt.Fprintf(&b, "    %s --> [*]\n", p)
	}
	b.WriteString("```\n")
	return b.String()
}
