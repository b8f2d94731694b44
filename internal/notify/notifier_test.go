package notify_test

import (
	"context"
	"testing"

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
