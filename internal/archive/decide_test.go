package archive

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

func TestDecideTransfer(t *testing.T) {
	const wallet = "0x8ba1f109551bd432803012645ac136ddd64dba72"
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	const retention = 30 * 24 * time.Hour
	old := metav1.NewTime(now.Add(-retention - time.Hour))
	recent := metav1.NewTime(now.Add(-time.Hour))
	confirmed := metav1.NewTime(now.Add(-40 * 24 * time.Hour))
	deposit := func() *payoutv1.DepositFacts {
		return &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, From: wallet, TxHash: "0xaa", LogIndex: 3, Amount: "25000000", ConfirmedAt: &confirmed}
	}
	completed := func(mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
		t := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Name: "65f1c0de9a8b7c6d5e4f3a21", CreationTimestamp: metav1.NewTime(now.Add(-50 * 24 * time.Hour))}}
		t.Spec.Method, t.Spec.Amount, t.Spec.WalletAddress = payoutv1.TransferV1, "25.00", wallet
		t.Spec.SourceNetwork, t.Spec.SourceToken = payoutv1.NetworkBase, payoutv1.TokenUSDC
		t.Spec.CustomerEmail = "a@example.com"
		t.Status.Deposit = deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{State: payoutv1.PayoutCompleted}
		t.Status.Notifications = []payoutv1.NotificationRecord{{Kind: payoutv1.NotificationPayoutSent, State: payoutv1.NotificationSent}}
		t.Status.UpdatedAt = &old
		for _, m := range mods {
			m(t)
		}
		return t
	}
	failed := func(t *payoutv1.Transfer) {
		t.Status.Payout = nil
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, Message: "no deposit", ProviderChecked: true}
		t.Status.Notifications = []payoutv1.NotificationRecord{{Kind: payoutv1.NotificationFailed}}
	}
	noDeposit := func(t *payoutv1.Transfer) { t.Status.Deposit = nil }
	refunded := func(t *payoutv1.Transfer) {
		failed(t)
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xbb"}
	}
	depositObj := func(hash string, log int64) payoutv1.Deposit {
		return payoutv1.Deposit{Spec: payoutv1.DepositSpec{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, From: wallet,
			TxHash: hash, LogIndex: log, Amount: "25000000"}}
	}
	stray := depositObj("0xcc", 0)
	stray.Spec.From, stray.Spec.Amount = "0x1111111111111111111111111111111111111111", "1"
	listed := func(t *payoutv1.Transfer) {
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{{TxHash: "0xcc", Amount: "1", From: stray.Spec.From}}
	}
	refund := func(name string, state payoutv1.RefundState, dep *payoutv1.DepositRef) payoutv1.Refund {
		return payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: payoutv1.RefundSpec{Transfer: "65f1c0de9a8b7c6d5e4f3a21", Deposit: dep},
			Status: payoutv1.RefundStatus{State: state}}
	}
	strayRef := &payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: "0xcc"}
	strayRefund := func(state payoutv1.RefundState) []payoutv1.Refund {
		return []payoutv1.Refund{refund(payoutv1.StrayRefundName("65f1c0de9a8b7c6d5e4f3a21", *strayRef), state, strayRef)}
	}
	// named gives a Deposit its name (a Sweep is named as its Deposit)
	named := func(d payoutv1.Deposit) payoutv1.Deposit {
		d.Name = payoutv1.DepositName(d.Spec.Network, d.Spec.TxHash, d.Spec.LogIndex)
		d.Spec.Transfer = "65f1c0de9a8b7c6d5e4f3a21"
		return d
	}
	baseSwept := map[payoutv1.Network]bool{payoutv1.NetworkBase: true}
	windowEnd := metav1.NewTime(now.Add(10 * 24 * time.Hour))
	windowOpen := func(t *payoutv1.Transfer) { t.Status.Payout.ReturnWindowEndsAt = &windowEnd }
	returned := func(t *payoutv1.Transfer) {
		t.Status.Payout.Returned = &payoutv1.PayoutReturn{At: recent, Message: "account closed"}
	}
	released := func(t *payoutv1.Transfer) {
		at := metav1.NewTime(now.Add(-45 * 24 * time.Hour))
		t.Spec.Method, t.Spec.TxHash = payoutv1.TransferV2, "0x"+strings.Repeat("ab", 32)
		t.Status.TxMatch = &payoutv1.TxMatch{RecordedAt: at, ReleasedAt: &at}
	}
	cases := []struct {
		name string
		in   TransferInput
		want Reason
	}{
		{"completed long ago", TransferInput{Transfer: completed()}, Due},
		{"completed within the retention", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) { t.Status.UpdatedAt = &recent })}, Retained},
		{"in progress", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) { t.Status.Payout.State = payoutv1.PayoutAccepted })}, NotEnded},
		{"waiting for a deposit", TransferInput{Transfer: completed(noDeposit, func(t *payoutv1.Transfer) { t.Status.Payout = nil })}, NotEnded},
		{"failed without a deposit", TransferInput{Transfer: completed(failed, noDeposit)}, Due},
		{"failed with a deposit, not refunded", TransferInput{Transfer: completed(failed)}, MoneyOwed},
		{"failed with a v2 deposit on its way to depth", TransferInput{Transfer: completed(failed, func(t *payoutv1.Transfer) { t.Status.Deposit.ConfirmedAt = nil })}, MoneyOwed},
		{"refunded", TransferInput{Transfer: completed(refunded)}, Due},
		{"failed with a deposit, the provider not asked", TransferInput{Transfer: completed(refunded, func(t *payoutv1.Transfer) { t.Status.Failure.ProviderChecked = false })}, ProviderUnchecked},
		{"a stray deposit not refunded", TransferInput{Transfer: completed(listed), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), stray}}, MoneyOwed},
		{"a stray deposit whose refund is on its way", TransferInput{Transfer: completed(listed), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), stray},
			Refunds: strayRefund(payoutv1.RefundBroadcast)}, RefundInFlight},
		{"a stray deposit whose refund was refused", TransferInput{Transfer: completed(listed), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), stray},
			Refunds: strayRefund(payoutv1.RefundRefused)}, MoneyOwed},
		{"a stray deposit refunded", TransferInput{Transfer: completed(listed), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), stray},
			Refunds: strayRefund(payoutv1.RefundConfirmed)}, Due},
		{"a failed v2 transfer whose hash it released owes nothing", TransferInput{Transfer: completed(failed, released)}, Due},
		{"... unless it holds the hash again for a refund", TransferInput{Transfer: completed(failed, released), HashHeld: true}, MoneyOwed},
		{"every deposit object recorded", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{depositObj("0xAA", 3)}}, Due},
		{"a deposit object not in the status yet: owed", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), depositObj("0xdd", 0)}}, MoneyOwed},
		{"a stray refunded, not in the status yet", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{depositObj("0xaa", 3), stray},
			Refunds: strayRefund(payoutv1.RefundConfirmed)}, DepositUnrecorded},
		{"a refund on its way", TransferInput{Transfer: completed(failed), Refunds: []payoutv1.Refund{refund("65f1c0de9a8b7c6d5e4f3a21", payoutv1.RefundBroadcast, nil)}}, RefundInFlight},
		{"a refund confirmed, not yet in the transfer", TransferInput{Transfer: completed(failed), Refunds: []payoutv1.Refund{refund("65f1c0de9a8b7c6d5e4f3a21", payoutv1.RefundConfirmed, nil)}}, RefundInFlight},
		{"a refused refund of nothing owed", TransferInput{Transfer: completed(failed, noDeposit), Refunds: []payoutv1.Refund{refund("65f1c0de9a8b7c6d5e4f3a21", payoutv1.RefundRefused, nil)}}, Due},
		{"mail not sent", TransferInput{Mailing: true, Transfer: completed(func(t *payoutv1.Transfer) { t.Status.Notifications = nil })}, MailPending},
		{"mail stored, not sent yet", TransferInput{Mailing: true, Transfer: completed(func(t *payoutv1.Transfer) {
			t.Status.Notifications[0].State = payoutv1.NotificationPending
		})}, MailPending},
		{"cancelled by its account at once, no deposit: no mail to wait for (issue 25 item 11)", TransferInput{Mailing: true, Transfer: completed(failed, noDeposit, func(t *payoutv1.Transfer) {
			t.Status.Failure.Reason, t.Status.Notifications = payoutv1.FailureRecipientDeleted, nil
			t.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, RequestedAt: metav1.NewTime(t.CreationTimestamp.Add(time.Second))}
		})}, Due},
		{"mail not sent, no mail configured", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) { t.Status.Notifications = nil })}, Due},
		{"recipient still active", TransferInput{Transfer: completed(), RecipientActive: true}, RecipientPending},
		{"recipient kept", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) { t.Spec.KeepRecipient = true }), RecipientActive: true}, Due},
		{"quote still valid", TransferInput{Transfer: completed(), QuoteExpiresAt: now.Add(time.Minute)}, QuoteUnexpired},
		{"quote expired", TransferInput{Transfer: completed(), QuoteExpiresAt: now.Add(-time.Minute)}, Due},
		{"being deleted", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) { t.DeletionTimestamp = &recent })}, Deleting},
		// issue 23 item 10: a completed payout the recipient's bank may still return
		{"completed, its return window open past the retention", TransferInput{Transfer: completed(windowOpen)}, Retained},
		{"completed, its return window closed", TransferInput{Transfer: completed(func(t *payoutv1.Transfer) {
			end := metav1.NewTime(now.Add(-time.Minute))
			t.Status.Payout.ReturnWindowEndsAt = &end
		})}, Due},
		{"returned by the recipient's bank, deposit not refunded", TransferInput{Transfer: completed(windowOpen, returned)}, MoneyOwed},
		// issue 27: the sweeper finds what to sweep from the Deposits the archive deletes
		{"completed, its deposit not swept yet", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3))}, Swept: baseSwept},
			SweepUnrecorded},
		{"completed, its deposit's Sweep stored", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3))}, Swept: baseSwept,
			Sweeps: map[string]bool{named(depositObj("0xaa", 3)).Name: true}}, Due},
		{"completed, no treasury on its network (no sweeper)", TransferInput{Transfer: completed(), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3))},
			Swept: map[payoutv1.Network]bool{payoutv1.NetworkEthereum: true}}, Due},
		{"refunded, its deposit not swept yet", TransferInput{Transfer: completed(refunded), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3))}, Swept: baseSwept},
			SweepUnrecorded},
		{"a stray refunded, its Sweep missing", TransferInput{Transfer: completed(listed, func(t *payoutv1.Transfer) {
			t.Status.StrayDeposits[0].Refund = &payoutv1.StrayRefundFacts{Name: "r", Network: payoutv1.NetworkBase, TxHash: "0xee"}
		}), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3)), named(stray)}, Refunds: strayRefund(payoutv1.RefundConfirmed), Swept: baseSwept,
			Sweeps: map[string]bool{named(depositObj("0xaa", 3)).Name: true}}, SweepUnrecorded},
		{"a stray owed, the credited deposit swept: owed first", TransferInput{Transfer: completed(listed), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3)), named(stray)},
			Swept: baseSwept, Sweeps: map[string]bool{named(depositObj("0xaa", 3)).Name: true}}, MoneyOwed},
		{"failed with a deposit not refunded: owed, not swept", TransferInput{Transfer: completed(failed), Deposits: []payoutv1.Deposit{named(depositObj("0xaa", 3))}, Swept: baseSwept},
			MoneyOwed},
		{"returned, its refund confirmed, not yet in the transfer", TransferInput{Transfer: completed(windowOpen, returned),
			Refunds: []payoutv1.Refund{refund("65f1c0de9a8b7c6d5e4f3a21", payoutv1.RefundConfirmed, nil)}}, RefundInFlight},
		{"returned and refunded", TransferInput{Transfer: completed(windowOpen, returned, func(t *payoutv1.Transfer) {
			t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xbb"}
		}), Refunds: []payoutv1.Refund{refund("65f1c0de9a8b7c6d5e4f3a21", payoutv1.RefundConfirmed, nil)}}, Due},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now, c.in.Retention = now, retention
			got := DecideTransfer(c.in)
			if got.Reason != c.want {
				t.Fatalf("got %s, want %s", got.Reason, c.want)
			}
			want := recent.Add(retention)
			if p := c.in.Transfer.Status.Payout; p != nil && p.ReturnWindowEndsAt != nil {
				want = p.ReturnWindowEndsAt.Time
			}
			if got.Reason == Retained && !got.At.Equal(want) {
				t.Errorf("due at %v, want %v", got.At, want)
			}
		})
	}
}

