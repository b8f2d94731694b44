// Package ledger is `kubectl payout ledger`: the treasury's ledger of a period, from the live
// objects and the archive alike (internal/ledger).
package ledger

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/ledger"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
)

// What `ledger` reads, in every namespace (gather.Objects).
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers;deposits;refunds,verbs=list

// OutputCSV is -o csv: one amount a row.
const OutputCSV = "csv"

// Options are the inputs of `ledger [--since T] [--until T] [-o json|csv]`.
type Options struct {
	*cli.Factory

	Since, Until   string
	Output         string
	ArchiveDSNFile string

	since, until time.Time
}

// NewCmdLedger is `ledger`.
func NewCmdLedger(f *cli.Factory) *cobra.Command {
	o := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Print the treasury's ledger of a period, and check that it balances",
		Long: `Print the treasury's ledger of a period: per network and token, in base units
(1 USDC = 1000000), what the deposit addresses held at its start (OPENING),
received (CREDITED to transfers, OVERPAID above a transfer's amount, STRAY),
had SWEPT to the treasury and held at its end (CLOSING); what the refund wallet
REFUNDED; v2 deposits sent to the platform address (DIRECT). Per payout currency:
the payouts the provider took, what their quotes promised (QUOTED) and what the
provider pays (PAID), what came back (RETURNED), the USD sent for them and the
fees charged.

Then every invariant is checked (docs/operations/ledger.md): the command exits 1
and lists the failing ones when the ledger does not balance.

The facts are the live objects and, when an archive is configured (the DSN in
--archive-dsn-file or in $PAYOUT_ARCHIVE_DSN), the archived transfers: a period
reads the same before and after its transfers are archived. --since and --until
take RFC 3339 times or dates (UTC midnight); the period is [since, until), from
the first fact to now by default.`,
		Example: `  kubectl payout ledger --since 2026-11-01 --until 2026-12-01
  PAYOUT_ARCHIVE_DSN=postgres://... kubectl payout ledger -o csv > november.csv
  kubectl payout ledger -o json | jq '.tokens[] | {network, token, closing}'`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Since, "since", "", "start of the period, included (RFC 3339 or YYYY-MM-DD; default: the first fact)")
	cmd.Flags().StringVar(&o.Until, "until", "", "end of the period, excluded (RFC 3339 or YYYY-MM-DD; default: now)")
	cmd.Flags().StringVar(&o.ArchiveDSNFile, "archive-dsn-file", "", "file holding the PostgreSQL DSN of the transfer archive (or env "+archive.DSNEnv+"); neither: live objects only")
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputJSON, OutputCSV)
	return cmd
}

// Validate checks the arguments before anything is read.
func (o *Options) Validate(args []string) error {
	if err := cli.ExpectArgs(args); err != nil {
		return err
	}
	if err := cli.ValidateOutput(o.Output, cli.OutputJSON, OutputCSV); err != nil {
		return err
	}
	var err error
	if o.since, err = parseTime("--since", o.Since); err != nil {
		return err
	}
	if o.until, err = parseTime("--until", o.Until); err != nil {
		return err
	}
	if o.until.IsZero() {
		o.until = o.Clock.Now()
	}
	if !o.since.IsZero() && !o.since.Before(o.until) {
		return cli.UsageErrorf("--since %s is not before --until %s", o.since.Format(time.RFC3339), o.until.Format(time.RFC3339))
	}
	return nil
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, cli.UsageErrorf("%s %q is neither an RFC 3339 time nor a date (YYYY-MM-DD)", flag, s)
}

// Run gathers the facts, prints the ledger, and fails when an invariant does not hold.
func (o *Options) Run(ctx context.Context, _ []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	cfg := archive.DefaultConfig()
	cfg.DSNFile = o.ArchiveDSNFile
	if err := cfg.Resolve(); err != nil {
		return err
	}
	var store *archive.Store
	if cfg.Enabled() {
		if store, err = archive.Open(ctx, cfg.DSN.Reveal()); err != nil {
			return err
		}
		defer store.Close()
	}
	objects, err := gather.Objects(ctx, c, store, o.until)
	if err != nil {
		return err
	}
	r := ledger.Build(ledger.FactsOf(objects), o.since, o.until)
	switch o.Output {
	case cli.OutputJSON:
		err = cli.PrintStructured(o.Out, cli.OutputJSON, View(r))
	case OutputCSV:
		err = WriteCSV(o.Out, r)
	default:
		err = WriteText(o.Out, r)
	}
	if err != nil {
		return err
	}
	if !r.Balanced() {
		return fmt.Errorf("the ledger does not balance: %d invariant failures (docs/operations/ledger.md)", len(r.Failures))
	}
	return nil
}

// Report is the ledger as -o json prints it: base units and decimals as strings, exact.
type Report struct {
	Since    string      `json:"since,omitempty"`
	Until    string      `json:"until"`
	Balanced bool        `json:"balanced"`
	Tokens   []TokenLine `json:"tokens"`
	Fiat     []FiatLine  `json:"fiat"`
	Failures []Failure   `json:"failures"`
}

// TokenLine is ledger.TokenLine in base units.
type TokenLine struct {
	Network  string `json:"network"`
	Token    string `json:"token"`
	Opening  string `json:"opening"`
	Received string `json:"received"`
	Credited string `json:"credited"`
	Overpaid string `json:"overpaid"`
	Stray    string `json:"stray"`
	Swept    string `json:"swept"`
	Closing  string `json:"closing"`
	Refunded string `json:"refunded"`
	Direct   string `json:"direct"`
	OnChain  string `json:"onChain,omitempty"`
}

