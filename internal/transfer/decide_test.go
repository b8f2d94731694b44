package transfer

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/test/testgen"
)

// Fixtures: a v1 transfer of 25.00 USD in USDC on Base created at the epoch, expiring a day later.

const (
	id       = "0123456789abcdef01234567"
	v2Addr   = "0x00000000000000000000000000000000000000f2"
	wallet   = "0x8ba1f109551bd432803012645ac136ddd64dba72"
	stranger = "0x1111111111111111111111111111111111111111"
)

var epoch = testgen.Epoch.Time

func at(d time.Duration) time.Time { return epoch.Add(d) }

func v1(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	dayAfter := func(t *payoutv1.Transfer) { e := metav1.NewTime(at(24 * time.Hour)); t.Spec.ExpiresAt = &e }
	t := testgen.Transfer("payout-acme", id, append([]func(*payoutv1.Transfer){dayAfter}, mods...)...)
	t.CreationTimestamp = metav1.NewTime(epoch)
	return t
}

func v2(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	return v1(append([]func(*payoutv1.Transfer){testgen.V2()}, mods...)...)
}

func hashed(t *payoutv1.Transfer) { t.Spec.TxHash = "0x" + strings.Repeat("ab", 32) }

// deposit is a Deposit record of amount base units of token in block at blockTime.
func deposit(amount string, token payoutv1.Token, block, logIndex int64, blockTime time.Time) payoutv1.Deposit {
	tx := fmt.Sprintf("0x%056x%08x", block, logIndex)
	return payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, logIndex), CreationTimestamp: metav1.NewTime(blockTime.Add(3 * time.Second))},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: token, Contract: "0xc0ffee", To: "0x71c7656ec7ab88b098defb751b7401b5f6d8976f",
			From: wallet, Amount: amount, TxHash: tx, LogIndex: logIndex, BlockNumber: block, BlockHash: "0xbb", BlockTime: metav1.NewTime(blockTime), Confirmations: 3},
	}
}

func good(blockTime time.Time) payoutv1.Deposit {
	return deposit("25000000", payoutv1.TokenUSDC, 100, 0, blockTime)
}

func tx(found, reverted bool, confirmations int64, transfers ...chain.TokenTransfer) *chain.TxObservation {
	return &chain.TxObservation{Network: payoutv1.NetworkBase, TxHash: "0x" + strings.Repeat("ab", 32), Found: found, Reverted: reverted,
		BlockNumber: 200, BlockHash: "0xcc", BlockTime: at(time.Hour), Confirmations: confirmations, Required: 3, Transfers: transfers}
}

func sent(token payoutv1.Token, from, to string, units int64) chain.TokenTransfer {
	return chain.TokenTransfer{Token: token, Contract: "0xc0ffee", From: from, To: to, Amount: big.NewInt(units), LogIndex: 4}
}

// stored applies a decision's status to a transfer, as the controller's write would.
func stored(t *payoutv1.Transfer, d Decision) *payoutv1.Transfer {
	c := t.DeepCopy()
	c.Status = d.Status
	return c
}

// input is what the controller would observe at now: the network's watcher a few blocks behind
// the clock (its cursor's block 30 s old), the recipient active.
func input(t *payoutv1.Transfer, now time.Time, mods ...func(*Input)) Input {
	in := Input{Transfer: t, Now: now, ProviderName: "simbank", V2Address: v2Addr, Mailing: true,
		Recipient: RecipientState{Known: true, ID: t.Spec.RecipientID},
		Cursor:    ChainProgress{Known: true, Block: 5000, BlockTime: now.Add(-30 * time.Second)},
		// the controller's second pass: asked by reference before a failure, the provider
		// holds no payout (TestNoFailureWithoutTheProvider covers the first pass)
		ProviderBefore: &ProviderPayout{Found: false},
		// the controller's second pass: the v2 deposit log is bound to this transfer
		// (TestV2DepositBinding covers the first)
		DepositHolder: t.Namespace + "/" + t.Name}
	for _, m := range mods {
		m(&in)
	}
	return in
}

// chainAt sets how far the network's watcher has scanned: to a block of time bt.
func chainAt(bt time.Time) func(*Input) {
	return func(in *Input) { in.Cursor = ChainProgress{Known: true, Block: 5000, BlockTime: bt} }
}

// from sends a deposit from another address.
func from(addr string, d payoutv1.Deposit) payoutv1.Deposit {
	d.Spec.From = addr
	return d
}

// on moves a deposit to another network.
func on(n payoutv1.Network, d payoutv1.Deposit) payoutv1.Deposit {
	d.Spec.Network = n
	d.Name = payoutv1.DepositName(n, d.Spec.TxHash, d.Spec.LogIndex)
	return d
}

// mailed records the pending outcome mails of t as sent, as the controller does after sending.
func mailed(t *payoutv1.Transfer, now time.Time) {
	for _, k := range []payoutv1.NotificationKind{payoutv1.NotificationFailed, payoutv1.NotificationPayoutSent} {
		RecordNotification(&t.Status, k, "<m@x>", "", now)
	}
}

func withDeposits(deps ...payoutv1.Deposit) func(*Input) {
	return func(in *Input) { in.Deposits = deps }
}
func withTx(o *chain.TxObservation) func(*Input) { return func(in *Input) { in.Tx = o } }
func withProvider(state payoutv1.PayoutState, msg string) func(*Input) {
	return func(in *Input) {
		in.Provider = &ProviderPayout{Found: true, State: state, ProviderID: "po_1", SourceAmount: "24.50", TargetAmount: "21.56", Rate: "0.88022588", Message: msg}
	}
}
func recipientDeleted(in *Input) {
	in.Recipient.Deleted, in.Recipient.Inactive, in.Recipient.DeletedAt = true, true, in.Now.Add(-RecipientDeletionGrace)
}

// recipientJustDeleted: deleted through the API a moment ago; the deletion's own cancellation
// is still on its way.
func recipientJustDeleted(in *Input) {
	in.Recipient.Deleted, in.Recipient.Inactive, in.Recipient.DeletedAt = true, true, in.Now.Add(-time.Second)
}
func recipientTidied(in *Input) { in.Recipient.Inactive = true }

// walk runs a transfer through inputs in order, storing each decision, and returns the last.
func walk(t *payoutv1.Transfer, ins ...func(*payoutv1.Transfer) Input) (*payoutv1.Transfer, Decision) {
	var d Decision
	for _, in := range ins {
		d = Decide(in(t))
		t = stored(t, d)
	}
	return t, d
}

func phases(t *payoutv1.Transfer) []payoutv1.TransferPhase {
	var out []payoutv1.TransferPhase
	for _, h := range t.Status.History {
		out = append(out, h.Status)
	}
	return out
}

func hasAction(d Decision, kind ActionKind, n payoutv1.NotificationKind) bool {
	for _, a := range d.Actions {
		if a.Kind == kind && (kind != ActNotify || a.Notification == n) {
			return true
		}
	}
	return false
}