func TestDecideRecipient(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	const retention = time.Hour
	rc := func(deactivated bool, created time.Time, deletedAt string) *payoutv1.Recipient {
		r := &payoutv1.Recipient{ObjectMeta: metav1.ObjectMeta{Name: "1000000000001", CreationTimestamp: metav1.NewTime(created)}}
		r.Spec.Deactivated = deactivated
		if deletedAt != "" {
			r.Annotations = map[string]string{payoutv1.RecipientDeletedAtAnnotation: deletedAt}
		}
		return r
	}
	long := now.Add(-2 * retention)
	cases := []struct {
		name string
		in   RecipientInput
		want Reason
	}{
		{"active", RecipientInput{Recipient: rc(false, long, "")}, Active},
		{"deleted long ago", RecipientInput{Recipient: rc(true, long, long.Format(time.RFC3339Nano))}, Due},
		{"deleted a moment ago", RecipientInput{Recipient: rc(true, long, now.Add(-time.Minute).Format(time.RFC3339Nano))}, Retained},
		{"deactivated after a transfer", RecipientInput{Recipient: rc(true, long, "")}, Due},
		{"a transfer of its lineage is live", RecipientInput{Recipient: rc(true, long, ""), LineageLive: true}, LineageLive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now, c.in.Retention = now, retention
			if got := DecideRecipient(c.in); got.Reason != c.want {
				t.Fatalf("got %s, want %s", got.Reason, c.want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Enabled() {
		t.Fatal("enabled without a DSN")
	}
	dir := t.TempDir()
	file := dir + "/dsn"
	if err := writeFile(file, "  postgres://archiver@db:5432/archive\n"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(DSNEnv, "postgres://from-env@db/archive")
	c.DSNFile = file
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if c.DSN.Reveal() != "postgres://archiver@db:5432/archive" {
		t.Errorf("DSN from the file: %q", c.DSN.Reveal())
	}
	c = DefaultConfig()
	if err := c.Resolve(); err != nil || c.DSN.Reveal() != "postgres://from-env@db/archive" {
		t.Errorf("DSN from the environment: %q, %v", c.DSN.Reveal(), err)
	}
	// the optional Secret absent: no file, the environment's DSN or none
	c = DefaultConfig()
	c.DSNFile = dir + "/absent"
	if err := c.Resolve(); err != nil || c.DSN.Reveal() != "postgres://from-env@db/archive" {
		t.Errorf("DSN with the file absent: %q, %v", c.DSN.Reveal(), err)
	}
	t.Setenv(DSNEnv, "")
	c = DefaultConfig()
	c.DSNFile = dir + "/absent"
	if err := c.Resolve(); err != nil || c.Enabled() {
		t.Errorf("no file, no environment: enabled %v, %v", c.Enabled(), err)
	}
	if err := writeFile(file, "\n"); err != nil {
		t.Fatal(err)
	}
	c = DefaultConfig()
	c.DSNFile = file
	if err := c.Resolve(); err == nil {
		t.Error("an empty DSN file was accepted")
	}
	c = DefaultConfig()
	c.Batch, c.Rate = 0, 0
	if err := c.Resolve(); err == nil {
		t.Error("a zero batch and rate were accepted")
	}
}
