package notify

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/mail"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/text"
)

// Message is a rendered notification, ready for a Mailer. The sender (From) is the mailer's.
type Message struct {
	// To is the recipient's bare address (addr-spec).
	To      string
	Subject string
	// MessageID is the RFC 5322 msg-id, angle brackets included (see MessageID).
	MessageID string
	// Date is when the outcome happened; zero means the time of sending.
	Date time.Time
	// Text is the plain-text body; HTML, when set, is sent as its alternative.
	Text string
	HTML string
	// Kind and Reference (the transfer id) are also sent as headers, for support and filters.
	Kind      Kind
	Reference string
}

// Limits of what a notification shows of free text from elsewhere.
const (
	maxReasonRunes = 500
	maxNameRunes   = 140
	textWidth      = 72
	labelWidth     = 18
)

// Render turns a notification into its message. domain is the right-hand side of the
// Message-ID (Config.MessageDomain). Render is pure: the same notification always gives the
// same message, byte for byte.
func Render(n Notification, domain string) (Message, error) {
	if !n.Kind.Valid() {
		return Message{}, fmt.Errorf("notify: unknown notification kind %q", n.Kind)
	}
	t := n.Transfer
	if strings.TrimSpace(t.ID) == "" {
		return Message{}, errors.New("notify: the transfer has no id")
	}
	if err := checkDomain(domain); err != nil {
		return Message{}, err
	}
	to, err := parseRecipient(n.To)
	if err != nil {
		return Message{}, err
	}
	at := n.At
	if at.IsZero() {
		at = t.UpdatedAt
	}
	c := compose(n.Kind, t, at)
	text := c.text()
	html, err := c.html()
	if err != nil {
		return Message{}, err
	}
	return Message{
		To:        to,
		Subject:   c.Subject,
		MessageID: MessageID(t.ID, n.Kind, domain),
		Date:      at,
		Text:      text,
		HTML:      html,
		Kind:      n.Kind,
		Reference: t.ID,
	}, nil
}

// parseRecipient accepts one address, with or without a display name, and returns its
// addr-spec.
func parseRecipient(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", errors.New("notify: the notification has no recipient address")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("notify: recipient %q is not an e-mail address: %w", s, err)
	}
	return a.Address, nil
}

func checkDomain(d string) error {
	if d == "" {
		return errors.New("notify: no Message-ID domain")
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("<>@()[]\\,;:\"", c) >= 0 {
			return fmt.Errorf("notify: Message-ID domain %q has a character not allowed there", d)
		}
	}
	return nil
}

// content is what both bodies say; text and html only lay it out.
type content struct {
	Subject string
	Lead    string
	Rows    []row
	Closing []string
	Footer  string
}

type row struct{ Label, Value string }

func compose(kind Kind, t Transfer, at time.Time) content {
	var c content
	amount := money(t.AmountUSD, "USD")
	target := ""
	if t.TargetCurrency != "" && t.TargetAmount.IsPositive() {
		target = money(t.TargetAmount, t.TargetCurrency)
	}
	add := func(label, value string) {
		if value != "" {
			c.Rows = append(c.Rows, row{label, value})
		}
	}
	switch kind {
	case KindPayoutSent:
		shown := target
		if shown == "" {
			shown = amount
		}
		c.Subject = "Your payout of " + shown + " has been sent"
		c.Lead = "Your payout has been sent to the recipient's bank."
		add("Reference", t.ID)
		add("Amount", amount)
		add("Recipient gets", target)
		add("Recipient", cleanText(t.Recipient.HolderName, maxNameRunes))
		add("Account", MaskAccount(t.Recipient.Type, t.Recipient.Account))
		add("Status", statusLabel(t.Status))
		add("Sent", timestamp(at))
		add("Expected by", timestamp(t.EstimatedDelivery))
		c.Closing = []string{
			"Depending on the recipient's bank, the money can take some time to show on the recipient's account.",
			"Please quote the reference if you contact us about this payout.",
		}
	case KindFailed:
		c.Subject = "Your payout of " + amount + " could not be completed"
		c.Lead = "Your payout could not be completed."
		reason := cleanText(t.Error, maxReasonRunes)
		if reason == "" {
			reason = "No reason was given."
		}
		add("Reason", reason)
		add("Reference", t.ID)
		add("Amount", amount)
		add("Payout amount", target)
		add("Recipient", cleanText(t.Recipient.HolderName, maxNameRunes))
		add("Account", MaskAccount(t.Recipient.Type, t.Recipient.Account))
		add("Status", statusLabel(t.Status))
		add("Failed", timestamp(at))
		c.Closing = []string{
			"The recipient has not been paid.",
			"Please quote the reference if you contact us about this payout.",
		}
	}
	c.Footer = "You receive this e-mail because this address was given for notifications about this payout. This is an automated message."
	return c
}

