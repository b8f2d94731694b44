package transfer

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/testgen"
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

func input(t *payoutv1.Transfer, now time.Time, mods ...func(*Input)) Input {
	in := Input{Transfer: t, Now: now, ProviderName: "simbank", V2Address: v2Addr,
		Recipient: RecipientState{Known: true, ID: t.Spec.RecipientID}}
	for _, m := range mods {
		m(&in)
	}
	return in
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
	// nothing is written at the opening: the schema defaults the phase of an unwritten status
	if !Unwritten(tr, &d.Status) || len(d.Status.History) != 0 || len(d.Events) != 0 || Phase(withStatus(tr, &d.Status)) != payoutv1.DefaultPhase {
		t.Fatalf("a fresh v1 transfer is left unwritten: %+v, events %+v", d.Status, d.Events)
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
	RecordNotification(&tr.Status, payoutv1.NotificationPayoutSent, "payer@example.com", "<m@x>", "", at(3*time.Minute))
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
	cancelled := func(t *payoutv1.Transfer) {
		t.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, Message: "recipient 123456789 was deleted", RequestedAt: metav1.NewTime(epoch)}
	}
	intent := func(state payoutv1.PayoutState) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) {
			t.Status.Deposit = testgen.Deposit()
			t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: state, RequestedAt: metav1.NewTime(at(time.Minute))}
		}
	}
	cases := []struct {
		name       string
		in         Input
		reason     payoutv1.FailureReason // "" : not failed
		refundable bool                   // a confirmed deposit is recorded
		intent     bool                   // a payout intent exists afterwards
	}{
		{"cancelled (DELETE recipient) before the deposit", input(v1(cancelled), at(time.Minute)), payoutv1.FailureRecipientDeleted, false, false},
		{"cancelled with the deposit arriving in the same pass", input(v1(cancelled), at(time.Minute), withDeposits(good(at(time.Second)))), payoutv1.FailureRecipientDeleted, true, false},
		{"cancelled after the payout intent: not stopped", input(v1(cancelled, intent(payoutv1.PayoutRequested)), at(time.Hour)), "", true, true},
		{"recipient deleted without a cancellation (created during the deletion)", input(v1(), at(time.Minute), recipientDeleted, withDeposits(good(at(time.Second)))), payoutv1.FailureRecipientDeleted, true, false},
		{"recipient deleted after the payout intent: not stopped", input(v1(intent(payoutv1.PayoutAccepted)), at(time.Hour), recipientDeleted), "", true, true},
		{"recipient deleted through the API a moment ago: neither failed nor paid yet", input(v1(), at(time.Minute), recipientJustDeleted, withDeposits(good(at(time.Second)))), "", true, false},
		{"recipient deleted automatically after another transfer: not stopped", input(v1(), at(time.Minute), recipientTidied, withDeposits(good(at(time.Second)))), "", true, true},
		{"expired without a deposit", input(v1(), at(24*time.Hour)), payoutv1.FailureExpired, false, false},
		{"not yet expired", input(v1(), at(24*time.Hour-time.Second)), "", false, false},
		{"deposit made before expiry, seen after it", input(v1(), at(25*time.Hour), withDeposits(good(at(24*time.Hour-time.Minute)))), "", true, true},
		{"deposit made after expiry", input(v1(), at(25*time.Hour), withDeposits(good(at(24*time.Hour+time.Minute)))), payoutv1.FailureExpired, true, false},
		{"short deposit", input(v1(), at(time.Minute), withDeposits(deposit("24990000", payoutv1.TokenUSDC, 100, 0, at(time.Second)))), payoutv1.FailureDepositShort, true, false},
		{"wrong token", input(v1(), at(time.Minute), withDeposits(deposit("25000000", payoutv1.TokenUSDT, 100, 0, at(time.Second)))), payoutv1.FailureDepositWrongToken, true, false},
		{"garbage amount reads as nothing", input(v1(), at(time.Minute), withDeposits(deposit("25e6", payoutv1.TokenUSDC, 100, 0, at(time.Second)))), payoutv1.FailureDepositShort, true, false},
		{"bank rejects the payout", input(v1(intent(payoutv1.PayoutAccepted)), at(time.Hour), withProvider(payoutv1.PayoutRejected, "name mismatch")), payoutv1.FailurePayoutRejected, true, true},
		{"bank rejects a requested payout", input(v1(intent(payoutv1.PayoutRequested)), at(time.Hour), withProvider(payoutv1.PayoutRejected, "")), payoutv1.FailurePayoutRejected, true, true},
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
				if !hasAction(d, ActNotify, payoutv1.NotificationFailed) {
					t.Errorf("a failure is mailed: %+v", d.Actions)
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
			deleting := hasAction(d, ActDeleteRecipient, "")
			if c.in.Recipient.Deleted && deleting {
				t.Error("a deleted recipient is not deleted again")
			}
		})
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

