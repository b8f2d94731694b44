package transfer

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// Decision is what Decide returns: the next status (facts, then the phase derived from them and
// a history line when it changed) and its Ready condition, the side effects to perform once that
// status is stored, the events to record, and when to look again.
type Decision struct {
	Status payoutv1.TransferStatus
	// Ready is the Ready condition of Status (Type, Status, Reason and Message; the controller
	// stamps the generation): True once the payout completed or the failed transfer's deposit
	// was refunded, its reason the phase, its message why the transfer waits on the service
	// (Waiting) or else its newest history line.
	Ready   metav1.Condition
	Actions []Action
	Events  []Event
	// RequeueAfter is when to look again without an event to wake the controller.
	RequeueAfter time.Duration
	// Screen, when set, is an address the risk service must screen before the payout can go on:
	// the controller asks, puts the answer in Input.Screening and decides again.
	Screen string
	// Waiting says why the transfer waits on the service rather than on its customer (a
	// screening service that cannot answer, a chain watcher behind the clock); Ready shows it.
	Waiting string
	// AskProvider: the transfer would fail, or failed without asking, while its deposit was
	// seen: the controller asks the provider by reference, puts the answer in
	// Input.ProviderBefore and decides again. The provider is the ledger of record of payouts: a
	// restored status may not know of one.
	AskProvider bool
	// BindDeposit, when set, is the v2 deposit log to bind to the transfer before its payout
	// intent (a Claim of kind deposit): the controller creates the claim, or reads who holds it,
	// puts that in Input.DepositHolder and decides again.
	BindDeposit *payoutv1.DepositRef
}

// ActionKind names a side effect the controller performs after deciding, once the decided
// status is stored: a conflict or a crash before that performs nothing, and every action is
// safe to perform again (a retry after a crash repeats it). None of them moves money: the
// payout is created only for an intent already stored (PayoutStep), and refunds are the refund
// controller's.
type ActionKind string

const (
	// ActNotify mails an outcome whose record is stored as Pending; the controller records it
	// Sent (or Refused) after.
	ActNotify ActionKind = "Notify"
	// ActDeleteRecipient deletes (deactivates) the recipient after the transfer ended (spec 2.1).
	ActDeleteRecipient ActionKind = "DeleteRecipient"
	// ActReleaseHash gives a v2 hash's claim back when its transaction does not pay the
	// transfer (or was not found in time), so that the transfer it does pay can confirm it.
	ActReleaseHash ActionKind = "ReleaseHash"
	// ActBindWallet binds the v2 sender's wallet to the transfer's account (bindWallets).
	ActBindWallet ActionKind = "BindWallet"
)

// Action is one side effect.
type Action struct {
	Kind ActionKind
	// Notification is the outcome to mail (ActNotify).
	Notification payoutv1.NotificationKind
	// RecipientID is the recipient to delete (ActDeleteRecipient).
	RecipientID int64
	// Wallet is the sender to bind (ActBindWallet).
	Wallet string
}

// Event is a Kubernetes event to record on the transfer.
type Event struct {
	Type, Reason, Message string
}

// Reasons of the history lines and events, besides the failure reasons.
const (
	ReasonCreated              = "Created"
	ReasonHashRecorded         = "HashRecorded"
	ReasonDepositSeen          = "DepositSeen"
	ReasonDepositReorged       = "DepositReorged"
	ReasonDepositConfirmed     = "DepositConfirmed"
	ReasonPayoutAccepted       = "PayoutAccepted"
	ReasonPayoutCompleted      = "PayoutCompleted"
	ReasonRefunded             = "Refunded"
	ReasonDepositAfterEnd      = "DepositAfterEnd"
	ReasonStrayDeposit         = "StrayDeposit"
	ReasonStrayRefunded        = "StrayRefunded"
	ReasonProviderLost         = "ProviderLostPayout"
	ReasonHashReleased         = "HashReleased"
	ReasonSenderCleared        = "SenderCleared"
	ReasonScreeningUnavailable = "ScreeningUnavailable"
	ReasonPayoutUnpriced       = "PayoutUnpriced"
	ReasonPayoutAdopted        = "PayoutAdopted"
)

