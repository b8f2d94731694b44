package transfer

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// Decision is what Decide returns: the next status (facts, then the phase derived from them and
// a history line when it changed), the side effects to perform before persisting it, the events
// to record, and when to look again.
type Decision struct {
	Status       payoutv1.TransferStatus
	Actions      []Action
	Events       []Event
	RequeueAfter time.Duration
}

// ActionKind names a side effect the controller performs after deciding. None of them moves
// money: the payout is called only for an intent already stored (see Pending), and refunds are
// the refund controller's.
type ActionKind string

const (
	// ActNotify mails an outcome to the customer; the controller records it once sent.
	ActNotify ActionKind = "Notify"
	// ActDeleteRecipient deletes (deactivates) the recipient after the transfer ended (spec 2.1).
	ActDeleteRecipient ActionKind = "DeleteRecipient"
)

// Action is one side effect.
type Action struct {
	Kind ActionKind
	// Notification is the outcome to mail (ActNotify).
	Notification payoutv1.NotificationKind
	// RecipientID is the recipient to delete (ActDeleteRecipient).
	RecipientID int64
}

// Event is a Kubernetes event to record on the transfer.
type Event struct {
	Type, Reason, Message string
}

// Reasons of the history lines and events, besides the failure reasons.
const (
	ReasonCreated          = "Created"
	ReasonHashRecorded     = "HashRecorded"
	ReasonDepositSeen      = "DepositSeen"
	ReasonDepositReorged   = "DepositReorged"
	ReasonDepositConfirmed = "DepositConfirmed"
	ReasonPayoutAccepted   = "PayoutAccepted"
	ReasonPayoutCompleted  = "PayoutCompleted"
	ReasonRefunded         = "Refunded"
	ReasonDepositAfterEnd  = "DepositAfterEnd"
	ReasonStrayDeposit     = "StrayDeposit"
	ReasonProviderLost     = "ProviderLostPayout"
	ReasonPayoutUnpriced   = "PayoutUnpriced"
)

// Polling intervals: the provider is asked often while a payout is young and less as it ages;
// an unconfirmed v2 hash is looked up every few seconds.
const (
	minProviderPoll = time.Second
	maxProviderPoll = time.Minute
	TxPollInterval  = 2 * time.Second
)

// decision is the working state of one Decide call.
type decision struct {
	in  *Input
	t   *payoutv1.Transfer
	st  *payoutv1.TransferStatus
	out *Decision
	// note is the reason and message of the history line, should the phase change.
	noteReason, noteMessage string
	// mismatch is why a v2 transaction does not pay for the transfer (at depth: it fails).
	mismatch string
}

// steps is the machine, in order. Each step reads the input and the facts so far and adds facts;
// none looks at the phase.
var steps = []func(*decision){
	observeDeposits,    // v1: the watcher's deposits → the deposit fact, the rest stray
	observeTx,          // v2: the confirmed hash on chain → the deposit fact, or why it does not pay
	stopBeforePayout,   // cancellation, deleted recipient, expiry, a short or wrong deposit → failed
	recordPayoutIntent, // a good deposit at depth → the payout intent, stored before any call
	followProvider,     // the provider's word on a stored intent → accepted, completed, rejected
	recordRefund,       // a refund at depth → refunded
	afterTheEnd,        // mail the outcome once; delete the recipient unless kept
	schedule,           // when to look again
}

// Decide computes the next status of in.Transfer and what to do. It is pure: same input, same
// decision.
func Decide(in Input) Decision {
	d := &decision{in: &in, t: in.Transfer, st: in.Transfer.Status.DeepCopy(), out: &Decision{}}
	for _, step := range steps {
		step(d)
	}
	d.finish()
	d.out.Status = *d.st
	return *d.out
}

// Pending is the work whose intent is stored in t and that the controller performs before
// deciding: asking the provider about (and, when it has none, creating) the payout of a stored
// intent. Only an intent read back from the API server leads to a provider call.
func Pending(t *payoutv1.Transfer) (askProvider bool) {
	p := t.Status.Payout
	return p != nil && (p.State == payoutv1.PayoutRequested || p.State == payoutv1.PayoutAccepted)
}