func (c content) text() string {
	var b strings.Builder
	b.WriteString("Hello,\n\n")
	writeWrapped(&b, "", c.Lead)
	b.WriteString("\n")
	for _, r := range c.Rows {
		writeWrapped(&b, fmt.Sprintf("%-*s", labelWidth, r.Label+":"), r.Value)
	}
	for _, p := range c.Closing {
		b.WriteString("\n")
		writeWrapped(&b, "", p)
	}
	b.WriteString("\n-- \n")
	writeWrapped(&b, "", c.Footer)
	return b.String()
}

// writeWrapped writes value word-wrapped at textWidth, the first line after label and the
// others indented by its width.
func writeWrapped(b *strings.Builder, label, value string) {
	indent := strings.Repeat(" ", len(label))
	line := label
	width := len(label)
	empty := true
	for _, w := range strings.Fields(value) {
		n := len([]rune(w))
		if !empty && width+1+n > textWidth {
			b.WriteString(strings.TrimRight(line, " "))
			b.WriteString("\n")
			line, width, empty = indent, len(indent), true
		}
		if !empty {
			line += " "
			width++
		}
		line += w
		width += n
		empty = false
	}
	b.WriteString(strings.TrimRight(line, " "))
	b.WriteString("\n")
}

var htmlBody = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Subject}}</title>
</head>
<body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:1.4;color:#222222">
<p>Hello,</p>
<p>{{.Lead}}</p>
<table role="presentation" cellpadding="0" cellspacing="0" style="border-collapse:collapse">
{{- range .Rows}}
<tr><td style="padding:2px 16px 2px 0;color:#666666;vertical-align:top">{{.Label}}</td><td style="padding:2px 0">{{.Value}}</td></tr>
{{- end}}
</table>
{{- range .Closing}}
<p>{{.}}</p>
{{- end}}
<p style="color:#888888;font-size:12px">{{.Footer}}</p>
</body>
</html>
`))

func (c content) html() (string, error) {
	var b bytes.Buffer
	if err := htmlBody.Execute(&b, c); err != nil {
		return "", fmt.Errorf("notify: rendering the HTML body: %w", err)
	}
	return b.String(), nil
}

// money formats an amount with the currency's ISO 4217 minor units (2 when unknown), thousands
// grouped with commas: "1,234.50 EUR", "120,000 JPY".
func money(d decimal.Decimal, currency string) string {
	places, ok := pricing.MinorUnits(currency)
	if !ok {
		places = 2
	}
	s := d.StringFixed(places)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var g strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			g.WriteByte(',')
		}
		g.WriteRune(r)
	}
	out := sign + g.String()
	if hasFrac {
		out += "." + frac
	}
	return out + " " + currency
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

var statusLabels = map[string]string{
	"ready_to_process": "Waiting for the deposit",
	"awaiting_deposit": "Waiting for the deposit",
	"pending_match":    "Deposit being matched",
	"deposit_sent":     "Deposit sent",
	"processing":       "Processing",
	"transfer_created": "Sent to the recipient's bank",
	"completed":        "Completed",
	"failed":           "Failed",
	"refunded":         "Refunded",
}

func statusLabel(s string) string {
	if l, ok := statusLabels[s]; ok {
		return l
	}
	return cleanText(s, 64)
}

// cleanText makes free text safe and tidy for a message: control characters, bidi formatting
// characters (text.IsUnsafe: a U+202E would reverse the rest of the line) and runs of white
// space become one space, and the text is cut to max runes.
func cleanText(s string, max int) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || text.IsUnsafe(r) || r == unicode.ReplacementChar {
			space = true
			continue
		}
		if n >= max {
			b.WriteString("...")
			break
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// MaskAccount describes a recipient account without giving it away: "IBAN ending in 3000",
// "account ending in 6789", "e-mail j***@example.com". At most the last four characters of a
// number are shown, and fewer for a short one; an identifier of four characters or fewer is not
// shown at all. An empty account gives "".
func MaskAccount(accountType, account string) string {
	if strings.TrimSpace(account) == "" {
		return ""
	}
	if accountType == "email_recipient" || (strings.Contains(account, "@") && accountType == "") {
		local, domain, ok := strings.Cut(strings.TrimSpace(account), "@")
		if !ok || local == "" || domain == "" {
			return "e-mail address"
		}
		first := []rune(local)[0]
		return "e-mail " + cleanText(string(first), 1) + "***@" + cleanText(domain, 253)
	}
	var alnum []rune
	for _, r := range account {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum = append(alnum, unicode.ToUpper(r))
		}
	}
	what := "account"
	if accountType == "iban" {
		what = "IBAN"
	}
	var shown int
	switch n := len(alnum); {
	case n >= 8:
		shown = 4
	case n >= 5:
		shown = 2
	default:
		if accountType == "iban" {
			return "IBAN"
		}
		return "bank account"
	}
	return what + " ending in " + string(alnum[len(alnum)-shown:])
}