// Polling intervals: the provider is asked often while a payout is young and less as it ages;
// an unresolved v2 hash is looked up 2 s after it is recorded, then at intervals that double up
// to 5 minutes (a hash that never appears costs the chain a lookup every 5 minutes, not every
// 2 s); an expired v1 transfer whose network's watcher has not passed its expiry yet is looked
// at every 15 s; a payer the risk service could not screen is asked again every 30 s.
const (
	minProviderPoll     = time.Second
	maxProviderPoll     = time.Minute
	MinTxPoll           = 2 * time.Second
	MaxTxPoll           = 5 * time.Minute
	ChainWaitPoll       = 15 * time.Second
	ScreeningRetry      = 30 * time.Second
	DefaultMatchTimeout = 24 * time.Hour
)

// TxPoll is how long to wait before looking a v2 hash up again, age after it was recorded: the
// interval doubles from 2 s to 5 minutes.
func TxPoll(age time.Duration) time.Duration { return min(max(age, MinTxPoll), MaxTxPoll) }

// decision is the working state of one Decide call.
type decision struct {
	in  *Input
	t   *payoutv1.Transfer
	st  *payoutv1.TransferStatus
	out *Decision
	// note is the reason and message of the history line, should the phase change.
	noteReason, noteMessage string
	// ledger is a v1 transfer's deposits, sorted.
	ledger Ledger
	// mismatch is why a v2 transaction does not pay for the transfer (at depth: it fails);
	// notFound: the transaction was not found within the match timeout.
	mismatch string
	notFound bool
	// hold: the payout waits (the payer is not screened yet).
	hold bool
}

// steps is the machine, in order. Each step reads the input and the facts so far and adds facts;
// none looks at the phase.
var steps = []func(*decision){
	observeDeposits,    // v1: the wallet's deposits add up to the amount; every other deposit is stray
	observeTx,          // v2: the confirmed hash on chain → the deposit fact, or why it does not pay
	adoptPayout,        // a payout the provider holds under the reference though none is recorded → adopted
	stopBeforePayout,   // cancellation, deleted recipient, v2 mismatch or not found, expiry on chain → failed
	screenSender,       // the wallet that paid, screened at depth; held while the service cannot answer
	bindDeposit,        // v2: the deposit log bound to this transfer, or it pays another: one transaction, one transfer
	recordPayoutIntent, // a good, screened deposit at depth → the payout intent, stored before any call
	followProvider,     // the provider's word on a stored intent → accepted, completed, rejected
	recordRefunds,      // refunds at depth → refunded, stray deposits sent back
	actOnOutcome,       // store the outcome mail; delete the recipient unless kept; bind the wallet
	releaseHash,        // a v2 hash that does not pay the transfer is given back
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
	d.out.Ready = readyCondition(d.st, d.out.Waiting)
	return *d.out
}

// readyCondition is the Ready condition of st, from its facts: True once the payout completed
// (a return after it does not take that back: completed is terminal, spec 3.1) or the failed
// transfer's deposit was refunded.
func readyCondition(st *payoutv1.TransferStatus, waiting string) metav1.Condition {
	c := metav1.Condition{Type: payoutv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: string(st.Phase), Message: waiting}
	paid := st.Failure == nil && st.Payout != nil && st.Payout.State == payoutv1.PayoutCompleted
	refunded := st.Failure != nil && st.Refund != nil
	if paid || refunded {
		c.Status = metav1.ConditionTrue
	}
	if n := len(st.History); c.Message == "" && n > 0 {
		c.Message = st.History[n-1].Message
	}
	return c
}

// Pending reports whether t's stored payout intent is still on its way (requested or accepted):
// the controller asks the provider about it before deciding, and PayoutStep says whether to
// create it. Only an intent read back from the API server leads to a provider call.
func Pending(t *payoutv1.Transfer) (askProvider bool) {
	p := t.Status.Payout
	return p != nil && (p.State == payoutv1.PayoutRequested || p.State == payoutv1.PayoutAccepted)
}

// NeedsTx reports whether a v2 transfer's hash should be looked up on chain: it has one that is
// not released, and its deposit is not at depth yet (a failed transfer too: a deposit that
// arrives is recorded so that it can be refunded).
func NeedsTx(t *payoutv1.Transfer) bool {
	if t.Spec.Method != payoutv1.TransferV2 || t.Spec.TxHash != "" && Released(t) || t.Spec.TxHash == "" || t.Status.Refund != nil {
		return false
	}
	dep := t.Status.Deposit
	return dep == nil || dep.ConfirmedAt == nil
}

// Released reports whether t gave its v2 hash back: its transaction does not pay t.
func Released(t *payoutv1.Transfer) bool {
	return t.Status.TxMatch != nil && t.Status.TxMatch.ReleasedAt != nil
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
	d.st.Failure = &payoutv1.TransferFailure{Reason: reason, Message: truncate(msg, 512), At: d.now()}
	d.note(string(reason), "%s", msg)
}