func equalPhases(a, b []payoutv1.TransferPhase) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestV1Lifecycle walks a v1 transfer through every status to completed.
func TestV1Lifecycle(t *testing.T) {
	tr := v1()
	d := Decide(input(tr, at(time.Second)))
	// nothing is written at the opening: the schema defaults the phase of a status never written
	if !StillDefault(tr, &d.Status) || len(d.Status.History) != 0 || len(d.Events) != 0 || Phase(withStatus(tr, &d.Status)) != payoutv1.DefaultPhase {
		t.Fatalf("a fresh v1 transfer keeps its default status: %+v, events %+v", d.Status, d.Events)
	}
	if h := History(tr); len(h) != 1 || h[0].Status != payoutv1.PhaseReadyToProcess || h[0].Reason != ReasonCreated || !h[0].At.Equal(&tr.CreationTimestamp) {
		t.Errorf("its history reads as the opening line: %+v", h)
	}
	if d.RequeueAfter != 24*time.Hour-time.Second {
		t.Errorf("an unfunded v1 transfer is looked at again at its expiry: %v", d.RequeueAfter)
	}
	tr = stored(tr, d)

	d = Decide(input(tr, at(time.Minute), withDeposits(good(at(50*time.Second)))))
	if d.Status.Phase != payoutv1.PhaseProcessing || d.Status.Payout == nil || d.Status.Payout.State != payoutv1.PayoutRequested {
		t.Fatalf("a good deposit at depth records the payout intent: %+v", d.Status)
	}
	if d.Status.Payout.Reference != id || d.Status.Deposit.ConfirmedAt == nil || d.Status.Deposit.Record == "" {
		t.Errorf("intent and deposit facts: %+v %+v", d.Status.Payout, d.Status.Deposit)
	}
	if len(d.Actions) != 0 {
		t.Errorf("no action with the intent: the provider is called after it is stored, %v", d.Actions)
	}
	if !Pending(stored(tr, d)) || Pending(tr) {
		t.Error("Pending follows the stored intent only")
	}
	tr = stored(tr, d)

	d = Decide(input(tr, at(2*time.Minute), withDeposits(good(at(50*time.Second))), withProvider(payoutv1.PayoutAccepted, "")))
	if d.Status.Phase != payoutv1.PhaseTransferCreated || d.Status.Payout.ProviderID != "po_1" {
		t.Fatalf("accepted: %+v", d.Status)
	}
	tr = stored(tr, d)

	d = Decide(input(tr, at(3*time.Minute), withDeposits(good(at(50*time.Second))), withProvider(payoutv1.PayoutCompleted, "")))
	if d.Status.Phase != payoutv1.PhaseCompleted {
		t.Fatalf("completed: %+v", d.Status)
	}
	if !hasAction(d, ActNotify, payoutv1.NotificationPayoutSent) || !hasAction(d, ActDeleteRecipient, "") {
		t.Errorf("completed: mail and delete the recipient, got %+v", d.Actions)
	}
	want := []payoutv1.TransferPhase{payoutv1.PhaseReadyToProcess, payoutv1.PhaseProcessing, payoutv1.PhaseTransferCreated, payoutv1.PhaseCompleted}
	if got := phases(stored(tr, d)); !equalPhases(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
	tr = stored(tr, d)
	mailed(tr, at(3*time.Minute))
	d = Decide(input(tr, at(4*time.Minute), withDeposits(good(at(50*time.Second))), recipientDeleted))
	if len(d.Actions) != 0 || d.RequeueAfter != 0 || !statusEqual(&tr.Status, &d.Status) {
		t.Errorf("a finished transfer needs nothing more: %+v", d)
	}
}

func TestKeepRecipient(t *testing.T) {
	tr := v1(func(t *payoutv1.Transfer) {
		t.Spec.KeepRecipient = true
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutAccepted, RequestedAt: metav1.NewTime(epoch)}
	})
	d := Decide(input(tr, at(time.Hour), withProvider(payoutv1.PayoutCompleted, "")))
	if hasAction(d, ActDeleteRecipient, "") || !hasAction(d, ActNotify, payoutv1.NotificationPayoutSent) {
		t.Errorf("keep_recipient: mail only, got %+v", d.Actions)
	}
}

// TestFailures covers every way a transfer fails, and what it leaves refundable.
func TestFailures(t *testing.T) {
	cancelledAt := func(after time.Duration) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) {
			t.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, Message: "recipient 123456789 was deleted", RequestedAt: metav1.NewTime(at(after))}
		}
	}
	cancelled := cancelledAt(0)
	intent := func(state payoutv1.PayoutState) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) {
			t.Status.Deposit = testgen.Deposit()
			t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: state, RequestedAt: metav1.NewTime(at(time.Minute))}
		}
	}
	half := func(block int64, bt time.Time) payoutv1.Deposit {
		return deposit("12500000", payoutv1.TokenUSDC, block, 0, bt)
	}
	cases := []struct {
		name       string
		in         Input
		reason     payoutv1.FailureReason // "" : not failed
		refundable bool                   // a confirmed deposit is recorded
		intent     bool                   // a payout intent exists afterwards
		strays     int
		quiet      bool // failed without a mail (QuietFailure)
	}{
		{"cancelled (DELETE recipient) before the deposit", input(v1(cancelled), at(time.Minute)), payoutv1.FailureRecipientDeleted, false, false, 0, true},
		{"cancelled a minute after its creation, no deposit seen: mailed", input(v1(cancelledAt(time.Minute)), at(2*time.Minute)), payoutv1.FailureRecipientDeleted, false, false, 0, false},
		{"cancelled at once, a stray deposit seen: mailed", input(v1(cancelled), at(time.Minute), withDeposits(deposit("25000000", payoutv1.TokenUSDT, 100, 0, at(time.Second)))), payoutv1.FailureRecipientDeleted, false, false, 1, false},
		{"cancelled with the deposit arriving in the same pass", input(v1(cancelled), at(time.Minute), withDeposits(good(at(time.Second)))), payoutv1.FailureRecipientDeleted, true, false, 0, false},
		{"cancelled with half the amount arrived: that half is its deposit", input(v1(cancelled), at(time.Minute), withDeposits(half(100, at(time.Second)))), payoutv1.FailureRecipientDeleted, true, false, 0, false},
		{"cancelled after the payout intent: not stopped", input(v1(cancelled, intent(payoutv1.PayoutRequested)), at(time.Hour)), "", true, true, 0, false},
		{"recipient deleted without a cancellation (created during the deletion)", input(v1(), at(time.Minute), recipientDeleted, withDeposits(good(at(time.Second)))), payoutv1.FailureRecipientDeleted, true, false, 0, false},
		{"recipient deleted after the payout intent: not stopped", input(v1(intent(payoutv1.PayoutAccepted)), at(time.Hour), recipientDeleted), "", true, true, 0, false},
		{"recipient deleted through the API a moment ago: neither failed nor paid yet", input(v1(), at(time.Minute), recipientJustDeleted, withDeposits(good(at(time.Second)))), "", true, false, 0, false},
		{"recipient deleted automatically after another transfer: not stopped", input(v1(), at(time.Minute), recipientTidied, withDeposits(good(at(time.Second)))), "", true, true, 0, false},
		{"expired without a deposit, the chain past the expiry", input(v1(), at(24*time.Hour+time.Minute)), payoutv1.FailureExpired, false, false, 0, false},
		{"expired on the clock, the chain behind: waits", input(v1(), at(25*time.Hour), chainAt(at(24*time.Hour-time.Second))), "", false, false, 0, false},
		{"expired on the clock, no cursor: waits", input(v1(), at(25*time.Hour), func(in *Input) { in.Cursor = ChainProgress{} }), "", false, false, 0, false},
		{"not yet expired", input(v1(), at(24*time.Hour-time.Second)), "", false, false, 0, false},
		{"deposit made before expiry, seen after it", input(v1(), at(25*time.Hour), withDeposits(good(at(24*time.Hour-time.Minute)))), "", true, true, 0, false},
		{"deposit made after expiry: expired, the deposit a stray", input(v1(), at(25*time.Hour), chainAt(at(23*time.Hour)), withDeposits(good(at(24*time.Hour+time.Minute)))), payoutv1.FailureExpired, false, false, 1, false},
		{"half the amount before expiry", input(v1(), at(25*time.Hour), withDeposits(half(100, at(time.Hour)))), payoutv1.FailureDepositShort, true, false, 0, false},
		{"half the amount, not yet expired: waits for the rest", input(v1(), at(time.Hour), withDeposits(half(100, at(time.Minute)))), "", false, false, 0, false},
		{"short by a unit at expiry", input(v1(), at(25*time.Hour), withDeposits(deposit("24999999", payoutv1.TokenUSDC, 100, 0, at(time.Second)))), payoutv1.FailureDepositShort, true, false, 0, false},
		{"wrong token: a stray, the transfer waits", input(v1(), at(time.Minute), withDeposits(deposit("25000000", payoutv1.TokenUSDT, 100, 0, at(time.Second)))), "", false, false, 1, false},
		{"garbage amount reads as nothing", input(v1(), at(time.Minute), withDeposits(deposit("25e6", payoutv1.TokenUSDC, 100, 0, at(time.Second)))), "", false, false, 0, false},
		{"bank rejects the payout", input(v1(intent(payoutv1.PayoutAccepted)), at(time.Hour), withProvider(payoutv1.PayoutRejected, "name mismatch")), payoutv1.FailurePayoutRejected, true, true, 0, false},
		{"bank rejects a requested payout", input(v1(intent(payoutv1.PayoutRequested)), at(time.Hour), withProvider(payoutv1.PayoutRejected, "")), payoutv1.FailurePayoutRejected, true, true, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.in)
			st := d.Status
			if c.reason == "" {
				if st.Failure != nil {
					t.Fatalf("failed: %+v", st.Failure)
				}
			} else {
				if st.Failure == nil || st.Failure.Reason != c.reason || st.Phase != payoutv1.PhaseFailed || st.Failure.Message == "" {
					t.Fatalf("want failed %s, got phase %s failure %+v", c.reason, st.Phase, st.Failure)
				}
				switch {
				case c.quiet && (hasAction(d, ActNotify, payoutv1.NotificationFailed) || len(st.Notifications) != 0):
					t.Errorf("cancelled by its account at once, before any deposit: no mail, got %+v %+v", d.Actions, st.Notifications)
				case !c.quiet && (!hasAction(d, ActNotify, payoutv1.NotificationFailed) || !Notified(&st, payoutv1.NotificationFailed) || Mailed(&st, payoutv1.NotificationFailed)):
					t.Errorf("a failure's mail is stored as pending and sent after: %+v %+v", d.Actions, st.Notifications)
				}
				if again := Decide(input(stored(c.in.Transfer, d), c.in.Now.Add(time.Hour))); c.quiet && hasAction(again, ActNotify, payoutv1.NotificationFailed) {
					t.Errorf("a later pass mails no quiet failure: %+v", again.Actions)
				}
				if !hasWarning(d, string(c.reason)) {
					t.Errorf("a failure is a Warning event: %+v", d.Events)
				}
			}
			if got := st.Deposit != nil && st.Deposit.ConfirmedAt != nil; got != c.refundable {
				t.Errorf("deposit recorded = %v, want %v", got, c.refundable)
			}
			if got := st.Payout != nil; got != c.intent {
				t.Errorf("payout intent = %v, want %v", got, c.intent)
			}
			if len(st.StrayDeposits) != c.strays {
				t.Errorf("strays %+v, want %d", st.StrayDeposits, c.strays)
			}
			deleting := hasAction(d, ActDeleteRecipient, "")
			if c.in.Recipient.Deleted && deleting {
				t.Error("a deleted recipient is not deleted again")
			}
		})
	}
}

