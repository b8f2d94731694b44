package archive

import (
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/internal/treasury"
)

// Reason says why a transfer or recipient stays live (or, Due, that it goes to the archive).
type Reason string

const (
	// Due: ended longer ago than the retention, nothing owed or in flight: archive it.
	Due Reason = "Due"
	// NotEnded: neither completed, failed nor refunded.
	NotEnded Reason = "NotEnded"
	// Deleting: the object is being deleted already.
	Deleting Reason = "Deleting"
	// MoneyOwed: the transfer owes a sender money that no confirmed refund has sent back
	// (transfer.OwedOf: a failed transfer's deposit, or any stray deposit, refunded once each by
	// `kubectl payout refund`), or a failed transfer's deposit is still on its way to depth. The
	// transfer stays live until every refund is confirmed.
	MoneyOwed = Reason(transfer.HoldMoneyOwed)
	// DepositUnrecorded: a Deposit object of the transfer is not in its status yet (the
	// transfer controller has not seen it): archiving now could lose track of the funds.
	DepositUnrecorded = Reason(transfer.HoldDepositUnrecorded)
	// ProviderUnchecked: failed with a deposit, and the provider was not asked by reference
	// whether it holds a payout of the transfer (a failure recorded before that was asked): the
	// transfer controller asks on its next pass; until then the transfer stays live.
	ProviderUnchecked Reason = "ProviderUnchecked"
	// RefundInFlight: a refund was asked for and has not reached an end.
	RefundInFlight = Reason(transfer.HoldRefundInFlight)
	// SweepUnrecorded: a deposit of the transfer is the platform's to sweep (treasury.Judge) on a
	// network with a treasury, and the sweeper has not stored its Sweep yet. The sweeper finds
	// what to sweep from the Deposits: archiving the transfer deletes them, and the tokens would
	// stay at the deposit address, swept by nothing (docs/operations/sweeper.md).
	SweepUnrecorded Reason = "SweepUnrecorded"
	// MailPending: the outcome e-mail is not sent (nor given up on) yet.
	MailPending Reason = "MailPending"
	// RecipientPending: the transfer controller has yet to delete the recipient (spec 2.1).
	RecipientPending Reason = "RecipientPending"
	// QuoteUnexpired: the transfer's quote could still be used, and the transfer's name (its id)
	// is what makes a quote single-use: it must not be free before the quote expires.
	QuoteUnexpired Reason = "QuoteUnexpired"
	// Retained: ended, but within the retention (or its completed payout's return window).
	Retained Reason = "Retained"
	// LineageLive: a transfer of the recipient's lineage is still live.
	LineageLive Reason = "LineageLive"
	// Active: the recipient takes transfers.
	Active Reason = "Active"
)

// TransferInput is what the archiver observed about one transfer.
type TransferInput struct {
	Transfer *payoutv1.Transfer
	// Deposits are the Deposit objects recorded for the transfer (v1).
	Deposits []payoutv1.Deposit
	// Refunds are the transfer's refund requests: of its deposit (named after it) and of its
	// stray deposits.
	Refunds []payoutv1.Refund
	// HashHeld: the transfer holds the claim on its v2 hash (when it released the hash, only a
	// refund of its deposit takes it back).
	HashHeld bool
	// RecipientActive: the newest recipient of the transfer's recipient's lineage still takes
	// transfers (the transfer controller deletes it after the end unless keepRecipient).
	RecipientActive bool
	// QuoteExpiresAt is the expiry of the transfer's quote while the Quote object exists; zero
	// once it is gone.
	QuoteExpiresAt time.Time
	// Swept are the networks with a treasury (networks.<name>.treasury), where the sweeper moves
	// deposits; empty in an installation that sweeps nothing, whose transfers never wait for a
	// Sweep. Sweeps are the names of the transfer's deposits that have one (a Sweep is named
	// and placed as its Deposit).
	Swept  map[payoutv1.Network]bool
	Sweeps map[string]bool
	// Mailing: outcome e-mails are sent in this deployment, so the transfer waits for its own.
	Mailing bool
	// Now and Retention.
	Now       time.Time
	Retention time.Duration
}

// Verdict is the archiver's decision on one object.
type Verdict struct {
	// Reason is Due when the object goes to the archive, else why it stays.
	Reason Reason
	// At is when the object becomes due if nothing else changes (for Retained and
	// QuoteUnexpired); zero when only a change of the object can make it due.
	At time.Time
}

// Due reports whether the verdict is to archive.
func (v Verdict) Due() bool { return v.Reason == Due }