func (d *decision) confirmedDeposit() *payoutv1.DepositFacts {
	if d.st.Deposit != nil && d.st.Deposit.ConfirmedAt != nil {
		return d.st.Deposit
	}
	return nil
}

// ended reports whether the transfer, as decided so far, has ended (Ended).
func (d *decision) ended() bool {
	return Ended(withStatus(d.t, d.st))
}

// observeDeposits sorts a v1 transfer's deposits (SortDeposits): the wallet's own deposits add up
// until they reach the amount, and that is the transfer's deposit; every other deposit is listed
// as a stray, refundable once.
func observeDeposits(d *decision) {
	if d.t.Spec.Method != payoutv1.TransferV1 {
		return
	}
	d.ledger = SortDeposits(d.t, d.in.Deposits)
	for _, s := range d.ledger.Strays {
		d.addStray(s)
	}
	if d.st.Deposit == nil && d.ledger.Complete {
		d.st.Deposit = d.ledger.DepositFacts(d.in.Now)
		dep := d.st.Deposit
		if n := len(d.ledger.Credited); n > 1 {
			d.note(ReasonDepositConfirmed, "%s %s arrived from %s in %d sends (the last in block %d)", TokenAmount(dep.Amount), dep.Token, dep.From, n, dep.BlockNumber)
		} else {
			d.note(ReasonDepositConfirmed, "%s %s arrived in %s (block %d)", TokenAmount(dep.Amount), dep.Token, dep.TxHash, dep.BlockNumber)
		}
	}
}

// addStray lists a stray deposit in the status (once per log) and reports it.
func (d *decision) addStray(s Stray) {
	sd := s.StrayFacts(d.t)
	for _, have := range d.st.StrayDeposits {
		if have.Network == sd.Network && strings.EqualFold(have.TxHash, sd.TxHash) && have.LogIndex == sd.LogIndex {
			return
		}
	}
	if len(d.st.StrayDeposits) >= payoutv1.MaxStrays {
		return // the Deposit objects keep them all; refunds are made from those
	}
	d.st.StrayDeposits = append(d.st.StrayDeposits, sd)
	network := s.Ref.Network
	d.event(corev1.EventTypeWarning, ReasonStrayDeposit, "%s %s on %s in %s from %s does not pay this transfer: %s. `kubectl payout refund %s` sends it back",
		TokenAmount(sd.Amount), sd.Token, network, sd.TxHash, sd.From, s.Reason, d.t.Name)
}

func factsOf(dep *payoutv1.Deposit, now time.Time) *payoutv1.DepositFacts {
	s := dep.Spec
	seen := dep.CreationTimestamp
	if seen.IsZero() {
		seen = metav1.NewTime(now)
	}
	bt := s.BlockTime
	confirmed := metav1.NewTime(now)
	return &payoutv1.DepositFacts{
		Network: s.Network, Token: s.Token, TxHash: s.TxHash, LogIndex: s.LogIndex, From: s.From, Amount: s.Amount,
		BlockNumber: s.BlockNumber, BlockHash: s.BlockHash, BlockTime: &bt, Confirmations: s.Confirmations,
		SeenAt: seen, ConfirmedAt: &confirmed, Record: dep.Name,
	}
}

