package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Kind is the outcome a notification tells the customer about. Its value is part of the
// Message-ID, so it must never change for an existing kind.
type Kind string

const (
	// KindPayoutSent: the fiat payout to the recipient has been sent.
	KindPayoutSent Kind = "payout-sent"
	// KindFailed: the transfer failed; its reason is in Transfer.Error.
	KindFailed Kind = "payout-failed"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool { return k == KindPayoutSent || k == KindFailed }

// Transfer is what a notification shows of a transfer (spec §2.5). Amounts are decimal; the
// recipient's account identifier is carried in clear and masked by Render.
type Transfer struct {
	// ID is the 24-character transfer id, which is also the payout reference.
	ID string
	// AmountUSD is the USD source amount.
	AmountUSD decimal.Decimal
	// TargetAmount is what the recipient receives in TargetCurrency: the payout's figure (the
	// provider's once it reports one), else what the transfer's amount pays at the quote. Zero
	// when unknown: it is then left out.
	TargetAmount   decimal.Decimal
	TargetCurrency string
	Recipient      Recipient
	// Status is the transfer's public status (completed, transfer_created, failed, ...).
	Status string
	// Error is the failure's reason text (the transfer's error field).
	Error string
	// CreatedAt is when the transfer was created; UpdatedAt when it reached Status.
	CreatedAt time.Time
	UpdatedAt time.Time
	// EstimatedDelivery is the quote's estimated delivery; zero when unknown.
	EstimatedDelivery time.Time
}

// Recipient is the payee of a transfer as a notification shows it.
type Recipient struct {
	// HolderName is the account holder's name, shown as is.
	HolderName string
	// Type is the account type of spec §2.1.1 (iban, sort_code, aba, philippines,
	// email_recipient, or another national type).
	Type string
	// Account is the account identifier in clear: the IBAN, the account number, or the e-mail
	// address of an email_recipient. Render never shows it in clear (see MaskAccount).
	Account string
}

// Notification is one e-mail to send: an outcome of a transfer, to a customer address.
type Notification struct {
	Kind     Kind
	To       string
	Transfer Transfer
	// At is when the outcome happened; it becomes the Date of the message, so that a resend
	// carries the same Date. Zero means Transfer.UpdatedAt.
	At time.Time
}

// PayoutSent is the notification that t's payout has been sent, addressed to to.
func PayoutSent(t Transfer, to string) Notification {
	return Notification{Kind: KindPayoutSent, To: to, Transfer: t}
}

// Failed is the notification that t has failed, addressed to to.
func Failed(t Transfer, to string) Notification {
	return Notification{Kind: KindFailed, To: to, Transfer: t}
}

// MessageID returns the Message-ID of the notification of kind about the transfer
// transferID: "<transferID.kind@domain>", angle brackets included. It depends on nothing else,
// so every attempt to send one notification carries the same id and a receiver (or a person)
// can tell a resend from a new message. Characters of transferID that may not stand in a
// Message-ID are written as "=XX" (transfer ids are lower-case hex, so this does not happen
// for them).
func MessageID(transferID string, kind Kind, domain string) string {
	return "<" + idAtom(transferID) + "." + string(kind) + "@" + domain + ">"
}

// idAtom escapes s into the RFC 5322 atext characters, leaving no dots so that the result can
// be joined to the kind with a dot.
func idAtom(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isIDChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	return b.String()
}

func isIDChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_+!#$%&'*/?^`{|}~", c) >= 0
}