// TestExpiryWaitsForTheChain: past expiresAt on the clock, a transfer fails only once its
// network's watcher has scanned past that time; meanwhile it says why it waits and is looked at
// again, and a deposit mined in time that the watcher then records pays it.
func TestExpiryWaitsForTheChain(t *testing.T) {
	tr := v1()
	lagging := chainAt(at(23 * time.Hour))
	d := Decide(input(tr, at(25*time.Hour), lagging))
	if d.Status.Failure != nil || d.Waiting == "" || d.RequeueAfter != ChainWaitPoll {
		t.Fatalf("waits for the chain: failure %+v, waiting %q, requeue %v", d.Status.Failure, d.Waiting, d.RequeueAfter)
	}
	d = Decide(input(tr, at(25*time.Hour+time.Minute), chainAt(at(24*time.Hour-10*time.Second)), withDeposits(good(at(24*time.Hour-time.Minute)))))
	if d.Status.Payout == nil || d.Status.Failure != nil {
		t.Fatalf("a deposit mined before the expiry and recorded late pays: %+v", d.Status)
	}
	// a recorded deposit mined after the expiry shows the chain passed it, cursor or not
	d = Decide(input(tr, at(25*time.Hour), lagging, withDeposits(from(stranger, good(at(24*time.Hour+time.Second))))))
	if d.Status.Failure == nil || d.Status.Failure.Reason != payoutv1.FailureExpired {
		t.Fatalf("expired: %+v", d.Status.Failure)
	}
}

func hasWarning(d Decision, reason string) bool {
	for _, e := range d.Events {
		if e.Type == "Warning" && e.Reason == reason {
			return true
		}
	}
	return false
}

// TestWhoPaid: only a deposit from the transfer's wallet credits it (spec 4.10: "sends exactly
// amount from wallet_address"); a stranger's payment, of any amount, is a stray, never paid out.
func TestWhoPaid(t *testing.T) {
	d := Decide(input(v1(), at(time.Minute), withDeposits(from(stranger, good(at(time.Second))))))
	if d.Status.Payout != nil || d.Status.Deposit != nil || d.Status.Failure != nil {
		t.Fatalf("a stranger's deposit pays nothing and fails nothing: %+v", d.Status)
	}
	if len(d.Status.StrayDeposits) != 1 || d.Status.StrayDeposits[0].From != stranger || !hasWarning(d, ReasonStrayDeposit) {
		t.Fatalf("it is a stray: %+v %+v", d.Status.StrayDeposits, d.Events)
	}
	if strings.Contains(d.Events[0].Message, "by hand") || !strings.Contains(d.Events[0].Message, "kubectl payout refund "+id) {
		t.Errorf("the event names the tool: %q", d.Events[0].Message)
	}
	// the wallet's own payment, checksummed differently, still pays
	checksummed := from("0x8ba1f109551bD432803012645Ac136ddd64DBA72", deposit("25000000", payoutv1.TokenUSDC, 101, 0, at(2*time.Second)))
	d = Decide(input(stored(v1(), d), at(2*time.Minute), withDeposits(from(stranger, good(at(time.Second))), checksummed)))
	if d.Status.Payout == nil || d.Status.Deposit.From != checksummed.Spec.From {
		t.Fatalf("the wallet's deposit pays: %+v", d.Status)
	}
}