// stopBeforePayout fails a transfer that must not be paid, as long as no payout intent exists:
// once it does, the money may be at the provider and only the provider can fail it. A transfer
// whose deposit was seen fails only once the provider, asked by reference, holds no payout of it
// (mayFail).
func stopBeforePayout(d *decision) {
	if d.st.Failure != nil || d.st.Payout != nil || d.st.Refund != nil {
		return
	}
	t := d.t
	var reason payoutv1.FailureReason
	var msg string
	switch {
	case t.Spec.Cancellation != nil:
		reason, msg = t.Spec.Cancellation.Reason, t.Spec.Cancellation.Message
		if msg == "" {
			msg = "the transfer was cancelled"
		}
	case d.recipientGone():
		// The deletion did not stop it (it was created while the deletion ran, or the deletion
		// was interrupted): stop it now.
		reason, msg = payoutv1.FailureRecipientDeleted, fmt.Sprintf("recipient %d was deleted", d.in.Recipient.ID)
	case d.mismatch != "":
		reason, msg = payoutv1.FailureDepositMismatch, d.mismatch
	case d.notFound:
		reason, msg = payoutv1.FailureDepositNotFound, fmt.Sprintf("transaction %s was not found on %s within %s of its confirmation; the hash is released",
			t.Spec.TxHash, t.Spec.SourceNetwork, d.in.MatchTimeout)
	case d.expiredOnChain():
		if d.ledger.CreditedUnits.IsPositive() {
			reason, msg = payoutv1.FailureDepositShort, fmt.Sprintf("received %s %s from %s by the expiry at %s, less than the transfer's %s; it is kept for a refund",
				TokenAmount(d.ledger.CreditedUnits.String()), t.Spec.SourceToken, t.Spec.WalletAddress, t.Spec.ExpiresAt.UTC().Format(time.RFC3339), t.Spec.Amount)
		} else {
			reason, msg = payoutv1.FailureExpired, fmt.Sprintf("no deposit from %s arrived by %s", t.Spec.WalletAddress, t.Spec.ExpiresAt.UTC().Format(time.RFC3339))
		}
	default:
		return
	}
	if !d.mayFail() {
		return
	}
	if t.Spec.Method == payoutv1.TransferV1 && d.st.Deposit == nil && d.ledger.CreditedUnits.IsPositive() {
		// stopped while (part of) its amount had arrived from its wallet: that is its deposit,
		// refunded with it
		d.st.Deposit = d.ledger.DepositFacts(d.in.Now)
	}
	d.fail(reason, "%s", msg)
	d.st.Failure.ProviderChecked = d.in.ProviderBefore != nil
	d.event(corev1.EventTypeWarning, string(d.st.Failure.Reason), "%s", d.st.Failure.Message)
}

// depositSeen reports whether money of the transfer's own arrived: a v1 transfer's wallet sent
// some of its amount, or a v2 transfer's transaction was observed.
func (d *decision) depositSeen() bool {
	return d.st.Deposit != nil || d.ledger.CreditedUnits.IsPositive()
}

// mayFail reports whether the transfer may fail now: when no deposit of its was seen, or when the
// provider, asked by reference, holds no payout of it. Otherwise it asks for the provider
// (Decision.AskProvider) and the failure waits for the answer.
func (d *decision) mayFail() bool {
	if !d.depositSeen() {
		return true
	}
	if d.in.ProviderBefore == nil {
		d.out.AskProvider = true
		return false
	}
	return !d.in.ProviderBefore.Found
}

// adoptPayout records a payout the provider holds under the transfer's reference although no
// intent is stored: the status was restored from before the payout, or lost its write. The
// provider is the ledger of record: the transfer follows that payout and never fails or pays
// again. A transfer that failed without asking the provider first (an older version) is asked
// now; it keeps its failure, and its deposit is owed to nobody once a payout is found.
func adoptPayout(d *decision) {
	p := d.in.ProviderBefore
	if d.st.Payout != nil || d.st.Refund != nil {
		return
	}
	if f := d.st.Failure; f != nil && !f.ProviderChecked && d.depositSeen() {
		if p == nil {
			d.out.AskProvider = true
			return
		}
		if !p.Found {
			f.ProviderChecked = true
			return
		}
	}
	if p == nil || !p.Found || !d.depositSeen() {
		return // the provider is asked for a transfer whose deposit was seen only
	}
	now := d.now()
	d.st.Payout = &payoutv1.PayoutFacts{Reference: d.t.Name, Provider: d.in.ProviderName, State: p.State, RequestedAt: now,
		ProviderID: p.ProviderID, SourceAmount: payoutv1.Decimal(p.SourceAmount), TargetAmount: payoutv1.Decimal(p.TargetAmount),
		Rate: payoutv1.Decimal(p.Rate), Message: truncate(p.Message, 512), UpdatedAt: &now}
	if d.st.Failure != nil {
		d.st.Failure.ProviderChecked = true
	}
	d.event(corev1.EventTypeWarning, ReasonPayoutAdopted, "the provider holds payout %s (%s) under this transfer's reference, which its status did not record: it is followed, never made again",
		p.ProviderID, p.State)
	if d.noteReason == "" {
		d.note(ReasonPayoutAdopted, "the provider's payout %s under this reference is adopted", p.ProviderID)
	}
}

