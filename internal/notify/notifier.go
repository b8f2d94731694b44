package notify

import (
	"context"
	"errors"
	"fmt"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TransferNotifier mails the outcome of a Transfer resource: the transfer controller's view of
// this package. It renders the message of the outcome and sends it with Mailer.
type TransferNotifier struct {
	Mailer Mailer
	// Domain is the right-hand side of the Message-IDs (Config.MessageDomain).
	Domain string
	// Limits caps the mails of an account and to an address; nil sends every mail.
	Limits *Limits
}

// Notify mails outcome kind of t to its customer address and returns the Message-ID.
func (n TransferNotifier) Notify(ctx context.Context, kind payoutv1.NotificationKind, t *payoutv1.Transfer) (string, error) {
	view, err := FromTransfer(t)
	if err != nil {
		return "", unsendable{err}
	}
	var note Notification
	switch kind {
	case payoutv1.NotificationPayoutSent:
		note = PayoutSent(view, t.Spec.CustomerEmail)
	case payoutv1.NotificationFailed:
		note = Failed(view, t.Spec.CustomerEmail)
	default:
		return "", fmt.Errorf("notify: no message for outcome %q", kind)
	}
	msg, err := Render(note, n.Domain)
	if err != nil {
		return "", unsendable{err}
	}
	if n.Limits != nil {
		if err := n.Limits.take(t.Spec.Account, note.To); err != nil {
			return msg.MessageID, err
		}
	}
	return msg.MessageID, n.Mailer.Send(ctx, msg)
}

// Permanent reports whether a Notify error will never be overcome by a retry: the mail server
// refused the message, the message cannot be made (a malformed address), or it is over the
// Limits.
func (n TransferNotifier) Permanent(err error) bool {
	var u unsendable
	var o overLimit
	return IsPermanent(err) || errors.As(err, &u) || errors.As(err, &o)
}

// unsendable is a message that cannot be made from the transfer: no retry helps.
type unsendable struct{ err error }

func (u unsendable) Error() string { return "the message cannot be made: " + u.err.Error() }
func (u unsendable) Unwrap() error { return u.err }