// TestDustAndPartialSends: a zero-value log is ignored; a stranger's dust placed first neither
// fails the transfer nor takes the customer's payment's place; the wallet's sends add up until
// they reach the amount, and the excess is a stray.
func TestDustAndPartialSends(t *testing.T) {
	dust := from(stranger, deposit("1", payoutv1.TokenUSDC, 90, 0, at(time.Second)))
	zero := deposit("0", payoutv1.TokenUSDC, 91, 0, at(time.Second))
	first := deposit("10000000", payoutv1.TokenUSDC, 100, 1, at(time.Minute))
	second := deposit("20000000", payoutv1.TokenUSDC, 105, 3, at(2*time.Minute))
	later := deposit("5000000", payoutv1.TokenUSDC, 110, 0, at(3*time.Minute))

	d := Decide(input(v1(), at(90*time.Second), withDeposits(dust, zero, first)))
	if d.Status.Failure != nil || d.Status.Deposit != nil || len(d.Status.StrayDeposits) != 1 {
		t.Fatalf("dust is a stray, the first send waits for the rest: %+v", d.Status)
	}
	if got, want := Received(v1(), []payoutv1.Deposit{dust, zero, first}); got.String() != "10000000" || want.String() != "25000000" {
		t.Errorf("received %s of %s", got, want)
	}
	tr := stored(v1(), d)
	d = Decide(input(tr, at(3*time.Minute), withDeposits(dust, zero, first, second)))
	dep := d.Status.Deposit
	if d.Status.Payout == nil || dep == nil || dep.Amount != "25000000" || len(dep.Parts) != 2 || dep.Parts[1].Amount != "15000000" {
		t.Fatalf("two sends settle the transfer, the second in part: %+v", dep)
	}
	if n := len(d.Status.StrayDeposits); n != 2 || d.Status.StrayDeposits[1].Amount != "5000000" || d.Status.StrayDeposits[1].TxHash != second.Spec.TxHash {
		t.Fatalf("the excess of the second send is a stray: %+v", d.Status.StrayDeposits)
	}
	tr = stored(tr, d)
	d = Decide(input(tr, at(4*time.Minute), withDeposits(later, dust, zero, first, second)))
	if d.Status.Deposit.Amount != "25000000" || len(d.Status.StrayDeposits) != 3 {
		t.Fatalf("a send after the amount was reached is a stray: %+v", d.Status.StrayDeposits)
	}
	// an earlier block seen late never changes what was credited
	early := deposit("25000000", payoutv1.TokenUSDC, 50, 0, at(30*time.Second))
	d = Decide(input(stored(tr, d), at(5*time.Minute), withDeposits(early, later, dust, zero, first, second)))
	if len(d.Status.Deposit.Parts) != 2 || d.Status.Deposit.Parts[0].TxHash != first.Spec.TxHash || len(d.Status.StrayDeposits) != 4 {
		t.Fatalf("the credited sends stay: %+v %+v", d.Status.Deposit, d.Status.StrayDeposits)
	}
}

// TestWrongNetwork: a deposit sent to the transfer's address on another EVM network is a stray
// of the transfer, refundable on that network.
func TestWrongNetwork(t *testing.T) {
	poly := on(payoutv1.NetworkPolygon, good(at(time.Second)))
	d := Decide(input(v1(), at(time.Minute), withDeposits(poly)))
	if d.Status.Payout != nil || len(d.Status.StrayDeposits) != 1 || d.Status.StrayDeposits[0].Network != payoutv1.NetworkPolygon {
		t.Fatalf("a stray on polygon: %+v", d.Status)
	}
	owed := OwedOf(stored(v1(), d), []payoutv1.Deposit{poly}, false)
	if len(owed) != 1 || owed[0].Network != payoutv1.NetworkPolygon || owed[0].Deposit == nil || owed[0].Units != "25000000" {
		t.Fatalf("owed on polygon: %+v", owed)
	}
}

// TestStrayDeposits: every deposit but the credited ones is kept apart for a refund.
func TestStrayDeposits(t *testing.T) {
	second := deposit("5000000", payoutv1.TokenUSDC, 101, 2, at(2*time.Minute))
	d := Decide(input(v1(), at(3*time.Minute), withDeposits(second, good(at(time.Minute)))))
	if d.Status.Deposit.BlockNumber != 100 || d.Status.Payout == nil {
		t.Fatalf("the first deposit by block is credited: %+v", d.Status.Deposit)
	}
	if len(d.Status.StrayDeposits) != 1 || d.Status.StrayDeposits[0].Amount != "5000000" {
		t.Fatalf("the second is stray: %+v", d.Status.StrayDeposits)
	}
	again := Decide(input(stored(v1(), d), at(4*time.Minute), withDeposits(second, good(at(time.Minute)))))
	if len(again.Status.StrayDeposits) != 1 {
		t.Errorf("a stray is recorded once: %+v", again.Status.StrayDeposits)
	}

	over := Decide(input(v1(), at(time.Minute), withDeposits(deposit("25010000", payoutv1.TokenUSDC, 100, 0, at(time.Second)))))
	if over.Status.Payout == nil || over.Status.Deposit.Amount != "25000000" || len(over.Status.StrayDeposits) != 1 || over.Status.StrayDeposits[0].Amount != "10000" {
		t.Errorf("an overpayment pays the transfer and keeps the excess apart: %+v %+v", over.Status.Deposit, over.Status.StrayDeposits)
	}

	done := v1(func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: metav1.NewTime(epoch)}
	})
	late := Decide(input(done, at(time.Hour), withDeposits(good(at(30*time.Minute)))))
	if late.Status.Phase != payoutv1.PhaseCompleted || len(late.Status.StrayDeposits) != 1 {
		t.Errorf("a deposit to a completed transfer is stray: %+v", late.Status)
	}

	many := []payoutv1.Deposit{good(at(time.Minute))}
	for i := range int64(40) {
		many = append(many, from(stranger, deposit("1", payoutv1.TokenUSDC, 200+i, 0, at(time.Hour))))
	}
	bounded := Decide(input(v1(), at(2*time.Hour), withDeposits(many...)))
	if len(bounded.Status.StrayDeposits) != payoutv1.MaxStrays {
		t.Errorf("strays listed are bounded: %d", len(bounded.Status.StrayDeposits))
	}
	if owed := OwedOf(stored(v1(), bounded), many, false); len(owed) != 40 {
		t.Errorf("every stray is owed, listed or not: %d", len(owed))
	}
}

// TestOwed: what a transfer owes is refunded once each: its deposit when it failed, and every
// stray deposit, the excess of an overpayment separately from the deposit (never both ways).
func TestOwed(t *testing.T) {
	over := deposit("25010000", payoutv1.TokenUSDC, 100, 0, at(time.Second))
	dust := from(stranger, deposit("1", payoutv1.TokenUSDC, 90, 0, at(time.Second)))
	deps := []payoutv1.Deposit{over, dust}
	paid := stored(v1(), Decide(input(v1(), at(time.Minute), withDeposits(deps...))))
	owed := OwedOf(paid, deps, false)
	if len(owed) != 2 {
		t.Fatalf("a paid transfer owes its strays only: %+v", owed)
	}
	names := map[string]bool{}
	total := int64(0)
	for _, o := range owed {
		if o.Deposit == nil || names[o.Name] || !strings.HasPrefix(o.Name, id+"-") {
			t.Errorf("stray refunds have one name each: %+v", o)
		}
		names[o.Name] = true
		n, _ := strconv.ParseInt(o.Units, 10, 64)
		total += n
	}
	if total != 10001 {
		t.Errorf("the excess and the dust: %d units", total)
	}
	failed := stored(paid, Decide(input(paid, at(time.Hour), withProvider(payoutv1.PayoutRejected, "no"))))
	owed = OwedOf(failed, deps, false)
	if len(owed) != 3 || owed[0].Name != id || owed[0].Units != "25000000" || owed[0].Deposit != nil {
		t.Fatalf("a failed transfer owes its deposit (the amount, not the overpayment) and its strays: %+v", owed)
	}
	failed.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xfeed"}
	if owed := OwedOf(failed, deps, false); len(owed) != 2 {
		t.Errorf("a refunded deposit is owed no more: %+v", owed)
	}
}