// expiredOnChain reports whether a v1 transfer without its full deposit is past its expiry on
// its chain: the network's watcher has scanned, at depth, a block whose time is after expiresAt
// (every deposit mined before is recorded then), or a recorded deposit on the network was
// itself mined after it. The wall clock alone never expires a transfer: a deposit mined in time
// may still be short of its confirmations, or the node down. While the chain lags, the transfer
// waits, and says so.
func (d *decision) expiredOnChain() bool {
	t := d.t
	if t.Spec.Method != payoutv1.TransferV1 || t.Spec.ExpiresAt == nil || d.st.Deposit != nil {
		return false
	}
	exp := t.Spec.ExpiresAt.Time
	if d.in.Now.Before(exp) {
		return false
	}
	if d.in.Cursor.Passed(exp) {
		return true
	}
	for i := range d.in.Deposits {
		if s := &d.in.Deposits[i].Spec; s.Network == t.Spec.SourceNetwork && s.BlockTime.After(exp) {
			return true
		}
	}
	// the message stays the same while the watcher catches up: it is written once, not per block
	d.out.Waiting = fmt.Sprintf("the transfer expired at %s on the clock; waiting for the %s watcher to scan past that time before it fails, so that a deposit mined in time still counts",
		exp.UTC().Format(time.RFC3339), t.Spec.SourceNetwork)
	return false
}

// screenSender screens the wallet that actually paid, at depth, before any payout: the wallet a
// caller declares was screened at creation, but the one that paid is the chain's fact, and lists
// change. Fail closed: while the risk service cannot answer, nothing is paid and the transfer
// says why it waits; a blocked payer fails the transfer (SenderBlocked) and its deposit is held
// (a refund to a blocked address is held too).
func screenSender(d *decision) {
	if !d.in.ScreenSender || !d.mayPay() {
		return
	}
	payer := d.confirmedDeposit().From
	if s := d.st.SenderScreening; s != nil && s.Result == payoutv1.ScreeningCleared && chain.SameSender(s.Address, payer) {
		return
	}
	d.hold = true
	sc := d.in.Screening
	if sc == nil || !chain.SameSender(sc.Address, payer) {
		d.out.Screen = payer
		return
	}
	facts := &payoutv1.ScreeningFacts{Address: payer, Result: sc.Result, At: d.now(), Message: truncate(sc.Message, 512)}
	switch sc.Result {
	case payoutv1.ScreeningCleared:
		d.hold = false
		d.st.SenderScreening = facts
	case payoutv1.ScreeningBlocked:
		d.st.SenderScreening = facts
		if !d.mayFail() {
			return
		}
		d.fail(payoutv1.FailureSenderBlocked, "the wallet %s that paid failed compliance screening: nothing is paid, and the deposit is held for compliance review", payer)
		d.st.Failure.ProviderChecked = true
		d.event(corev1.EventTypeWarning, string(payoutv1.FailureSenderBlocked), "%s", d.st.Failure.Message)
	default:
		if prev := d.st.SenderScreening; prev == nil || prev.Result != facts.Result || prev.Message != facts.Message || !chain.SameSender(prev.Address, payer) {
			d.st.SenderScreening = facts
			d.event(corev1.EventTypeWarning, ReasonScreeningUnavailable, "the payer %s cannot be screened now (%s); nothing is paid until it is", payer, facts.Message)
		}
		d.out.Waiting = fmt.Sprintf("waiting to screen the wallet %s that paid: the risk service cannot answer (%s); nothing is paid until it does", payer, facts.Message)
	}
}

// bindDeposit binds a v2 transfer's deposit log to it before its payout intent: the shared
// platform address receives every account's payments, and a hash claim or the archive can be
// taken back by a restore, so the log itself is claimed (the API server's atomic create; after a
// restore the claim is rebuilt from the provider's payouts, which name their deposit). A log that
// another transfer holds pays that one: this transfer fails (DepositMismatch) and releases its
// hash.
func bindDeposit(d *decision) {
	if d.t.Spec.Method != payoutv1.TransferV2 || d.hold || !d.mayPay() {
		return
	}
	logs := CreditedLogs(withStatus(d.t, d.st))
	if len(logs) == 0 {
		return
	}
	self := d.t.Namespace + "/" + d.t.Name
	switch holder := d.in.DepositHolder; holder {
	case self:
	case "":
		d.hold = true
		if d.in.Paused != "" {
			d.out.Waiting = d.in.Paused // the binding is the recovery check's to rebuild first
			return
		}
		d.out.BindDeposit = &logs[0]
	default:
		d.hold = true
		d.mismatch = fmt.Sprintf("transaction %s already pays transfer %s", d.t.Spec.TxHash, holder[strings.Index(holder, "/")+1:])
		if !d.mayFail() {
			return
		}
		d.fail(payoutv1.FailureDepositMismatch, "%s", d.mismatch)
		d.st.Failure.ProviderChecked = true
		d.event(corev1.EventTypeWarning, string(payoutv1.FailureDepositMismatch), "%s", d.st.Failure.Message)
	}
}

