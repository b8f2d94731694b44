// Package emailaddr is the one check of an e-mail address the service sends mail to: an e-mail
// recipient's details.email (spec 2.1.1), a transfer's customer_email (spec 4.10, 4.11) and an
// account's e-mail, which is the v2 default of customer_email.
package emailaddr

import (
	"errors"
	"net/mail"
	"strings"

	"github.com/stablepay/payout-operator/internal/text"
)

// MaxLength is the longest address SMTP carries (RFC 5321: a 256-octet path less its brackets).
const MaxLength = 254

// Why Check refuses an address. The texts complete "<field>: ".
var (
	ErrTooLong  = errors.New("must be at most 254 characters (RFC 5321)")
	ErrNotPlain = errors.New("must be a plain e-mail address such as name@example.com")
	ErrNoDot    = errors.New("must have a domain with a dot, such as example.com")
)

// Check returns nil when s is one plain address: at most 254 characters, that net/mail parses
// back to itself with no display name or comment ("Ann <a@b.c>", "a@b.c, d@e.f" and quoted
// local parts that do not survive the round trip are refused), and whose domain has a dot, so
// that a@b or x@localhost, which no public mail server delivers to, are refused.
func Check(s string) error {
	if len(s) > MaxLength {
		return ErrTooLong
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return ErrNotPlain
	}
	// net/mail takes any non-ASCII rune as a letter (RFC 6532), C1 controls and bidi
	// overrides included; the address is shown in mails, events and kubectl payout describe.
	if _, bad := text.Unsafe(s); bad {
		return ErrNotPlain
	}
	if at := strings.LastIndexByte(s, '@'); !strings.Contains(s[at+1:], ".") {
		return ErrNoDot
	}
	return nil
}