// TestLateDepositAfterFailure: a deposit to a failed transfer is recorded as a stray, so it can
// be refunded; the failure is not mailed twice.
func TestLateDepositAfterFailure(t *testing.T) {
	expired, _ := walk(v1(), func(t *payoutv1.Transfer) Input { return input(t, at(25*time.Hour)) })
	if expired.Status.Failure == nil || expired.Status.Deposit != nil {
		t.Fatalf("expired: %+v", expired.Status)
	}
	mailed(expired, at(25*time.Hour))
	d := Decide(input(expired, at(26*time.Hour), withDeposits(good(at(25*time.Hour+time.Minute))), recipientDeleted))
	if d.Status.Failure.Reason != payoutv1.FailureExpired || len(d.Status.StrayDeposits) != 1 || d.Status.Payout != nil {
		t.Fatalf("the late deposit is a stray and nothing is paid: %+v", d.Status)
	}
	if !hasWarning(d, ReasonStrayDeposit) {
		t.Errorf("warning: %+v", d.Events)
	}
	if len(d.Actions) != 0 {
		t.Errorf("the failure was mailed once already and the recipient is gone: %+v", d.Actions)
	}
}

// TestMailIsStoredBeforeSent: the outcome to mail is decided once and stored as pending; the
// controller sends it only after that is stored, and a retry sends the same outcome.
func TestMailIsStoredBeforeSent(t *testing.T) {
	tr := v1(func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutAccepted, RequestedAt: metav1.NewTime(epoch)}
	})
	d := Decide(input(tr, at(time.Hour), withProvider(payoutv1.PayoutCompleted, "")))
	n := d.Status.Notifications
	if len(n) != 1 || n[0].State != payoutv1.NotificationPending || n[0].Kind != payoutv1.NotificationPayoutSent || n[0].SentAt != nil {
		t.Fatalf("the outcome mail is stored as pending: %+v", n)
	}
	tr = stored(tr, d)
	// a retry (the send or its record lost) asks for the same outcome, even if the provider now
	// says something else
	d = Decide(input(tr, at(2*time.Hour), withProvider(payoutv1.PayoutRejected, "late")))
	if !hasAction(d, ActNotify, payoutv1.NotificationPayoutSent) || hasAction(d, ActNotify, payoutv1.NotificationFailed) || d.Status.Failure != nil {
		t.Fatalf("the stored outcome is sent again, no other: %+v %+v", d.Actions, d.Status.Failure)
	}
	mailed(tr, at(2*time.Hour))
	if tr.Status.Notifications[0].State != payoutv1.NotificationSent || tr.Status.Notifications[0].MessageID != "<m@x>" {
		t.Fatalf("recorded sent: %+v", tr.Status.Notifications)
	}
	if d := Decide(input(tr, at(3*time.Hour))); hasAction(d, ActNotify, payoutv1.NotificationPayoutSent) {
		t.Error("a sent mail is not sent again")
	}
}

// TestScreenTheWalletThatPaid: the payer is screened at depth before any payout; a service that
// cannot answer holds the payout and says why; a blocked payer fails the transfer.
func TestScreenTheWalletThatPaid(t *testing.T) {
	screening := func(r payoutv1.ScreeningResult, msg string) func(*Input) {
		return func(in *Input) {
			in.ScreenSender = true
			in.Screening = &Screening{Address: wallet, Result: r, Message: msg}
		}
	}
	ask := func(in *Input) { in.ScreenSender = true }
	d := Decide(input(v1(), at(time.Minute), withDeposits(good(at(time.Second))), ask))
	if d.Screen != wallet || d.Status.Payout != nil {
		t.Fatalf("the payer is screened before the intent: screen %q, payout %+v", d.Screen, d.Status.Payout)
	}
	d = Decide(input(v1(), at(time.Minute), withDeposits(good(at(time.Second))), screening(payoutv1.ScreeningCleared, "")))
	if d.Status.Payout == nil || d.Status.SenderScreening == nil || d.Status.SenderScreening.Result != payoutv1.ScreeningCleared {
		t.Fatalf("cleared: %+v", d.Status)
	}
	if again := Decide(input(stored(v1(), d), at(2*time.Minute), withDeposits(good(at(time.Second))), ask)); again.Screen != "" {
		t.Error("a cleared payer is not screened again")
	}
	d = Decide(input(v1(), at(time.Minute), withDeposits(good(at(time.Second))), screening(payoutv1.ScreeningUnavailable, "connection refused")))
	if d.Status.Payout != nil || d.Status.Failure != nil || d.Waiting == "" || d.RequeueAfter != ScreeningRetry || !hasWarning(d, ReasonScreeningUnavailable) {
		t.Fatalf("held while the service is down: %+v waiting %q requeue %v", d.Status, d.Waiting, d.RequeueAfter)
	}
	held := stored(v1(), d)
	if again := Decide(input(held, at(2*time.Minute), withDeposits(good(at(time.Second))), screening(payoutv1.ScreeningUnavailable, "connection refused"))); hasWarning(again, ReasonScreeningUnavailable) || !statusEqual(&held.Status, &again.Status) {
		t.Error("the same outage is reported once, and writes nothing more")
	}
	d = Decide(input(held, at(3*time.Minute), withDeposits(good(at(time.Second))), screening(payoutv1.ScreeningBlocked, "sanctioned")))
	if d.Status.Payout != nil || d.Status.Failure == nil || d.Status.Failure.Reason != payoutv1.FailureSenderBlocked {
		t.Fatalf("a blocked payer fails the transfer: %+v", d.Status)
	}
}

// TestRefund: only failed → refunded leaves a final status.
func TestRefund(t *testing.T) {
	failed := v1(func(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }, testgen.Failed(payoutv1.FailurePayoutRejected, "rejected"))
	confirmed := &payoutv1.Refund{Status: payoutv1.RefundStatus{State: payoutv1.RefundConfirmed, TxHash: "0xfeed", Amount: "25000000", To: wallet}}
	d := Decide(input(failed, at(time.Hour), func(in *Input) { in.Refund = confirmed }))
	if d.Status.Phase != payoutv1.PhaseRefunded || d.Status.Refund == nil || d.Status.Refund.TxHash != "0xfeed" {
		t.Fatalf("refunded: %+v", d.Status)
	}
	broadcast := confirmed.DeepCopy()
	broadcast.Status.State = payoutv1.RefundBroadcast
	if d := Decide(input(failed, at(time.Hour), func(in *Input) { in.Refund = broadcast })); d.Status.Refund != nil {
		t.Error("a refund counts once at depth")
	}
	completed := v1(func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: metav1.NewTime(epoch)}
	})
	if d := Decide(input(completed, at(time.Hour), func(in *Input) { in.Refund = confirmed })); d.Status.Phase != payoutv1.PhaseCompleted {
		t.Errorf("a completed transfer is never refunded: %s", d.Status.Phase)
	}
	// a stray's refund is listed with the stray and changes no status
	dust := from(stranger, deposit("1", payoutv1.TokenUSDC, 90, 0, at(time.Second)))
	paid := stored(completed, Decide(input(completed, at(time.Hour), withDeposits(dust))))
	ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: dust.Spec.TxHash, LogIndex: 0}
	strayRefund := payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.StrayRefundName(id, ref)}, Spec: payoutv1.RefundSpec{Transfer: id, Deposit: &ref},
		Status: payoutv1.RefundStatus{State: payoutv1.RefundConfirmed, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0xbeef", Amount: "1", To: stranger}}
	d = Decide(input(paid, at(2*time.Hour), withDeposits(dust), func(in *Input) { in.StrayRefunds = []payoutv1.Refund{strayRefund} }))
	if d.Status.Phase != payoutv1.PhaseCompleted || d.Status.StrayDeposits[0].Refund == nil || d.Status.StrayDeposits[0].Refund.TxHash != "0xbeef" {
		t.Fatalf("the stray's refund is recorded: %+v", d.Status.StrayDeposits)
	}
}