// mayPay reports whether nothing but the payer's screening stands between the transfer and its
// payout intent.
func (d *decision) mayPay() bool {
	return d.st.Failure == nil && d.st.Payout == nil && d.st.Refund == nil && d.t.Spec.Cancellation == nil &&
		!d.in.Recipient.Deleted && d.depositPays()
}

// recordPayoutIntent records the payout intent once a good deposit is at depth and its payer is
// cleared. The intent is persisted (with the optimistic lock that also guards cancellation)
// before the provider is ever called: the next pass reads it back and only then asks the
// provider. A deleted recipient's transfer waits: the deletion's cancellation or the grace's
// end decides it, never a payout.
func recordPayoutIntent(d *decision) {
	if d.hold || !d.mayPay() {
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
// least its amount, made before it expired, from its wallet (v1; v2 when one is declared), and
// (v2) judged to be its transaction. The intent checks it itself rather than trust that an
// earlier step failed a bad deposit.
func (d *decision) depositPays() bool {
	dep, t := d.confirmedDeposit(), d.t
	switch {
	case dep == nil || d.mismatch != "" || Released(withStatus(t, d.st)):
		return false
	case (t.Spec.Method == payoutv1.TransferV1 || t.Spec.WalletAddress != "") && !chain.SameSender(dep.From, t.Spec.WalletAddress):
		return false
	case dep.Token != t.Spec.SourceToken || baseUnits(dep.Amount).LessThan(expectedUnits(t)):
		return false
	case t.Spec.ExpiresAt != nil && dep.BlockTime != nil && dep.BlockTime.After(t.Spec.ExpiresAt.Time):
		return false
	}
	return true
}

// followProvider records the provider's word on a stored payout intent. States only move
// forward: Requested → Accepted → Completed or Rejected. A payout the provider no longer knows is
// lost (provider.go); a completed one it later reports cancelled was returned.
func followProvider(d *decision) {
	stored := d.in.CurrentPayoutIntent()
	p := d.in.Provider
	if stored == nil || p == nil || !AskProvider(d.t, d.in.Now) {
		return
	}
	if d.in.Paused != "" && stored.State == payoutv1.PayoutRequested && (!p.Found || p.State == payoutv1.PayoutRequested) {
		d.out.Waiting = d.in.Paused // the controller did not create (or fund) it
	}
	if !p.Found {
		providerLost(d)
		return
	}
	providerFound(d)
	cur := d.st.Payout
	if cur.State == payoutv1.PayoutCompleted {
		followReturn(d, p)
		return
	}
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
		openReturnWindow(d)
	case payoutv1.PayoutRejected:
		msg := p.Message
		if msg == "" {
			msg = "no reason given"
		}
		d.fail(payoutv1.FailurePayoutRejected, "the bank rejected the payout: %s", truncate(msg, 400))
		d.st.Failure.ProviderChecked = true // the provider's own word
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

// recordRefunds records refunds whose transactions are at depth. The refund of the transfer's
// deposit makes a failed transfer read refunded: only a transfer already stored as failed (or
// whose completed payout was returned), whose deposit arrived, can be refunded (the refund
// controller refuses the others), so refunded is reached from failed and from nothing else (a
// returned payout's transfer stays completed: Phase). A refund of a stray deposit is listed with
// the stray and changes no status.
func recordRefunds(d *decision) {
	if rf := d.in.Refund; rf != nil && rf.Status.State == payoutv1.RefundConfirmed && d.st.Refund == nil &&
		OwesDeposit(d.t) && d.confirmedDeposit() != nil {
		at := d.now()
		if rf.Status.ConfirmedAt != nil {
			at = *rf.Status.ConfirmedAt
		}
		d.st.Refund = &payoutv1.RefundFacts{TxHash: rf.Status.TxHash, Amount: rf.Status.Amount, To: rf.Status.To, ConfirmedAt: at}
		d.note(ReasonRefunded, "%s %s sent back to %s on %s in %s", TokenAmount(rf.Status.Amount), tokenOr(rf.Status.Token), rf.Status.To, networkOr(rf.Status.Network), rf.Status.TxHash)
	}
	for i := range d.in.StrayRefunds {
		rf := &d.in.StrayRefunds[i]
		if rf.Spec.Deposit == nil || rf.Status.State != payoutv1.RefundConfirmed {
			continue
		}
		ref := rf.Spec.Deposit
		for j := range d.st.StrayDeposits {
			sd := &d.st.StrayDeposits[j]
			network := sd.Network
			if network == "" {
				network = d.t.Spec.SourceNetwork
			}
			if sd.Refund != nil || network != ref.Network || !strings.EqualFold(sd.TxHash, ref.TxHash) || sd.LogIndex != ref.LogIndex {
				continue
			}
			at := d.now()
			if rf.Status.ConfirmedAt != nil {
				at = *rf.Status.ConfirmedAt
			}
			sd.Refund = &payoutv1.StrayRefundFacts{Name: rf.Name, Network: rf.Status.Network, Token: rf.Status.Token, TxHash: rf.Status.TxHash, ConfirmedAt: at}
			d.event(corev1.EventTypeNormal, ReasonStrayRefunded, "the stray deposit %s (log %d) was sent back to %s: %s %s on %s in %s",
				sd.TxHash, sd.LogIndex, rf.Status.To, TokenAmount(rf.Status.Amount), rf.Status.Token, rf.Status.Network, rf.Status.TxHash)
		}
	}
}

func tokenOr(t payoutv1.Token) payoutv1.Token {
	if t == "" {
		return payoutv1.TokenUSDC
	}
	return t
}

func networkOr(n payoutv1.Network) payoutv1.Network {
	if n == "" {
		return payoutv1.NetworkBase
	}
	return n
}

// actOnOutcome acts on a transfer that ended: it stores the outcome e-mail to send (once; the
// controller sends it after the store, so that a retry sends this very outcome again, never
// another), deletes the recipient (spec 2.1) unless kept, and binds the wallet that paid a
// completed v2 transfer to its account when the account binds wallets and the wallet's owner
// proved control for it (the site binds at the proof already; this binds a wallet proven before
// the account turned bindWallets on).
func actOnOutcome(d *decision) {
	if !d.ended() {
		return
	}
	kind := payoutv1.NotificationFailed
	if d.st.Failure == nil {
		kind = payoutv1.NotificationPayoutSent
	}
	if d.in.Mailing && d.t.Spec.CustomerEmail != "" && !Notified(d.st, kind) && !QuietFailure(withStatus(d.t, d.st)) {
		now := d.now()
		d.st.Notifications = append(d.st.Notifications, payoutv1.NotificationRecord{
			Kind: kind, State: payoutv1.NotificationPending, To: d.t.Spec.CustomerEmail, DecidedAt: &now})
	}
	for _, n := range d.st.Notifications {
		if n.State == payoutv1.NotificationPending {
			d.out.Actions = append(d.out.Actions, Action{Kind: ActNotify, Notification: n.Kind})
		}
	}
	if !d.t.Spec.KeepRecipient && d.in.Recipient.Active() {
		d.out.Actions = append(d.out.Actions, Action{Kind: ActDeleteRecipient, RecipientID: d.in.Recipient.ID})
	}
	if dep := d.confirmedDeposit(); dep != nil && d.st.Failure == nil && d.t.Spec.Method == payoutv1.TransferV2 &&
		d.in.BindWallets && d.in.WalletBindings[chain.SenderKey(dep.From)] == "" && d.in.ProvenWallets[chain.SenderKey(dep.From)] {
		d.out.Actions = append(d.out.Actions, Action{Kind: ActBindWallet, Wallet: dep.From})
	}
}

// QuietCancelWindow is how soon after its creation a transfer its own account cancels fails
// without a mail (QuietFailure).
const QuietCancelWindow = time.Minute

// QuietFailure reports whether t failed in a way that mails no one: cancelled by its own
// account (the facade records a cancellation on DELETE of the account's recipient, nothing
// else does) within QuietCancelWindow of its creation, with no deposit ever seen on chain for
// it (neither its deposit nor a stray one). The customer sent nothing, so there is nothing to
// tell them; a mail would only carry the caller's recipient name to an address the caller chose,
// at once and as often as it likes (issue 25 item 11). A transfer cancelled later, or one
// that saw a deposit, mails its failure as any other.
func QuietFailure(t *payoutv1.Transfer) bool {
	c, f := t.Spec.Cancellation, t.Status.Failure
	return f != nil && c != nil && f.Reason == c.Reason &&
		t.Status.Deposit == nil && len(t.Status.StrayDeposits) == 0 &&
		c.RequestedAt.Sub(t.CreationTimestamp.Time) < QuietCancelWindow
}

// Notified reports whether the outcome kind was decided: stored to send, sent, or given up on.
func Notified(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind) bool {
	for _, n := range st.Notifications {
		if n.Kind == kind {
			return true
		}
	}
	return false
}

// Mailed reports whether the outcome kind was sent or given up on (not merely stored to send).
func Mailed(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind) bool {
	for _, n := range st.Notifications {
		if n.Kind == kind && n.State != payoutv1.NotificationPending {
			return true
		}
	}
	return false
}

// RecordNotification records that the stored outcome kind was mailed with messageID, or (failed
// set) refused for good; a record not stored as pending is left as it is.
func RecordNotification(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind, messageID, failed string, at time.Time) {
	for i := range st.Notifications {
		n := &st.Notifications[i]
		if n.Kind != kind || n.State != payoutv1.NotificationPending {
			continue
		}
		sent := metav1.NewTime(at)
		n.State, n.SentAt, n.MessageID = payoutv1.NotificationSent, &sent, messageID
		if failed != "" {
			n.State, n.Failed = payoutv1.NotificationRefused, truncate(failed, 256)
		}
	}
}

// schedule says when to look again without an event to wake the controller.
func schedule(d *decision) {
	t := d.t
	after := withStatus(t, d.st)
	switch {
	case d.st.Payout != nil && (d.st.Payout.State == payoutv1.PayoutRequested || d.st.Payout.State == payoutv1.PayoutAccepted):
		// Ask the provider again; sooner while the payout is young.
		age := d.in.Now.Sub(d.st.Payout.RequestedAt.Time)
		d.out.RequeueAfter = min(max(age/8, minProviderPoll), maxProviderPoll)
	case d.hold && d.out.Screen == "":
		d.out.RequeueAfter = ScreeningRetry
	case d.ended():
		if NeedsTx(after) {
			// an unresolved hash of a failed transfer: a deposit that still arrives is recorded
			// so that it can be refunded
			d.out.RequeueAfter = d.txPoll()
		}
		// a completed payout is asked about while its recipient's bank may still return it
		d.out.RequeueAfter = shortest(d.out.RequeueAfter, NextReturnCheck(after, d.in.Now))
	case d.in.Recipient.Deleted && d.st.Payout == nil:
		d.out.RequeueAfter = max(d.in.Recipient.DeletedAt.Add(RecipientDeletionGrace).Sub(d.in.Now), time.Second)
	case NeedsTx(after):
		d.out.RequeueAfter = shortest(d.txPoll(), d.matchTimeoutIn())
	case t.Spec.ExpiresAt != nil && d.st.Deposit == nil:
		if wait := t.Spec.ExpiresAt.Sub(d.in.Now); wait > 0 {
			d.out.RequeueAfter = wait
		} else {
			d.out.RequeueAfter = ChainWaitPoll // expired on the clock, not yet on the chain
		}
	}
}

// txPoll is the wait before the next lookup of the transfer's v2 hash.
func (d *decision) txPoll() time.Duration {
	if m := d.st.TxMatch; m != nil {
		return TxPoll(d.in.Now.Sub(m.RecordedAt.Time))
	}
	return MinTxPoll
}

// shortest is the shorter of two waits, 0 standing for none.
func shortest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func withStatus(t *payoutv1.Transfer, st *payoutv1.TransferStatus) *payoutv1.Transfer {
	c := *t
	c.Status = *st
	return &c
}

// finish derives the phase from the facts, and records a history line and an event when it
// changed. The history keeps its opening line and the newest lines, MaxHistory in all.
//
// A transfer whose status was never written and that gained no fact keeps its default status
// (StillDefault): its phase is the schema's default (payoutv1.DefaultPhase), so a fresh v1
// transfer costs no status patch and no event. Its opening line is written with its first fact, dated at its creation.
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

// StillDefault reports whether t's status is still the one it was created with (never written by
// the controller) and decided keeps it so: the controller then writes nothing, not even its Ready
// condition (see finish).
func StillDefault(t *payoutv1.Transfer, decided *payoutv1.TransferStatus) bool {
	return len(t.Status.History) == 0 && t.Status.ObservedGeneration == 0 && statusEqual(&t.Status, decided)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
