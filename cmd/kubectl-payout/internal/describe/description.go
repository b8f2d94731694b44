package describe

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/text"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// tokenDecimals: deposits are recorded in token base units, and every accepted token (USDC,
// USDT) has 6 decimals.
const tokenDecimals = 6

// none is what an unset value shows, as in kubectl.
const none = "<none>"

// TransferDescription is what `describe transfer` shows: a transfer and the events about it,
// oldest first. Times are absolute (UTC), so the text does not depend on when it is read.
type TransferDescription struct {
	Transfer payoutv1.Transfer
	// Deposits are the Deposit objects of the transfer: what has arrived so far is shown while a
	// v1 transfer waits for the rest of its amount.
	Deposits []payoutv1.Deposit
	Events   []eventsv1.Event
}

// String renders the description.
func (d TransferDescription) String() string {
	t := d.Transfer
	var b strings.Builder
	// Every value and cell goes through text.Escape: names, messages and e-mails are the
	// callers' or a bank's text, and one ESC or U+202E would rewrite the terminal.
	line := func(label, value string) { fmt.Fprintf(&b, "%-17s%s\n", label+":", text.Escape(value)) }

	line("Transfer", t.Name)
	line("Account", fmt.Sprintf("%s (namespace %s)", t.Spec.Account, t.Namespace))
	line("Created", timestamp(t.CreationTimestamp))
	line("Method", string(t.Spec.Method))
	line("Amount", fmt.Sprintf("%s USD in %s on %s", t.Spec.Amount, t.Spec.SourceToken, t.Spec.SourceNetwork))
	line("Recipient", recipient(t.Spec.Recipient))
	line("Quote", quote(t.Spec.QuoteID, t.Spec.Quote))
	line("Pays", pays(t))
	line("Wallet", orNone(t.Spec.WalletAddress))
	line("Deposit address", t.Spec.DepositAddress)
	line("Customer", strings.TrimSpace(t.Spec.CustomerUUID+" "+t.Spec.CustomerEmail))
	line("Status", orNone(string(t.Status.Phase)))
	line("Error", failure(t.Status.Failure))
	line("Deposit", deposit(t.Status.Deposit))
	if t.Spec.Method == payoutv1.TransferV1 && t.Status.Deposit == nil && t.Status.Failure == nil {
		got, want := transfer.Received(&t, d.Deposits)
		line("Received", fmt.Sprintf("%s of %s %s from %s so far", tokenAmount(got.String()), tokenAmount(want.String()), t.Spec.SourceToken, t.Spec.WalletAddress))
	}
	if m := t.Status.TxMatch; m != nil {
		s := "hash recorded " + timestamp(m.RecordedAt)
		if m.ReleasedAt != nil {
			s += ", released " + timestamp(*m.ReleasedAt) + " (its transaction does not pay this transfer)"
		}
		line("Hash", s)
	}
	if sc := t.Status.SenderScreening; sc != nil {
		s := fmt.Sprintf("%s %s at %s", sc.Address, sc.Result, timestamp(sc.At))
		if sc.Message != "" {
			s += ": " + sc.Message
		}
		line("Payer screening", s)
	}
	line("Payout", payout(t.Status.Payout))
	if p := t.Status.Payout; p != nil {
		if p.LostAt != nil {
			line("Payout lost", "the provider does not know it since "+timestamp(*p.LostAt)+": nothing is created again; ask the provider's support")
		}
		switch {
		case p.Returned != nil:
			line("Payout returned", "by the recipient's bank, seen "+timestamp(p.Returned.At)+": "+orNone(p.Returned.Message)+"; the deposit is owed to its sender")
		case p.ReturnWindowEndsAt != nil:
			line("Return window", "the recipient's bank may return the payout until "+timestamp(*p.ReturnWindowEndsAt))
		}
	}
	line("Refund", refund(t.Status.Refund))
	if t.Spec.Cancellation != nil {
		line("Cancellation", fmt.Sprintf("%s: %s, requested %s", t.Spec.Cancellation.Reason, t.Spec.Cancellation.Message, timestamp(t.Spec.Cancellation.RequestedAt)))
	}
	for _, n := range t.Status.Notifications {
		line("Mailed", mailed(n))
	}
	for _, sd := range t.Status.StrayDeposits {
		s := fmt.Sprintf("%s %s", tokenAmount(sd.Amount), sd.Token)
		if sd.Network != "" {
			s += " on " + string(sd.Network)
		}
		s += fmt.Sprintf(" in %s from %s: %s", sd.TxHash, orNone(sd.From), sd.Reason)
		if r := sd.Refund; r != nil {
			s += fmt.Sprintf("; refunded in %s on %s %s", r.TxHash, r.Network, timestamp(r.ConfirmedAt))
		}
		line("Stray deposit", s)
	}

	b.WriteString("History:\n")
	history := transfer.History(&t) // a fresh v1 transfer's opening line is not stored yet
	table(&b, len(history), func(tw *tabwriter.Writer) {
		for _, h := range history {
			row(tw, timestamp(h.At), string(h.Status), h.Reason, h.Message)
		}
	})
	b.WriteString("Events:\n")
	table(&b, len(d.Events), func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "  TIME\tTYPE\tREASON\tFROM\tMESSAGE")
		for _, e := range d.Events {
			row(tw, eventTime(e).UTC().Format(time.RFC3339), e.Type, e.Reason, reporter(e), note(e))
		}
	})
	return b.String()
}