// TestV2Lifecycle walks v2 through awaiting_deposit → pending_match → deposit_sent → processing.
func TestV2Lifecycle(t *testing.T) {
	tr := v2()
	d := Decide(input(tr, at(time.Second)))
	if d.Status.Phase != payoutv1.PhaseAwaitingDeposit || d.RequeueAfter != 0 {
		t.Fatalf("v2 waits for its hash, without expiry: %+v", d)
	}
	tr = stored(tr, d)
	hashed(tr)
	if !NeedsTx(tr) {
		t.Fatal("a confirmed hash is looked up")
	}
	d = Decide(input(tr, at(time.Minute), withTx(tx(false, false, 0))))
	if d.Status.Phase != payoutv1.PhasePendingMatch || d.RequeueAfter != MinTxPoll || d.Status.TxMatch == nil || !d.Status.TxMatch.RecordedAt.Time.Equal(at(time.Minute)) {
		t.Fatalf("pending_match: %+v", d)
	}
	tr = stored(tr, d)
	right := sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)
	d = Decide(input(tr, at(2*time.Minute), withTx(tx(true, false, 1, right))))
	if d.Status.Phase != payoutv1.PhaseDepositSent || d.Status.Deposit == nil || d.Status.Deposit.ConfirmedAt != nil || d.Status.Payout != nil {
		t.Fatalf("deposit_sent: %+v", d.Status)
	}
	tr = stored(tr, d)
	d = Decide(input(tr, at(3*time.Minute), withTx(tx(true, false, 3, right))))
	if d.Status.Phase != payoutv1.PhaseProcessing || d.Status.Payout == nil || d.Status.Deposit.ConfirmedAt == nil {
		t.Fatalf("processing at depth: %+v", d.Status)
	}
	want := []payoutv1.TransferPhase{payoutv1.PhaseAwaitingDeposit, payoutv1.PhasePendingMatch, payoutv1.PhaseDepositSent, payoutv1.PhaseProcessing}
	if got := phases(stored(tr, d)); !equalPhases(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
	if NeedsTx(stored(tr, d)) {
		t.Error("a deposit at depth is not looked up again")
	}
}

// TestV2UnfoundHashBacksOff: a hash that never appears is looked up at intervals doubling from
// 2 s to 5 minutes, and after the match timeout the transfer fails and releases the hash.
func TestV2UnfoundHashBacksOff(t *testing.T) {
	tr := stored(v2(hashed), Decide(input(v2(hashed), at(0))))
	timeout := func(in *Input) { in.MatchTimeout = DefaultMatchTimeout }
	var waits []time.Duration
	now := at(0)
	for range 12 {
		d := Decide(input(tr, now, withTx(tx(false, false, 0)), timeout))
		waits = append(waits, d.RequeueAfter)
		now = now.Add(d.RequeueAfter)
	}
	want := []time.Duration{2, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300}
	for i, w := range want {
		if waits[i] != w*time.Second {
			t.Fatalf("lookup waits %v, want %v (seconds)", waits, want)
		}
	}
	d := Decide(input(tr, at(DefaultMatchTimeout-time.Minute), withTx(tx(false, false, 0)), timeout))
	if d.RequeueAfter != time.Minute || d.Status.Failure != nil {
		t.Errorf("the timeout is the next look: %v", d.RequeueAfter)
	}
	d = Decide(input(tr, at(DefaultMatchTimeout), withTx(tx(false, false, 0)), timeout))
	if d.Status.Failure == nil || d.Status.Failure.Reason != payoutv1.FailureDepositNotFound || d.Status.TxMatch.ReleasedAt == nil || !hasAction(d, ActReleaseHash, "") {
		t.Fatalf("not found in time: failed and released: %+v %+v", d.Status.Failure, d.Actions)
	}
	if NeedsTx(stored(tr, d)) {
		t.Error("a released hash is not looked up any more")
	}
	// a failed transfer whose hash is still its own keeps being looked at
	cancelled := stored(tr, Decide(input(v2(hashed, testgen.Failed(payoutv1.FailureRecipientDeleted, "gone")), at(time.Hour), withTx(tx(false, false, 0)))))
	if d := Decide(input(cancelled, at(2*time.Hour), withTx(tx(false, false, 0)))); d.RequeueAfter == 0 || d.RequeueAfter > MaxTxPoll {
		t.Errorf("a failed transfer's unresolved hash is looked up again: %v", d.RequeueAfter)
	}
}

// TestV2Verification: the hash must send the transfer's amount of its token to the platform
// address, from its wallet when it has one, from a wallet not bound to another account, in a
// block after the transfer's creation; judged at depth only. A hash that does not pay fails the
// transfer and is released, and its observation is not owed by the transfer.
func TestV2Verification(t *testing.T) {
	right := sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)
	headAt := func(n int64) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) { t.Spec.HeadAtCreation = n }
	}
	bound := func(ns string) func(*Input) {
		return func(in *Input) { in.WalletBindings = map[string]string{chain.SenderKey(wallet): ns} }
	}
	cases := []struct {
		name     string
		tr       *payoutv1.Transfer
		obs      *chain.TxObservation
		mods     []func(*Input)
		mismatch bool
		intent   bool
	}{
		{"right", v2(hashed), tx(true, false, 3, right), nil, false, true},
		{"right, mined after the transfer's creation", v2(hashed, headAt(199)), tx(true, false, 3, right), nil, false, true},
		{"mined in the block the network had reached at the creation", v2(hashed, headAt(200)), tx(true, false, 3, right), nil, true, false},
		{"mined before the creation", v2(hashed, headAt(250)), tx(true, false, 3, right), nil, true, false},
		{"right, checksummed addresses", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, "0x8ba1f109551bD432803012645Ac136ddd64DBA72", strings.ToUpper(v2Addr[:2])+v2Addr[2:], 25000000)), nil, false, true},
		{"to another address", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, stranger, 25000000)), nil, true, false},
		{"another amount", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, v2Addr, 24000000)), nil, true, false},
		{"another token", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDT, wallet, v2Addr, 25000000)), nil, true, false},
		{"from another wallet", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, stranger, v2Addr, 25000000)), nil, true, false},
		{"from any wallet when none is set", v2(hashed, func(t *payoutv1.Transfer) { t.Spec.WalletAddress = "" }), tx(true, false, 3, sent(payoutv1.TokenUSDC, stranger, v2Addr, 25000000)), nil, false, true},
		{"from a wallet bound to another account", v2(hashed), tx(true, false, 3, right), []func(*Input){bound("payout-other")}, true, false},
		{"from a wallet bound to this account", v2(hashed), tx(true, false, 3, right), []func(*Input){bound("payout-acme")}, false, true},
		{"reverted", v2(hashed), tx(true, true, 3, right), nil, true, false},
		{"the right transfer among others", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, stranger, 1), right), nil, false, true},
		{"another amount, not at depth yet: not judged", v2(hashed), tx(true, false, 2, sent(payoutv1.TokenUSDC, wallet, v2Addr, 24000000)), nil, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(input(c.tr, at(time.Hour), append([]func(*Input){withTx(c.obs)}, c.mods...)...))
			failed := d.Status.Failure != nil
			if failed != c.mismatch {
				t.Fatalf("failed = %v (%+v), want %v", failed, d.Status.Failure, c.mismatch)
			}
			if failed && d.Status.Failure.Reason != payoutv1.FailureDepositMismatch {
				t.Errorf("reason %s", d.Status.Failure.Reason)
			}
			if got := d.Status.Payout != nil; got != c.intent {
				t.Errorf("payout intent = %v, want %v", got, c.intent)
			}
			released := Released(stored(c.tr, d))
			if released != c.mismatch || hasAction(d, ActReleaseHash, "") != c.mismatch {
				t.Errorf("released = %v, actions %+v; want %v", released, d.Actions, c.mismatch)
			}
			if c.mismatch {
				if owed := OwedOf(stored(c.tr, d), nil, false); len(owed) != 0 {
					t.Errorf("a released observation is not owed by the transfer: %+v", owed)
				}
				if d.Status.Deposit != nil && len(OwedOf(stored(c.tr, d), nil, true)) != 1 {
					t.Error("once the transfer holds the hash again (refund), its observation is owed")
				}
			}
		})
	}
}