// NeedsTx reports whether a v2 transfer's hash should be looked up on chain: it has one and its
// deposit is not at depth yet (a failed transfer too: a deposit that arrives is recorded so that
// it can be refunded).
func NeedsTx(t *payoutv1.Transfer) bool {
	if t.Spec.Method != payoutv1.TransferV2 || t.Spec.TxHash == "" || t.Status.Refund != nil {
		return false
	}
	dep := t.Status.Deposit
	return dep == nil || dep.ConfirmedAt == nil
}

func (d *decision) now() metav1.Time { return metav1.NewTime(d.in.Now) }

func (d *decision) note(reason, format string, args ...any) {
	d.noteReason, d.noteMessage = reason, fmt.Sprintf(format, args...)
}

func (d *decision) event(typ, reason, format string, args ...any) {
	d.out.Events = append(d.out.Events, Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (d *decision) fail(reason payoutv1.FailureReason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.st.Failure = &payoutv1.TransferFailure{Reason: reason, Message: msg, At: d.now()}
	d.note(string(reason), "%s", msg)
}

func (d *decision) confirmedDeposit() *payoutv1.DepositFacts {
	if d.st.Deposit != nil && d.st.Deposit.ConfirmedAt != nil {
		return d.st.Deposit
	}
	return nil
}

// ended reports whether the transfer reached an outcome: completed or failed.
func (d *decision) ended() bool {
	return d.st.Failure != nil || (d.st.Payout != nil && d.st.Payout.State == payoutv1.PayoutCompleted)
}

// observeDeposits takes the first v1 deposit (by block and log order) as the transfer's deposit
// and keeps every other one as a stray deposit, refundable by support.
func observeDeposits(d *decision) {
	if d.t.Spec.Method != payoutv1.TransferV1 || len(d.in.Deposits) == 0 {
		return
	}
	deps := append([]payoutv1.Deposit(nil), d.in.Deposits...)
	sort.SliceStable(deps, func(i, j int) bool {
		a, b := deps[i].Spec, deps[j].Spec
		if a.BlockNumber != b.BlockNumber {
			return a.BlockNumber < b.BlockNumber
		}
		return a.LogIndex < b.LogIndex
	})
	for i := range deps {
		dep := &deps[i]
		if d.st.Deposit == nil {
			d.st.Deposit = factsOf(dep, d.now())
			if d.ended() {
				// late: after expiry, cancellation or failure. Recorded, so that it can be refunded.
				d.event(corev1.EventTypeWarning, ReasonDepositAfterEnd, "%s %s arrived in %s after the transfer failed; it is kept for a refund",
					TokenAmount(dep.Spec.Amount), dep.Spec.Token, dep.Spec.TxHash)
				d.note(ReasonDepositAfterEnd, "deposit %s arrived after the transfer failed", dep.Spec.TxHash)
			} else {
				d.note(ReasonDepositConfirmed, "%s %s arrived in %s (block %d)", TokenAmount(dep.Spec.Amount), dep.Spec.Token, dep.Spec.TxHash, dep.Spec.BlockNumber)
			}
			continue
		}
		if sameLog(d.st.Deposit, dep.Spec.TxHash, dep.Spec.LogIndex) {
			continue
		}
		d.addStray(dep.Spec.TxHash, dep.Spec.LogIndex, dep.Spec.Token, dep.Spec.Amount, dep.Spec.From, "a second deposit to the transfer's address")
	}
	// More than the amount on the first deposit: the excess is the sender's and is kept apart.
	if dep := d.st.Deposit; dep != nil && dep.Token == d.t.Spec.SourceToken {
		if excess := baseUnits(dep.Amount).Sub(expectedUnits(d.t)); excess.IsPositive() {
			d.addStray(dep.TxHash, dep.LogIndex, dep.Token, excess.String(), dep.From, "overpayment above the transfer amount")
		}
	}
}

func sameLog(f *payoutv1.DepositFacts, txHash string, logIndex int64) bool {
	return strings.EqualFold(f.TxHash, txHash) && f.LogIndex == logIndex
}

func (d *decision) addStray(txHash string, logIndex int64, token payoutv1.Token, amount, from, reason string) {
	for _, s := range d.st.StrayDeposits {
		if strings.EqualFold(s.TxHash, txHash) && s.LogIndex == logIndex && s.Reason == reason {
			return
		}
	}
	if len(d.st.StrayDeposits) >= maxStrays {
		return
	}
	d.st.StrayDeposits = append(d.st.StrayDeposits, payoutv1.StrayDeposit{TxHash: txHash, LogIndex: logIndex, Token: token, Amount: amount, From: from, Reason: reason})
	d.event(corev1.EventTypeWarning, ReasonStrayDeposit, "%s %s in %s from %s not used: %s; refund it by hand",
		TokenAmount(amount), token, txHash, from, reason)
}

// maxStrays bounds the stray deposits kept on a transfer (the Deposit objects keep them all).
const maxStrays = 8

func factsOf(dep *payoutv1.Deposit, now metav1.Time) *payoutv1.DepositFacts {
	s := dep.Spec
	seen := dep.CreationTimestamp
	if seen.IsZero() {
		seen = now
	}
	bt := s.BlockTime
	return &payoutv1.DepositFacts{
		Network: s.Network, Token: s.Token, TxHash: s.TxHash, LogIndex: s.LogIndex, From: s.From, Amount: s.Amount,
		BlockNumber: s.BlockNumber, BlockHash: s.BlockHash, BlockTime: &bt, Confirmations: s.Confirmations,
		SeenAt: seen, ConfirmedAt: &now, Record: dep.Name,
	}
}

// observeTx judges a v2 transfer's confirmed transaction: a Transfer of the transfer's token to
// the platform address, of the transfer's amount, from its wallet when one is set. Facts seen
// before depth are provisional: a reorg can take them back; at depth they are final.
func observeTx(d *decision) {
	tx := d.in.Tx
	if tx == nil || !NeedsTx(d.t) {
		return
	}
	if !tx.Found {
		if d.st.Deposit != nil && d.st.Deposit.ConfirmedAt == nil {
			d.st.Deposit = nil
			d.note(ReasonDepositReorged, "transaction %s is no longer on chain; waiting for it again", d.t.Spec.TxHash)
			d.event(corev1.EventTypeWarning, ReasonDepositReorged, "transaction %s left the chain before depth", d.t.Spec.TxHash)
		}
		return
	}
	if tx.Reverted {
		if tx.Required > 0 && tx.Confirmations >= tx.Required {
			d.mismatch = "transaction " + d.t.Spec.TxHash + " reverted: it moved no funds"
		}
		return
	}
	v2 := payoutv1.NormalizeWallet(d.in.V2Address)
	var ours, other int = -1, -1
	for i, tt := range tx.Transfers {
		if payoutv1.NormalizeWallet(tt.To) != v2 {
			continue
		}
		if tt.Token == d.t.Spec.SourceToken && ours < 0 {
			ours = i
		} else if other < 0 {
			other = i
		}
	}
	pick := ours
	if pick < 0 {
		pick = other
	}
	if pick < 0 {
		if tx.AtDepth() {
			d.mismatch = fmt.Sprintf("transaction %s sends no %s to the platform address %s", d.t.Spec.TxHash, d.t.Spec.SourceToken, d.in.V2Address)
		}
		return
	}
	tt := tx.Transfers[pick]
	wasSeen := d.st.Deposit != nil
	bt := metav1.NewTime(tx.BlockTime)
	facts := &payoutv1.DepositFacts{
		Network: d.t.Spec.SourceNetwork, Token: tt.Token, TxHash: d.t.Spec.TxHash, LogIndex: tt.LogIndex,
		From: tt.From, Amount: tt.Amount.String(), BlockNumber: tx.BlockNumber, BlockHash: tx.BlockHash,
		BlockTime: &bt, Confirmations: tx.Confirmations, SeenAt: d.now(),
	}
	if wasSeen {
		facts.SeenAt = d.st.Deposit.SeenAt
	}
	if tx.AtDepth() {
		now := d.now()
		facts.ConfirmedAt = &now
	}
	d.st.Deposit = facts
	switch {
	case tt.Token != d.t.Spec.SourceToken:
		d.mismatch = fmt.Sprintf("transaction %s sends %s, not %s", d.t.Spec.TxHash, tt.Token, d.t.Spec.SourceToken)
	case baseUnits(facts.Amount).Cmp(expectedUnits(d.t)) != 0:
		d.mismatch = fmt.Sprintf("transaction %s sends %s %s, not the transfer's %s", d.t.Spec.TxHash, TokenAmount(facts.Amount), tt.Token, d.t.Spec.Amount)
	case d.t.Spec.WalletAddress != "" && payoutv1.NormalizeWallet(tt.From) != payoutv1.NormalizeWallet(d.t.Spec.WalletAddress):
		d.mismatch = fmt.Sprintf("transaction %s is sent from %s, not from the transfer's wallet %s", d.t.Spec.TxHash, tt.From, d.t.Spec.WalletAddress)
	}
	if !tx.AtDepth() {
		d.mismatch = "" // judged at depth only: before it, a reorg may replace the transaction
		if !wasSeen {
			d.note(ReasonDepositSeen, "transaction %s found in block %d (%d of %d confirmations)", d.t.Spec.TxHash, tx.BlockNumber, tx.Confirmations, tx.Required)
		}
		return
	}
	if d.ended() {
		d.event(corev1.EventTypeWarning, ReasonDepositAfterEnd, "%s %s arrived in %s after the transfer failed; it is kept for a refund",
			TokenAmount(facts.Amount), tt.Token, d.t.Spec.TxHash)
		d.note(ReasonDepositAfterEnd, "deposit %s arrived after the transfer failed", d.t.Spec.TxHash)
		return
	}
	d.note(ReasonDepositConfirmed, "%s %s arrived in %s (block %d)", TokenAmount(facts.Amount), tt.Token, d.t.Spec.TxHash, tx.BlockNumber)
}

// stopBeforePayout fails a transfer that must not be paid, as long as no payout intent exists:
// once it does, the money may be at the provider and only the provider can fail it.
func stopBeforePayout(d *decision) {
	if d.st.Failure != nil || d.st.Payout != nil || d.st.Refund != nil {
		return
	}
	t := d.t
	dep := d.confirmedDeposit()
	switch {
	case t.Spec.Cancellation != nil:
		msg := t.Spec.Cancellation.Message
		if msg == "" {
			msg = "the transfer was cancelled"
		}
		d.fail(t.Spec.Cancellation.Reason, "%s", msg)
	case d.recipientGone():
		// The deletion did not stop it (it was created while the deletion ran, or the deletion
		// was interrupted): stop it now.
		d.fail(payoutv1.FailureRecipientDeleted, "recipient %d was deleted", d.in.Recipient.ID)
	case d.mismatch != "":
		d.fail(payoutv1.FailureDepositMismatch, "%s", d.mismatch)
	case dep != nil && dep.Token != t.Spec.SourceToken:
		d.fail(payoutv1.FailureDepositWrongToken, "the deposit in %s is %s %s; this transfer takes %s. It is kept for a refund",
			dep.TxHash, TokenAmount(dep.Amount), dep.Token, t.Spec.SourceToken)
	case dep != nil && baseUnits(dep.Amount).LessThan(expectedUnits(t)):
		d.fail(payoutv1.FailureDepositShort, "received %s %s in %s, less than the transfer's %s. It is kept for a refund",
			TokenAmount(dep.Amount), dep.Token, dep.TxHash, t.Spec.Amount)
	case dep != nil && t.Spec.ExpiresAt != nil && dep.BlockTime != nil && dep.BlockTime.After(t.Spec.ExpiresAt.Time):
		d.fail(payoutv1.FailureExpired, "the deposit in %s was made at %s, after the transfer expired at %s. It is kept for a refund",
			dep.TxHash, dep.BlockTime.UTC().Format(time.RFC3339), t.Spec.ExpiresAt.UTC().Format(time.RFC3339))
	case dep == nil && t.Spec.ExpiresAt != nil && !d.in.Now.Before(t.Spec.ExpiresAt.Time):
		d.fail(payoutv1.FailureExpired, "no deposit arrived by %s", t.Spec.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if d.st.Failure != nil {
		d.event(corev1.EventTypeWarning, string(d.st.Failure.Reason), "%s", d.st.Failure.Message)
	}
}

// recordPayoutIntent records the payout intent once a good deposit is at depth. The intent is
// persisted (with the optimistic lock that also guards cancellation) before the provider is
// ever called: the next pass reads it back and only then asks the provider.
func recordPayoutIntent(d *decision) {
	if d.st.Failure != nil || d.st.Payout != nil || d.st.Refund != nil || d.t.Spec.Cancellation != nil ||
		d.in.Recipient.Deleted || !d.depositPays() {
		// a deleted recipient's transfer waits: the deletion's cancellation or the grace's end
		// decides it, never a payout
		return
	}
	// the payout is priced for the amount the customer was asked to send, which may be a cent
	// off the quote's (spec 4.10); the intent records it, and every call pays what it records
	target, err := pricing.PayoutTarget(d.t.Spec.Quote, d.t.Spec.Amount)
	if err != nil {
		d.event(corev1.EventTypeWarning, ReasonPayoutUnpriced, "the payout cannot be priced, so none is requested: %v", err)
		return
	}
	d.st.Payout = &payoutv1.PayoutFacts{
		Reference: d.t.Name, Provider: d.in.ProviderName, State: payoutv1.PayoutRequested, RequestedAt: d.now(),
		TargetAmount: target, Rate: d.t.Spec.Quote.USDToTargetRate,
	}
	if d.noteReason == "" {
		d.note(ReasonDepositConfirmed, "deposit confirmed; converting")
	}
}

// recipientGone reports whether the recipient was deleted through the API long enough ago
// that the deletion's own cancellation would have been recorded.
func (d *decision) recipientGone() bool {
	r := d.in.Recipient
	return r.Known && r.Deleted && !d.in.Now.Before(r.DeletedAt.Add(RecipientDeletionGrace))
}

// depositPays reports whether the confirmed deposit pays for the transfer: of its token, at
// least its amount, made before it expired, and (v2) judged to be its transaction. The intent
// checks it itself rather than trust that an earlier step failed a bad deposit.
func (d *decision) depositPays() bool {
	dep, t := d.confirmedDeposit(), d.t
	switch {
	case dep == nil || d.mismatch != "":
		return false
	case dep.Token != t.Spec.SourceToken || baseUnits(dep.Amount).LessThan(expectedUnits(t)):
		return false
	case t.Spec.ExpiresAt != nil && dep.BlockTime != nil && dep.BlockTime.After(t.Spec.ExpiresAt.Time):
		return false
	}
	return true
}

// followProvider records the provider's word on a stored payout intent. States only move
// forward: Requested → Accepted → Completed or Rejected.
func followProvider(d *decision) {
	stored := d.in.CurrentPayoutIntent()
	p := d.in.Provider
	if stored == nil || p == nil || !Pending(d.t) {
		return
	}
	if !p.Found {
		if stored.State == payoutv1.PayoutAccepted {
			d.event(corev1.EventTypeWarning, ReasonProviderLost, "the provider no longer knows payout %s (%s); asking again later", stored.Reference, stored.ProviderID)
		}
		return
	}
	cur := d.st.Payout
	if rank(p.State) <= rank(cur.State) {
		return
	}
	now := d.now()
	cur.State, cur.UpdatedAt = p.State, &now
	if p.ProviderID != "" {
		cur.ProviderID = p.ProviderID
	}
	if p.SourceAmount != "" {
		cur.SourceAmount = payoutv1.Decimal(p.SourceAmount)
	}
	if p.TargetAmount != "" {
		cur.TargetAmount = payoutv1.Decimal(p.TargetAmount)
	}
	if p.Rate != "" {
		cur.Rate = payoutv1.Decimal(p.Rate)
	}
	if p.Message != "" {
		cur.Message = truncate(p.Message, 512)
	}
	currency := d.t.Spec.Quote.TargetCurrency
	switch p.State {
	case payoutv1.PayoutAccepted:
		d.note(ReasonPayoutAccepted, "the provider converted the funds and created payout %s of %s %s", cur.ProviderID, cur.TargetAmount, currency)
	case payoutv1.PayoutCompleted:
		d.note(ReasonPayoutCompleted, "%s %s sent to %s", cur.TargetAmount, currency, d.t.Spec.Recipient.AccountHolderName)
	case payoutv1.PayoutRejected:
		msg := p.Message
		if msg == "" {
			msg = "no reason given"
		}
		d.fail(payoutv1.FailurePayoutRejected, "the bank rejected the payout: %s", truncate(msg, 400))
		d.event(corev1.EventTypeWarning, string(payoutv1.FailurePayoutRejected), "%s", d.st.Failure.Message)
	}
}

func rank(s payoutv1.PayoutState) int {
	switch s {
	case payoutv1.PayoutRequested:
		return 1
	case payoutv1.PayoutAccepted:
		return 2
	case payoutv1.PayoutCompleted, payoutv1.PayoutRejected:
		return 3
	}
	return 0
}

// recordRefund records a refund whose transaction is at depth: the transfer reads refunded. Only
// a transfer already stored as failed, whose deposit arrived, can be refunded (the refund
// controller refuses the others): refunded is reached from failed and from nothing else.
func recordRefund(d *decision) {
	rf := d.in.Refund
	if rf == nil || rf.Status.State != payoutv1.RefundConfirmed || d.st.Refund != nil || d.t.Status.Failure == nil || d.confirmedDeposit() == nil {
		return
	}
	at := d.now()
	if rf.Status.ConfirmedAt != nil {
		at = *rf.Status.ConfirmedAt
	}
	d.st.Refund = &payoutv1.RefundFacts{TxHash: rf.Status.TxHash, Amount: rf.Status.Amount, To: rf.Status.To, ConfirmedAt: at}
	d.note(ReasonRefunded, "%s USDC sent back to %s on base in %s", TokenAmount(rf.Status.Amount), rf.Status.To, rf.Status.TxHash)
}

// afterTheEnd mails the outcome once and deletes the recipient (spec 2.1), unless kept.
func afterTheEnd(d *decision) {
	if !d.ended() {
		return
	}
	kind := payoutv1.NotificationFailed
	if d.st.Failure == nil {
		kind = payoutv1.NotificationPayoutSent
	}
	if d.t.Spec.CustomerEmail != "" && !Notified(d.st, kind) {
		d.out.Actions = append(d.out.Actions, Action{Kind: ActNotify, Notification: kind})
	}
	if !d.t.Spec.KeepRecipient && d.in.Recipient.Active() {
		d.out.Actions = append(d.out.Actions, Action{Kind: ActDeleteRecipient, RecipientID: d.in.Recipient.ID})
	}
}

// Notified reports whether the outcome kind was mailed (or its mail given up on).
func Notified(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind) bool {
	for _, n := range st.Notifications {
		if n.Kind == kind {
			return true
		}
	}
	return false
}

// RecordNotification records that the outcome kind was mailed (failed: why it could not be).
func RecordNotification(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind, to, messageID, failed string, at time.Time) {
	if Notified(st, kind) {
		return
	}
	st.Notifications = append(st.Notifications, payoutv1.NotificationRecord{
		Kind: kind, To: to, SentAt: metav1.NewTime(at), MessageID: messageID, Failed: truncate(failed, 256),
	})
}

// schedule says when to look again without an event to wake the controller.
func schedule(d *decision) {
	t := d.t
	switch {
	case d.st.Payout != nil && (d.st.Payout.State == payoutv1.PayoutRequested || d.st.Payout.State == payoutv1.PayoutAccepted):
		// Ask the provider again; sooner while the payout is young.
		age := d.in.Now.Sub(d.st.Payout.RequestedAt.Time)
		d.out.RequeueAfter = min(max(age/8, minProviderPoll), maxProviderPoll)
	case d.ended():
		if t.Spec.Method == payoutv1.TransferV2 && NeedsTx(withStatus(t, d.st)) && d.st.Deposit != nil {
			d.out.RequeueAfter = TxPollInterval // a late v2 deposit on its way to depth
		}
	case d.in.Recipient.Deleted && d.st.Payout == nil:
		d.out.RequeueAfter = max(d.in.Recipient.DeletedAt.Add(RecipientDeletionGrace).Sub(d.in.Now), time.Second)
	case t.Spec.Method == payoutv1.TransferV2 && t.Spec.TxHash != "":
		d.out.RequeueAfter = TxPollInterval
	case t.Spec.ExpiresAt != nil && d.confirmedDeposit() == nil:
		d.out.RequeueAfter = max(t.Spec.ExpiresAt.Sub(d.in.Now), time.Second)
	}
}

func withStatus(t *payoutv1.Transfer, st *payoutv1.TransferStatus) *payoutv1.Transfer {
	c := *t
	c.Status = *st
	return &c
}

// finish derives the phase from the facts, and records a history line and an event when it
// changed. The history keeps its opening line and the newest lines, MaxHistory in all.
//
// A transfer whose status was never written and that gained no fact stays unwritten: its phase is
// the schema's default (payoutv1.DefaultPhase), so a fresh v1 transfer costs no status patch and
// no event. Its opening line is written with its first fact, dated at its creation.
func (d *decision) finish() {
	phase := Phase(withStatus(d.t, d.st))
	if len(d.st.History) == 0 {
		if phase == payoutv1.DefaultPhase && statusEqual(&d.t.Status, d.st) {
			return
		}
		opening := OpeningLine(d.t)
		d.st.History = append(d.st.History, opening)
		if phase == opening.Status {
			d.event(corev1.EventTypeNormal, ReasonCreated, "%s: %s", opening.Status, opening.Message)
		}
	}
	d.st.Phase = phase
	if last := d.st.History[len(d.st.History)-1]; phase != last.Status {
		reason, msg := d.noteReason, d.noteMessage
		if reason == "" {
			reason = string(phase)
		}
		d.st.History = append(d.st.History, payoutv1.StatusChange{Status: phase, At: d.now(), Reason: reason, Message: truncate(msg, 512)})
		if n := len(d.st.History); n > payoutv1.MaxHistory {
			d.st.History = append(d.st.History[:1:1], d.st.History[n-payoutv1.MaxHistory+1:]...)
		}
		if phase != payoutv1.PhaseFailed { // a failure's Warning is recorded where it is decided
			d.event(corev1.EventTypeNormal, reason, "%s: %s", phase, msg)
		}
	}
	if !statusEqual(&d.t.Status, d.st) {
		now := d.now()
		d.st.UpdatedAt = &now
	}
}

// OpeningLine is the first line of t's history: its opening phase at its creation.
func OpeningLine(t *payoutv1.Transfer) payoutv1.StatusChange {
	opening := payoutv1.PhaseAwaitingDeposit
	if t.Spec.Method == payoutv1.TransferV1 {
		opening = payoutv1.PhaseReadyToProcess
	}
	return payoutv1.StatusChange{Status: opening, At: t.CreationTimestamp, Reason: ReasonCreated,
		Message: "waiting for the deposit at " + t.Spec.DepositAddress}
}

// History is t's history as people read it: the stored lines, or for a v1 transfer whose status
// was never written (see finish) its opening line alone.
func History(t *payoutv1.Transfer) []payoutv1.StatusChange {
	if len(t.Status.History) > 0 || t.Spec.Method != payoutv1.TransferV1 {
		return t.Status.History
	}
	return []payoutv1.StatusChange{OpeningLine(t)}
}

// Unwritten reports whether t's status was never written and decided stays as it is: the
// controller then writes nothing, not even its Ready condition (see finish).
func Unwritten(t *payoutv1.Transfer, decided *payoutv1.TransferStatus) bool {
	return len(t.Status.History) == 0 && t.Status.ObservedGeneration == 0 && statusEqual(&t.Status, decided)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
