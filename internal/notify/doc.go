// Package notify e-mails the customer of a transfer when its payout is sent and when it fails
// (spec §6).
//
// It has three parts:
//
//   - the message model and its pure rendering: a Notification (a Kind and a Transfer) becomes a
//     Message with a plain-text body, an HTML alternative, a Subject a customer understands and a
//     Message-ID derived from the transfer id and the outcome, so that a resend after a crash is
//     recognisably the same message (Render, MessageID);
//   - a Mailer that delivers a Message over SMTP with go-mail (NewSMTP, or New, which returns a
//     mailer that reports ErrNotConfigured when no server is configured);
//   - the classification of delivery errors: IsTransient (cannot connect, timeout, a 4xx reply,
//     a session the server would not set up: retry later) and IsPermanent (the server refused this
//     message with a 5xx, or the message itself is unusable: record it, do not retry).
//
// Delivery is at least once: a caller that retries after an error that happened after the
// server had in fact accepted the message sends it again with the same Message-ID. Mail never
// holds up a transfer: the caller records the notification's outcome next to the transfer and
// retries transient failures on its own schedule.
//
// Mail is capped per account and per address (Limits: --smtp-max-per-account, 600 an hour,
// and --smtp-max-per-address, 12 an hour, case and spaces of the address aside): customer_email
// is the caller's choice, and a mail over a cap is refused for good, as one the server refuses.
// A transfer its own account cancels within a minute of its creation, before any deposit is
// seen, mails nothing at all (transfer.QuietFailure).
//
// Account numbers and IBANs never appear in clear in a message: Render shows at most their last
// four characters (see MaskAccount).
package notify