// TestV2ReleaseKeepsARefundsClaim: while a refund of the transfer is requested, the claim the
// refund tool took back is not released again.
func TestV2ReleaseKeepsARefundsClaim(t *testing.T) {
	tr := stored(v2(hashed), Decide(input(v2(hashed), at(time.Hour), withTx(tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, v2Addr, 24000000))))))
	if !hasAction(Decide(input(tr, at(2*time.Hour))), ActReleaseHash, "") {
		t.Fatal("released while no refund is requested")
	}
	if d := Decide(input(tr, at(2*time.Hour), func(in *Input) { in.Refund = &payoutv1.Refund{} })); hasAction(d, ActReleaseHash, "") {
		t.Error("a refund's claim is kept")
	}
}

// TestV2BindWallet: a completed v2 transfer binds its sender to an account that binds wallets.
func TestV2BindWallet(t *testing.T) {
	tr := v2(hashed, func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutAccepted, RequestedAt: metav1.NewTime(epoch)}
	})
	bind := func(in *Input) { in.BindWallets = true }
	// Issue 28: the binding is no longer first come, first served: a wallet its owner did not
	// prove for the account is not bound by a completed transfer.
	if d := Decide(input(tr, at(time.Hour), withProvider(payoutv1.PayoutCompleted, ""), bind)); hasAction(d, ActBindWallet, "") {
		t.Error("binds a wallet not proven for the account")
	}
	proven := func(in *Input) { in.ProvenWallets = map[string]bool{chain.SenderKey(wallet): true} }
	d := Decide(input(tr, at(time.Hour), withProvider(payoutv1.PayoutCompleted, ""), bind, proven))
	var a *Action
	for i := range d.Actions {
		if d.Actions[i].Kind == ActBindWallet {
			a = &d.Actions[i]
		}
	}
	if a == nil || !chain.SameSender(a.Wallet, wallet) {
		t.Fatalf("binds the sender: %+v", d.Actions)
	}
	if d := Decide(input(tr, at(time.Hour), withProvider(payoutv1.PayoutCompleted, ""), proven)); hasAction(d, ActBindWallet, "") {
		t.Error("no binding for an account that does not bind wallets")
	}
}

// TestV2Reorg: a transaction seen before depth and then gone is waited for again.
func TestV2Reorg(t *testing.T) {
	right := sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)
	tr, _ := walk(v2(hashed),
		func(t *payoutv1.Transfer) Input { return input(t, at(time.Minute), withTx(tx(true, false, 1, right))) },
		func(t *payoutv1.Transfer) Input { return input(t, at(2*time.Minute), withTx(tx(false, false, 0))) },
	)
	if tr.Status.Phase != payoutv1.PhasePendingMatch || tr.Status.Deposit != nil {
		t.Fatalf("back to pending_match: %+v", tr.Status)
	}
	want := []payoutv1.TransferPhase{payoutv1.PhaseAwaitingDeposit, payoutv1.PhaseDepositSent, payoutv1.PhasePendingMatch}
	if got := phases(tr); !equalPhases(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
}

// TestV2DepositAfterFailure: a v2 transfer cancelled before its deposit still records the deposit
// when the hash is confirmed, so that it can be refunded; it is never paid.
func TestV2DepositAfterFailure(t *testing.T) {
	tr := v2(hashed, testgen.Failed(payoutv1.FailureRecipientDeleted, "recipient deleted"))
	if !NeedsTx(tr) {
		t.Fatal("a failed v2 transfer's hash is still looked up")
	}
	d := Decide(input(tr, at(time.Hour), withTx(tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)))))
	if d.Status.Phase != payoutv1.PhaseFailed || d.Status.Deposit == nil || d.Status.Deposit.ConfirmedAt == nil || d.Status.Payout != nil {
		t.Fatalf("recorded, not paid: %+v", d.Status)
	}
	if owed := OwedOf(stored(tr, d), nil, false); len(owed) != 1 || owed[0].Name != id {
		t.Errorf("owed: %+v", owed)
	}
}

// TestProviderStatesOnlyMoveForward: a stale provider answer never takes a payout back.
func TestProviderStatesOnlyMoveForward(t *testing.T) {
	tr := v1(func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutAccepted, ProviderID: "po_1", RequestedAt: metav1.NewTime(epoch)}
	})
	d := Decide(input(tr, at(time.Hour), func(in *Input) {
		in.Provider = &ProviderPayout{Found: true, State: payoutv1.PayoutRequested}
	}))
	if d.Status.Payout.State != payoutv1.PayoutAccepted {
		t.Errorf("went back to %s", d.Status.Payout.State)
	}
	lost := Decide(input(tr, at(time.Hour), func(in *Input) { in.Provider = &ProviderPayout{Found: false} }))
	if lost.Status.Failure != nil || !hasWarning(lost, ReasonProviderLost) {
		t.Errorf("a payout the provider lost is not failed (the money may be out): %+v", lost.Status)
	}
	if lost.RequeueAfter == 0 {
		t.Error("the provider is asked again")
	}
}

// TestHistoryIsBounded keeps the opening line and the newest lines.
func TestHistoryIsBounded(t *testing.T) {
	tr := v2(hashed)
	right := sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)
	for i := range 30 {
		obs := tx(false, false, 0)
		if i%2 == 0 {
			obs = tx(true, false, 1, right)
		}
		tr = stored(tr, Decide(input(tr, at(time.Duration(i)*time.Minute), withTx(obs))))
	}
	h := tr.Status.History
	if len(h) != payoutv1.MaxHistory || h[0].Reason != ReasonCreated {
		t.Fatalf("history of %d lines, first %+v", len(h), h[0])
	}
	if last := h[len(h)-1]; last.At.Time != at(29*time.Minute) {
		t.Errorf("newest line kept: %+v", last)
	}
}

// TestDecideIsPure: the input is not changed, and the same input gives the same decision.
func TestDecideIsPure(t *testing.T) {
	tr := v1()
	before := tr.DeepCopy()
	in := input(tr, at(time.Minute), withDeposits(good(at(time.Second))))
	a, b := Decide(in), Decide(in)
	if !statusEqual(&a.Status, &b.Status) || len(a.Events) != len(b.Events) {
		t.Error("not deterministic")
	}
	if !statusEqual(&tr.Status, &before.Status) {
		t.Error("the input transfer changed")
	}
}

