package notify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
	"github.com/stablepay/payout-operator/internal/notify"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestTransferNotifier mails a Transfer resource's outcomes through the real sink, as the transfer
// controller does, and classifies a refusal and an unmakeable message as permanent.
func TestTransferNotifier(t *testing.T) {
	sink := startSink(t, smtpsink.Options{RefuseRecipients: []string{"refused@example.org"}})
	m := mailerFor(t, sink.Addr())
	n := notify.TransferNotifier{Mailer: m, Domain: m.MessageDomain()}
	tr := testgen.Transfer("payout-acme", "0123456789abcdef01234567", testgen.Failed(payoutv1.FailurePayoutRejected, "the bank rejected the payout: account closed"))

	id, err := n.Notify(context.Background(), payoutv1.NotificationFailed, tr)
	if err != nil {
		t.Fatal(err)
	}
	msgs := messages(t, sink)
	if len(msgs) != 1 || msgs[0].MessageID() != id || msgs[0].To()[0] != "payer@example.com" {
		t.Fatalf("one message to payer@example.com with Message-ID %s, got %+v", id, msgs)
	}
	if id != "<0123456789abcdef01234567.payout-failed@payouts.example.com>" {
		t.Errorf("Message-ID %s", id)
	}

	tr.Spec.CustomerEmail = "refused@example.org"
	if _, err := n.Notify(context.Background(), payoutv1.NotificationPayoutSent, tr); err == nil || !n.Permanent(err) {
		t.Errorf("a refused recipient is permanent: %v", err)
	}
	tr.Spec.CustomerEmail = "not an address"
	if _, err := n.Notify(context.Background(), payoutv1.NotificationPayoutSent, tr); err == nil || !n.Permanent(err) {
		t.Errorf("an unmakeable message is permanent: %v", err)
	}
}

// TestTransferNotifierLimits sends through the real sink what the limits allow, per account
// and per address, refuses the rest for good, and sends again once the hour has refilled them
// (issue 25 item 11).
func TestTransferNotifierLimits(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	m := mailerFor(t, sink.Addr())
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	n := notify.TransferNotifier{Mailer: m, Domain: m.MessageDomain(), Limits: notify.NewLimits(4, 2, func() time.Time { return now })}
	seq := 0
	send := func(account, to string) error {
		t.Helper()
		seq++
		tr := testgen.Transfer("payout-"+account, fmt.Sprintf("%024x", seq), testgen.Failed(payoutv1.FailurePayoutRejected, "account closed"))
		tr.Spec.Account, tr.Spec.CustomerEmail = account, to
		_, err := n.Notify(context.Background(), payoutv1.NotificationFailed, tr)
		return err
	}
	to := func(addr string) int {
		t.Helper()
		c := 0
		for _, msg := range messages(t, sink) {
			if msg.To()[0] == addr {
				c++
			}
		}
		return c
	}
	refused := func(err error, what string) {
		t.Helper()
		if err == nil || !n.Permanent(err) {
			t.Fatalf("%s: want refused for good, got %v", what, err)
		}
	}

	// per address: two an hour to victim@example.org, whichever account asks
	for i, acct := range []string{"acme", "acme", "globex"} {
		err := send(acct, "victim@example.org")
		if i < 2 && err != nil {
			t.Fatalf("mail %d to the address: %v", i+1, err)
		}
		if i == 2 {
			refused(err, "a third mail to the address in the hour")
		}
	}
	refused(send("initech", "Victim@Example.org "), "the same address spelled otherwise")
	if got := to("victim@example.org"); got != 2 {
		t.Fatalf("victim@example.org got %d mails, want 2", got)
	}

	// per account: acme has spent two of its four; two more addresses, then none
	for _, addr := range []string{"a@example.org", "b@example.org"} {
		if err := send("acme", addr); err != nil {
			t.Fatalf("acme's mail to %s: %v", addr, err)
		}
	}
	refused(send("acme", "c@example.org"), "acme's fifth mail in the hour")
	if got := to("c@example.org"); got != 0 {
		t.Fatalf("c@example.org got %d mails over acme's limit", got)
	}
	if err := send("globex", "c@example.org"); err != nil {
		t.Fatalf("another account is not held by acme's limit: %v", err)
	}

	// the budgets refill at their rate: half an hour is one more mail to the address, two
	// more for acme
	now = now.Add(30 * time.Minute)
	if err := send("acme", "victim@example.org"); err != nil {
		t.Fatalf("after half an hour: %v", err)
	}
	refused(send("globex", "victim@example.org"), "the address's one mail of the half hour, spent")
	if err := send("acme", "d@example.org"); err != nil {
		t.Fatalf("acme's second mail of the half hour: %v", err)
	}
	refused(send("acme", "e@example.org"), "acme's two mails of the half hour, spent")
	if got := len(messages(t, sink)); got != 7 {
		t.Errorf("the sink holds %d messages, want 7", got)
	}
}