// table writes rows through a tabwriter, or "  <none>" when there are none.
func table(b *strings.Builder, rows int, write func(*tabwriter.Writer)) {
	if rows == 0 {
		b.WriteString("  " + none + "\n")
		return
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	write(tw)
	_ = tw.Flush() // a strings.Builder does not fail
}

// row writes one indented table row, its cells escaped: a tab or a newline in stored text would
// otherwise shift the columns or forge a row.
func row(tw *tabwriter.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = text.Escape(c)
	}
	fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
}

func recipient(r payoutv1.RecipientSnapshot) string {
	s := fmt.Sprintf("%d %s (%s %s", r.ID, r.AccountHolderName, r.Currency, r.Type)
	if r.Country != "" {
		s += ", " + string(r.Country)
	}
	return s + ")"
}

func quote(id string, q payoutv1.QuoteSnapshot) string {
	s := fmt.Sprintf("%s: %s USD -> %s %s at %s, transfer fee %s, service fee %s%%",
		id, q.SourceAmount, q.TargetAmount, q.TargetCurrency, q.USDToTargetRate, q.TransferFee, q.ServiceFeePercent)
	if q.ServiceFeeFixed != nil {
		s += " + " + string(*q.ServiceFeeFixed)
	}
	return s
}

// pays is what the transfer pays for its amount, the quote's fees as quoted: the quote's target
// when the amount is the quote's, else a cent's worth off (spec 4.10 lets the amount differ from
// the quote by 0.01). The Payout line shows what the stored intent asked of the bank.
func pays(t payoutv1.Transfer) string {
	target, err := pricing.PayoutTarget(t.Spec.Quote, t.Spec.Amount)
	if err != nil {
		return "cannot be priced: " + err.Error()
	}
	s := fmt.Sprintf("%s %s for %s USD", target, t.Spec.Quote.TargetCurrency, t.Spec.Amount)
	if target != t.Spec.Quote.TargetAmount {
		s += fmt.Sprintf(" (the quote's %s %s is for %s USD)", t.Spec.Quote.TargetAmount, t.Spec.Quote.TargetCurrency, t.Spec.Quote.SourceAmount)
	}
	return s
}

func deposit(d *payoutv1.DepositFacts) string {
	if d == nil {
		return none
	}
	s := fmt.Sprintf("%s %s on %s in %s", tokenAmount(d.Amount), d.Token, d.Network, d.TxHash)
	if d.From != "" {
		s += " from " + d.From
	}
	if d.BlockNumber != 0 {
		s += fmt.Sprintf(" (block %d, %d confirmations)", d.BlockNumber, d.Confirmations)
	}
	s += ", seen " + timestamp(d.SeenAt)
	if d.ConfirmedAt == nil {
		return s + ", not yet at depth"
	}
	return s + ", at depth " + timestamp(*d.ConfirmedAt)
}

// mailed is an outcome e-mail: stored to be sent, sent, or refused by the mail server.
func mailed(n payoutv1.NotificationRecord) string {
	switch {
	case n.State == payoutv1.NotificationPending:
		at := none
		if n.DecidedAt != nil {
			at = timestamp(*n.DecidedAt)
		}
		return fmt.Sprintf("%s to %s: to be sent (decided %s)", n.Kind, n.To, at)
	case n.SentAt == nil:
		return fmt.Sprintf("%s to %s", n.Kind, n.To)
	case n.Failed != "":
		return fmt.Sprintf("%s to %s refused at %s: %s", n.Kind, n.To, timestamp(*n.SentAt), n.Failed)
	}
	return fmt.Sprintf("%s to %s at %s", n.Kind, n.To, timestamp(*n.SentAt))
}

func failure(f *payoutv1.TransferFailure) string {
	if f == nil {
		return none
	}
	return fmt.Sprintf("%s: %s (%s)", f.Reason, f.Message, timestamp(f.At))
}

// tokenAmount shows base units as a token amount: 25000000 -> 25.
func tokenAmount(baseUnits string) string {
	d, err := decimal.NewFromString(baseUnits)
	if err != nil {
		return baseUnits + " base units"
	}
	return d.Shift(-tokenDecimals).String()
}

func payout(p *payoutv1.PayoutFacts) string {
	if p == nil {
		return none
	}
	s := fmt.Sprintf("%s, reference %s, %s", p.Provider, p.Reference, p.State)
	if p.ProviderID != "" {
		s += ", id " + p.ProviderID
	}
	if p.TargetAmount != "" {
		s += fmt.Sprintf(", %s USD -> %s at %s", orNone(string(p.SourceAmount)), p.TargetAmount, orNone(string(p.Rate)))
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s + ", requested " + timestamp(p.RequestedAt)
}

func refund(r *payoutv1.RefundFacts) string {
	if r == nil {
		return none
	}
	return fmt.Sprintf("%s USDC to %s in %s on base, confirmed %s", tokenAmount(r.Amount), orNone(r.To), r.TxHash, timestamp(r.ConfirmedAt))
}

// eventTime is when an event last happened, whichever API wrote it: events.k8s.io/v1
// recorders set eventTime, core/v1 recorders set only the deprecated timestamps.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

func reporter(e eventsv1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return orNone(e.DeprecatedSource.Component)
}

// note is the event's message, with its count when it happened more than once.
func note(e eventsv1.Event) string {
	count := e.DeprecatedCount
	if e.Series != nil {
		count = e.Series.Count
	}
	if count > 1 {
		return fmt.Sprintf("%s (x%d)", e.Note, count)
	}
	return e.Note
}

func timestamp(t metav1.Time) string {
	if t.IsZero() {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