// TestNoFailureWithoutTheProvider: a transfer whose deposit was seen fails only once the provider,
// asked by reference, holds no payout of it; a payout it holds (a status restored from before it)
// is adopted, never made again and never failed; a transfer failed without asking (an older
// version) is asked, and owes nothing once a payout is found.
func TestNoFailureWithoutTheProvider(t *testing.T) {
	notAsked := func(in *Input) { in.ProviderBefore = nil }
	held := func(in *Input) {
		in.ProviderBefore = &ProviderPayout{Found: true, State: payoutv1.PayoutCompleted, ProviderID: "po_7", TargetAmount: "21.56"}
	}
	half := deposit("12500000", payoutv1.TokenUSDC, 100, 0, at(time.Minute))
	expired := at(25 * time.Hour)

	d := Decide(input(v1(), expired, withDeposits(half), notAsked))
	if d.Status.Failure != nil || !d.AskProvider {
		t.Fatalf("a transfer whose deposit was seen does not fail before the provider is asked: %+v ask=%v", d.Status.Failure, d.AskProvider)
	}
	if d := Decide(input(v1(), expired, notAsked)); d.Status.Failure == nil || d.AskProvider {
		t.Errorf("nothing arrived: it fails without asking the provider: %+v", d.Status.Failure)
	}
	d = Decide(input(v1(), expired, withDeposits(half)))
	if d.Status.Failure == nil || !d.Status.Failure.ProviderChecked {
		t.Fatalf("with the provider's answer it fails, and says it asked: %+v", d.Status.Failure)
	}

	d = Decide(input(v1(), expired, withDeposits(half), held))
	if d.Status.Failure != nil || d.Status.Payout == nil || d.Status.Payout.ProviderID != "po_7" || d.Status.Phase != payoutv1.PhaseCompleted || !hasWarning(d, ReasonPayoutAdopted) {
		t.Fatalf("the provider's payout is adopted, the transfer never fails: %+v", d.Status)
	}

	// a transfer failed by an older version without asking
	old := v1(func(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }, testgen.Failed(payoutv1.FailureRecipientDeleted, "gone"))
	if d := Decide(input(old, at(time.Hour), notAsked)); !d.AskProvider {
		t.Error("an unchecked failure with a deposit asks the provider")
	}
	checked := Decide(input(old, at(time.Hour)))
	if !checked.Status.Failure.ProviderChecked || len(OwedOf(stored(old, checked), nil, false)) != 1 {
		t.Errorf("not found: the failure is checked and the deposit owed: %+v", checked.Status.Failure)
	}
	paid := Decide(input(old, at(time.Hour), held))
	if paid.Status.Payout == nil || len(OwedOf(stored(old, paid), nil, false)) != 0 {
		t.Errorf("found: the payout is recorded and the deposit owed to nobody: %+v", paid.Status.Payout)
	}
}

// TestV2DepositBinding: before a v2 payout intent the deposit log is bound to the transfer (a
// claim the controller makes); a log another transfer holds pays that one, and this one fails and
// releases its hash.
func TestV2DepositBinding(t *testing.T) {
	right := tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000))
	unbound := func(in *Input) { in.DepositHolder = "" }
	d := Decide(input(v2(hashed), at(time.Hour), withTx(right), unbound))
	if d.BindDeposit == nil || d.Status.Payout != nil || d.Status.Failure != nil {
		t.Fatalf("the log is bound before the intent: bind %+v, payout %+v", d.BindDeposit, d.Status.Payout)
	}
	if want := (payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0x" + strings.Repeat("ab", 32), LogIndex: 4}); *d.BindDeposit != want {
		t.Errorf("bind %+v, want %+v", *d.BindDeposit, want)
	}
	if d := Decide(input(v2(hashed), at(time.Hour), withTx(right))); d.Status.Payout == nil || d.BindDeposit != nil {
		t.Errorf("bound to this transfer: the intent is recorded: %+v", d.Status)
	}
	other := func(in *Input) { in.DepositHolder = "payout-other/0123456789abcdef0123ffff" }
	d = Decide(input(v2(hashed), at(time.Hour), withTx(right), other))
	if d.Status.Payout != nil || d.Status.Failure == nil || d.Status.Failure.Reason != payoutv1.FailureDepositMismatch ||
		!strings.Contains(d.Status.Failure.Message, "already pays transfer 0123456789abcdef0123ffff") || !hasAction(d, ActReleaseHash, "") {
		t.Fatalf("a log another transfer holds pays that one: %+v %+v", d.Status.Failure, d.Actions)
	}
	if got := SourceOfFunds(stored(v2(hashed), Decide(input(v2(hashed), at(time.Hour), withTx(right))))); got != "crypto deposit base 0x"+strings.Repeat("ab", 32)+":4" {
		t.Errorf("source of funds %q", got)
	}
	refs, ok := ParseSourceOfFunds("crypto deposit base 0xAA:1 0xbb:2")
	if !ok || len(refs) != 2 || refs[0].TxHash != "0xaa" || refs[1].LogIndex != 2 {
		t.Errorf("parsed %+v %v", refs, ok)
	}
}

// TestReadyFromFacts: Ready is True once the payout completed (a return after does not take it
// back) or the failed transfer's deposit was refunded, and says why the transfer waits.
func TestReadyFromFacts(t *testing.T) {
	payout := func(state payoutv1.PayoutState) *payoutv1.PayoutFacts {
		return &payoutv1.PayoutFacts{Reference: id, State: state}
	}
	failure := &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired}
	refund := &payoutv1.RefundFacts{TxHash: "0xrefund"}
	history := []payoutv1.StatusChange{{Message: "created"}, {Message: "the newest line"}}
	for _, c := range []struct {
		name    string
		st      payoutv1.TransferStatus
		waiting string
		ready   bool
		message string
	}{
		{name: "nothing yet", st: payoutv1.TransferStatus{}, ready: false},
		{name: "accepted", st: payoutv1.TransferStatus{Payout: payout(payoutv1.PayoutAccepted), History: history}, message: "the newest line"},
		{name: "completed", st: payoutv1.TransferStatus{Payout: payout(payoutv1.PayoutCompleted), History: history}, ready: true, message: "the newest line"},
		{name: "completed, returned and refunded", st: payoutv1.TransferStatus{Payout: payout(payoutv1.PayoutCompleted), Refund: refund}, ready: true},
		{name: "rejected", st: payoutv1.TransferStatus{Payout: payout(payoutv1.PayoutRejected), Failure: failure}},
		{name: "failed", st: payoutv1.TransferStatus{Failure: failure}},
		{name: "failed and refunded", st: payoutv1.TransferStatus{Failure: failure, Refund: refund}, ready: true},
		{name: "waiting on the service", st: payoutv1.TransferStatus{Payout: payout(payoutv1.PayoutRequested), History: history}, waiting: "paused", message: "paused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.st.Phase = Phase(&payoutv1.Transfer{Status: c.st})
			got := readyCondition(&c.st, c.waiting)
			if got.Type != payoutv1.ReadyCondition || (got.Status == metav1.ConditionTrue) != c.ready || got.Reason != string(c.st.Phase) || got.Message != c.message {
				t.Errorf("Ready %+v, want ready %v, reason %s, message %q", got, c.ready, c.st.Phase, c.message)
			}
		})
	}
}
