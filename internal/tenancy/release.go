package tenancy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Contents is what an account's namespace holds that bears on money, read past the cache.
type Contents struct {
	Transfers []payoutv1.Transfer
	Deposits  []payoutv1.Deposit
	Refunds   []payoutv1.Refund
	// HashHeld names the transfers that hold the claim on their v2 hash (transfer.OwedOf).
	HashHeld map[string]bool
	// Now is when they were read: a completed payout's return window is open until its end.
	Now time.Time
}

// Held is one thing that keeps an account, and its namespace, from being deleted.
type Held struct {
	// Transfer is the transfer's id; Refund the refund's name when a refund without a live
	// transfer holds it.
	Transfer, Refund string
	// Why, for people.
	Why string
}

// Holds lists what keeps a deleted account's namespace (c) from going, transfers by id, then
// refunds: an ended transfer that owes money, has a refund on its way or a deposit it has not
// recorded yet (transfer.MoneyHeld); a transfer that has not ended and can still receive money
// (a v1 transfer until it expires, a v2 transfer whose hash is confirmed); a completed payout
// whose return window is open (a return makes its deposit owed again, and only a live transfer
// hears of it, as the archiver knows); a refund of a transfer that is gone, until it is
// confirmed or refused. A v2 transfer without a hash holds
// nothing: no deposit can be matched to it once its account's keys are refused. None means the
// namespace may go.
func Holds(c Contents) []Held {
	deps := map[string][]payoutv1.Deposit{}
	for _, d := range c.Deposits {
		deps[d.Spec.Transfer] = append(deps[d.Spec.Transfer], d)
	}
	refunds := map[string][]payoutv1.Refund{}
	for _, rf := range c.Refunds {
		refunds[rf.Spec.Transfer] = append(refunds[rf.Spec.Transfer], rf)
	}
	transfers := append([]payoutv1.Transfer(nil), c.Transfers...)
	sort.Slice(transfers, func(i, j int) bool { return transfers[i].Name < transfers[j].Name })
	var out []Held
	live := map[string]bool{}
	for i := range transfers {
		t := &transfers[i]
		live[t.Name] = true
		if why := openWhy(t); why != "" {
			out = append(out, Held{Transfer: t.Name, Why: why})
			continue
		}
		if !transfer.Ended(t) {
			continue
		}
		switch transfer.MoneyHeld(t, deps[t.Name], refunds[t.Name], c.HashHeld[t.Name]) {
		case transfer.HoldMoneyOwed:
			out = append(out, Held{Transfer: t.Name, Why: fmt.Sprintf("transfer %s owes its senders money: refund it with `kubectl payout refund %s`", t.Name, t.Name)})
		case transfer.HoldRefundInFlight:
			out = append(out, Held{Transfer: t.Name, Why: fmt.Sprintf("a refund of transfer %s is on its way", t.Name)})
		case transfer.HoldDepositUnrecorded:
			out = append(out, Held{Transfer: t.Name, Why: fmt.Sprintf("transfer %s has a deposit it has not recorded yet", t.Name)})
		default:
			if p := t.Status.Payout; p != nil && p.Returned == nil && p.ReturnWindowEndsAt != nil && c.Now.Before(p.ReturnWindowEndsAt.Time) {
				out = append(out, Held{Transfer: t.Name, Why: fmt.Sprintf("the payout of transfer %s may still be returned by the recipient's bank until %s (--fiat-return-window): its deposit would be owed again",
					t.Name, p.ReturnWindowEndsAt.UTC().Format("2006-01-02 15:04:05 MST"))})
			}
		}
	}
	rfs := append([]payoutv1.Refund(nil), c.Refunds...)
	sort.Slice(rfs, func(i, j int) bool { return rfs[i].Name < rfs[j].Name })
	for _, rf := range rfs {
		if live[rf.Spec.Transfer] || rf.Status.State == payoutv1.RefundConfirmed || rf.Status.State == payoutv1.RefundRefused {
			continue
		}
		out = append(out, Held{Transfer: rf.Spec.Transfer, Refund: rf.Name, Why: fmt.Sprintf("refund %s of transfer %s is on its way", rf.Name, rf.Spec.Transfer)})
	}
	return out
}

// openWhy says why a transfer that has not ended holds its account, "" when it does not.
func openWhy(t *payoutv1.Transfer) string {
	phase := transfer.Phase(t)
	switch {
	case transfer.Ended(t):
		return ""
	case t.Status.Deposit != nil && t.Status.Deposit.ConfirmedAt != nil:
		return fmt.Sprintf("transfer %s is %s: its deposit arrived and its payout has not ended", t.Name, phase)
	case t.Spec.Method == payoutv1.TransferV1 && t.Spec.ExpiresAt != nil:
		return fmt.Sprintf("transfer %s is open until it expires at %s: its deposit may still arrive", t.Name, t.Spec.ExpiresAt.UTC().Format("2006-01-02 15:04:05 MST"))
	case t.Spec.Method == payoutv1.TransferV1:
		return fmt.Sprintf("transfer %s is open: its deposit may still arrive", t.Name)
	case t.Spec.TxHash != "":
		return fmt.Sprintf("transfer %s waits for its transaction %s", t.Name, t.Spec.TxHash)
	}
	return ""
}

// maxHeldListed bounds the holds one message names.
const maxHeldListed = 5

// HoldsMessage says, for `kubectl describe payoutaccount`, what a deleted account waits for.
func HoldsMessage(holds []Held) string {
	whys := make([]string, 0, maxHeldListed)
	for i, h := range holds {
		if i == maxHeldListed {
			whys = append(whys, fmt.Sprintf("and %d more", len(holds)-maxHeldListed))
			break
		}
		whys = append(whys, h.Why)
	}
	return "the account and its namespace are deleted once nothing in them is owed; waiting: " + strings.Join(whys, "; ")
}