// FiatLine is ledger.FiatLine.
type FiatLine struct {
	Currency  string `json:"currency"`
	Payouts   int    `json:"payouts"`
	Pending   int    `json:"pending"`
	Rejected  int    `json:"rejected"`
	Quoted    string `json:"quoted"`
	Paid      string `json:"paid"`
	Returned  string `json:"returned"`
	AmountUSD string `json:"amountUSD"`
	FeesUSD   string `json:"feesUSD"`
}

// Failure is ledger.Failure.
type Failure struct {
	Invariant string `json:"invariant"`
	Subject   string `json:"subject"`
	Message   string `json:"message"`
}

// View is r as -o json prints it.
func View(r *ledger.Report) Report {
	v := Report{Until: r.Until.UTC().Format(time.RFC3339), Balanced: r.Balanced(), Tokens: []TokenLine{}, Fiat: []FiatLine{}, Failures: []Failure{}}
	if !r.Since.IsZero() {
		v.Since = r.Since.UTC().Format(time.RFC3339)
	}
	for _, l := range r.Tokens {
		t := TokenLine{Network: l.Network, Token: l.Token, Opening: l.Opening.String(), Received: l.Received.String(),
			Credited: l.Credited.String(), Overpaid: l.Overpaid.String(), Stray: l.Stray.String(), Swept: l.Swept.String(),
			Closing: l.Closing.String(), Refunded: l.Refunded.String(), Direct: l.Direct.String()}
		if l.OnChain != nil {
			t.OnChain = l.OnChain.String()
		}
		v.Tokens = append(v.Tokens, t)
	}
	for _, l := range r.Fiat {
		v.Fiat = append(v.Fiat, FiatLine{Currency: l.Currency, Payouts: l.Payouts, Pending: l.Pending, Rejected: l.Rejected,
			Quoted: l.Quoted.String(), Paid: l.Paid.String(), Returned: l.Returned.String(), AmountUSD: l.AmountUSD.String(), FeesUSD: l.FeesUSD.String()})
	}
	for _, f := range r.Failures {
		v.Failures = append(v.Failures, Failure{Invariant: string(f.Invariant), Subject: f.Subject, Message: f.Message})
	}
	return v
}

// WriteText prints the ledger as tables: tokens, fiat, then the failures or that it balances.
func WriteText(w io.Writer, r *ledger.Report) error {
	v := View(r)
	since := v.Since
	if since == "" {
		since = "the first fact"
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintf(tw, "Ledger from %s to %s\n\n", since, v.Until)
	fmt.Fprintln(tw, "NETWORK\tTOKEN\tOPENING\tRECEIVED\tCREDITED\tOVERPAID\tSTRAY\tSWEPT\tCLOSING\tREFUNDED\tDIRECT\tON CHAIN")
	for _, l := range v.Tokens {
		onChain := l.OnChain
		if onChain == "" {
			onChain = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Network, l.Token, l.Opening, l.Received, l.Credited,
			l.Overpaid, l.Stray, l.Swept, l.Closing, l.Refunded, l.Direct, onChain)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CURRENCY\tPAYOUTS\tPENDING\tREJECTED\tQUOTED\tPAID\tRETURNED\tAMOUNT USD\tFEES USD")
	for _, l := range v.Fiat {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", l.Currency, l.Payouts, l.Pending, l.Rejected, l.Quoted, l.Paid, l.Returned,
			l.AmountUSD, l.FeesUSD)
	}
	fmt.Fprintln(tw)
	if v.Balanced {
		fmt.Fprintln(tw, "Balanced: every invariant holds.")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "INVARIANT\tSUBJECT\tMESSAGE")
	for _, f := range v.Failures {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Invariant, f.Subject, f.Message)
	}
	return tw.Flush()
}

// WriteCSV prints the ledger one amount a row (line, network, token, currency, item, value), a
// shape a spreadsheet pivots; the failures are rows of line "failure", item the invariant.
func WriteCSV(w io.Writer, r *ledger.Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"line", "network", "token", "currency", "item", "value"})
	for _, l := range r.Tokens {
		for _, it := range []struct {
			item string
			v    *big.Int
		}{{"opening", l.Opening}, {"received", l.Received}, {"credited", l.Credited}, {"overpaid", l.Overpaid}, {"stray", l.Stray},
			{"swept", l.Swept}, {"closing", l.Closing}, {"refunded", l.Refunded}, {"direct", l.Direct}, {"on_chain", l.OnChain}} {
			if it.v != nil {
				_ = cw.Write([]string{"token", l.Network, l.Token, "", it.item, it.v.String()})
			}
		}
	}
	for _, l := range r.Fiat {
		for _, it := range [][2]string{{"payouts", strconv.Itoa(l.Payouts)}, {"pending", strconv.Itoa(l.Pending)},
			{"rejected", strconv.Itoa(l.Rejected)}, {"quoted", l.Quoted.String()}, {"paid", l.Paid.String()},
			{"returned", l.Returned.String()}, {"amount_usd", l.AmountUSD.String()}, {"fees_usd", l.FeesUSD.String()}} {
			_ = cw.Write([]string{"fiat", "", "", l.Currency, it[0], it[1]})
		}
	}
	for _, f := range r.Failures {
		_ = cw.Write([]string{"failure", "", "", "", string(f.Invariant), f.Subject + ": " + f.Message})
	}
	cw.Flush()
	return cw.Error()
}