// EndedAt is the moment a finished transfer last changed: the retention counts from it, so a
// late fact (a refund, a stray deposit, a mail) restarts it.
func EndedAt(t *payoutv1.Transfer) time.Time {
	if t.Status.UpdatedAt != nil {
		return t.Status.UpdatedAt.Time
	}
	return t.CreationTimestamp.Time
}

// DecideTransfer says whether a transfer goes to the archive now. The checks run in order;
// the first that holds it back is the verdict. Money comes first: a transfer that owes money
// or may still receive it stays live whatever its age.
func DecideTransfer(in TransferInput) Verdict {
	t := in.Transfer
	st := &t.Status
	switch {
	case !t.DeletionTimestamp.IsZero():
		return Verdict{Reason: Deleting}
	case !transfer.Ended(t):
		return Verdict{Reason: NotEnded}
	}
	if f := st.Failure; f != nil && !f.ProviderChecked && st.Deposit != nil && st.Payout == nil && !transfer.DepositArriving(t) {
		return Verdict{Reason: ProviderUnchecked}
	}
	if h := transfer.MoneyHeld(t, in.Deposits, in.Refunds, in.HashHeld); h != "" {
		return Verdict{Reason: Reason(h)}
	}
	if unswept(in) {
		return Verdict{Reason: SweepUnrecorded}
	}
	switch {
	case in.Mailing && t.Spec.CustomerEmail != "" && !mailed(st) && !transfer.QuietFailure(t):
		return Verdict{Reason: MailPending}
	case !t.Spec.KeepRecipient && in.RecipientActive:
		return Verdict{Reason: RecipientPending}
	case !in.QuoteExpiresAt.IsZero() && in.Now.Before(in.QuoteExpiresAt):
		return Verdict{Reason: QuoteUnexpired, At: later(in.QuoteExpiresAt, retainedUntil(t, in.Retention))}
	}
	if due := retainedUntil(t, in.Retention); in.Now.Before(due) {
		return Verdict{Reason: Retained, At: due}
	}
	return Verdict{Reason: Due}
}

// unswept reports whether a deposit of the transfer is due for a sweep (by the sweeper's own
// rules, treasury.Judge) on a swept network and has no Sweep yet. A stray deposit an operator
// may still write off is not due until the write-off's Sweep exists, which this then sees.
func unswept(in TransferInput) bool {
	for i := range in.Deposits {
		d := &in.Deposits[i]
		if !in.Swept[d.Spec.Network] || in.Sweeps[d.Name] {
			continue
		}
		if treasury.Judge(in.Transfer, in.Deposits, in.Refunds, d, false).Due {
			return true
		}
	}
	return false
}

// retainedUntil is when a finished transfer's retention ends: retention after its last change,
// and not before its completed payout's return window closes (the transfer controller asks the
// provider about a return until then, which it can only do for a live transfer).
func retainedUntil(t *payoutv1.Transfer, retention time.Duration) time.Time {
	due := EndedAt(t).Add(retention)
	if p := t.Status.Payout; p != nil && p.Returned == nil && p.ReturnWindowEndsAt != nil {
		due = later(due, p.ReturnWindowEndsAt.Time)
	}
	return due
}

// mailed reports whether the outcome e-mail of a finished transfer was sent or given up on.
func mailed(st *payoutv1.TransferStatus) bool {
	kind := payoutv1.NotificationPayoutSent
	if st.Failure != nil {
		kind = payoutv1.NotificationFailed
	}
	return transfer.Mailed(st, kind)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RecipientInput is what the archiver observed about one recipient.
type RecipientInput struct {
	Recipient *payoutv1.Recipient
	// LineageLive: some transfer of the recipient's lineage (any of its ids) is still live.
	LineageLive bool
	Now         time.Time
	Retention   time.Duration
}

// DecideRecipient says whether a recipient goes to the archive now: deactivated (deleted
// through the API, after its transfer, or replaced by an update), no transfer of its lineage
// left live (the transfer controller reads the lineage of every live transfer), and deleted
// longer ago than the retention (the deletion time when the API recorded one, else the
// recipient's creation: a recipient deleted after a transfer is reached only once that
// transfer left, itself a retention after it ended).
func DecideRecipient(in RecipientInput) Verdict {
	rc := in.Recipient
	switch {
	case !rc.DeletionTimestamp.IsZero():
		return Verdict{Reason: Deleting}
	case !rc.Spec.Deactivated:
		return Verdict{Reason: Active}
	case in.LineageLive:
		return Verdict{Reason: LineageLive}
	}
	since := rc.CreationTimestamp.Time
	if at, ok := rc.DeletedAt(); ok && at.After(since) {
		since = at
	}
	if due := since.Add(in.Retention); in.Now.Before(due) {
		return Verdict{Reason: Retained, At: due}
	}
	return Verdict{Reason: Due}
}