// TestStrayDeposits: every deposit but the credited one is kept apart for a refund.
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
	if over.Status.Payout == nil || len(over.Status.StrayDeposits) != 1 || over.Status.StrayDeposits[0].Amount != "10000" {
		t.Errorf("an overpayment pays the transfer and keeps the excess apart: %+v %+v", over.Status.Payout, over.Status.StrayDeposits)
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
	for i := range int64(20) {
		many = append(many, deposit("1", payoutv1.TokenUSDC, 200+i, 0, at(time.Hour)))
	}
	bounded := Decide(input(v1(), at(2*time.Hour), withDeposits(many...)))
	if len(bounded.Status.StrayDeposits) != maxStrays {
		t.Errorf("strays are bounded: %d", len(bounded.Status.StrayDeposits))
	}
}

// TestLateDepositAfterFailure: a deposit to a failed transfer is recorded, so it can be refunded.
func TestLateDepositAfterFailure(t *testing.T) {
	expired, _ := walk(v1(), func(t *payoutv1.Transfer) Input { return input(t, at(25*time.Hour)) })
	if expired.Status.Failure == nil || expired.Status.Deposit != nil {
		t.Fatalf("expired: %+v", expired.Status)
	}
	RecordNotification(&expired.Status, payoutv1.NotificationFailed, "payer@example.com", "<m@x>", "", at(25*time.Hour))
	d := Decide(input(expired, at(26*time.Hour), withDeposits(good(at(25*time.Hour+time.Minute))), recipientDeleted))
	if d.Status.Failure.Reason != payoutv1.FailureExpired || d.Status.Deposit == nil || d.Status.Payout != nil {
		t.Fatalf("the late deposit is recorded and nothing paid: %+v", d.Status)
	}
	if !hasWarning(d, ReasonDepositAfterEnd) {
		t.Errorf("warning: %+v", d.Events)
	}
	if len(d.Actions) != 0 {
		t.Errorf("the failure was mailed once already and the recipient is gone: %+v", d.Actions)
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
	if d.Status.Phase != payoutv1.PhasePendingMatch || d.RequeueAfter != TxPollInterval {
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

// TestV2Verification: the hash must send the transfer's amount of its token to the platform
// address, from its wallet when it has one; judged at depth only.
func TestV2Verification(t *testing.T) {
	right := sent(payoutv1.TokenUSDC, wallet, v2Addr, 25000000)
	cases := []struct {
		name     string
		tr       *payoutv1.Transfer
		obs      *chain.TxObservation
		mismatch bool
		deposit  bool // a deposit to the platform is recorded (refundable)
	}{
		{"right", v2(hashed), tx(true, false, 3, right), false, true},
		{"right, checksummed addresses", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, "0x8ba1f109551bD432803012645Ac136ddd64DBA72", strings.ToUpper(v2Addr[:2])+v2Addr[2:], 25000000)), false, true},
		{"to another address", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, stranger, 25000000)), true, false},
		{"another amount", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, v2Addr, 24000000)), true, true},
		{"another token", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDT, wallet, v2Addr, 25000000)), true, true},
		{"from another wallet", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, stranger, v2Addr, 25000000)), true, true},
		{"from any wallet when none is set", v2(hashed, func(t *payoutv1.Transfer) { t.Spec.WalletAddress = "" }), tx(true, false, 3, sent(payoutv1.TokenUSDC, stranger, v2Addr, 25000000)), false, true},
		{"reverted", v2(hashed), tx(true, true, 3, right), true, false},
		{"the right transfer among others", v2(hashed), tx(true, false, 3, sent(payoutv1.TokenUSDC, wallet, stranger, 1), right), false, true},
		{"another amount, not at depth yet: not judged", v2(hashed), tx(true, false, 2, sent(payoutv1.TokenUSDC, wallet, v2Addr, 24000000)), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(input(c.tr, at(time.Hour), withTx(c.obs)))
			failed := d.Status.Failure != nil
			if failed != c.mismatch {
				t.Fatalf("failed = %v (%+v), want %v", failed, d.Status.Failure, c.mismatch)
			}
			if failed && d.Status.Failure.Reason != payoutv1.FailureDepositMismatch {
				t.Errorf("reason %s", d.Status.Failure.Reason)
			}
			if got := d.Status.Deposit != nil && d.Status.Deposit.ConfirmedAt != nil; got != c.deposit {
				t.Errorf("confirmed deposit recorded = %v, want %v", got, c.deposit)
			}
			if !c.mismatch && c.deposit && d.Status.Payout == nil {
				t.Error("a right hash at depth records the payout intent")
			}
			if c.mismatch && d.Status.Payout != nil {
				t.Error("no payout for a mismatched hash")
			}
		})
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
