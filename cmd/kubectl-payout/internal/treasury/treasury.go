// Package treasury is `kubectl payout treasury`: where every v1 deposit's tokens are, per
// network and token: swept into the treasury, pending a sweep, held at their deposit
// addresses, or stranded (docs/operations/sweeper.md).
package treasury

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/internal/treasury"
)

// What `treasury` needs: it reads every deposit and every sweep.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=list

// Options are the inputs of `treasury`.
type Options struct {
	*cli.Factory

	Output string
}

// NewCmdTreasury is `treasury`.
func NewCmdTreasury(f *cli.Factory) *cobra.Command {
	o := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "treasury",
		Short: "Show where the deposits' tokens are: swept, pending, held, stranded",
		Long: `Show, per network and token, where the tokens of every recorded v1 deposit are:

  SWEPT     moved to the network's treasury (what the sweep transactions' receipts moved)
  PENDING   due to the treasury: waiting for a batch, or in one on its way
  HELD      at their deposit addresses and not due: their transfer has not ended, or
            they are owed to their sender until refunded (or, a stray, written off)
  STRANDED  due, but the sweeper stopped trying (its batches moved nothing three
            times), or a write-off it refused: an operator looks at the Sweep

Solana has no v1 deposit addresses: its deposits are v2 payments to the platform's
address, which is the treasury there, so nothing is swept; its line says so (kubectl
payout ledger shows what it received). Amounts are in tokens (6 decimals). kubectl get sweeps -A lists every deposit's sweep.`,
		Example: `  kubectl payout treasury
  kubectl payout treasury -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.ValidateOutput(o.Output, cli.OutputJSON, cli.OutputYAML); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputJSON, cli.OutputYAML)
	return cmd
}

// Row is one line of the report, in tokens.
type Row struct {
	Network  payoutv1.Network `json:"network"`
	Token    payoutv1.Token   `json:"token"`
	Swept    string           `json:"swept"`
	Pending  string           `json:"pending"`
	Held     string           `json:"held"`
	Stranded string           `json:"stranded"`
	Deposits int              `json:"deposits"`
	// Note says why a network is not swept (solana); its amounts are then "-".
	Note string `json:"note,omitempty"`
}

// solanaNote is Solana's line: its money is in the treasury when it arrives.
const solanaNote = "not swept: v2 payments arrive at the platform's address, which is the treasury"

// Rows are the report's lines of summaries, with Solana's said as not swept.
func Rows(summaries []treasury.Summary) []Row {
	rows := []Row{}
	for _, s := range summaries {
		rows = append(rows, Row{Network: s.Network, Token: s.Token, Swept: transfer.TokenAmount(s.Swept.String()),
			Pending: transfer.TokenAmount(s.Pending.String()), Held: transfer.TokenAmount(s.Held.String()),
			Stranded: transfer.TokenAmount(s.Stranded.String()), Deposits: s.Count})
	}
	// no v1 deposit is ever recorded on Solana (no per-transfer address exists there)
	return append(rows, Row{Network: payoutv1.NetworkSolana, Token: payoutv1.TokenUSDC, Swept: "-", Pending: "-", Held: "-", Stranded: "-", Note: solanaNote})
}

// Run prints the report.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	var deps payoutv1.DepositList
	if err := c.List(ctx, &deps); err != nil {
		return err
	}
	var sweeps payoutv1.SweepList
	if err := c.List(ctx, &sweeps); err != nil {
		return err
	}
	rows := Rows(treasury.Summarize(deps.Items, sweeps.Items))
	if o.Output != cli.OutputText {
		return cli.PrintStructured(o.Out, o.Output, rows)
	}
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NETWORK\tTOKEN\tSWEPT\tPENDING\tHELD\tSTRANDED\tDEPOSITS\tNOTE")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Network, r.Token, r.Swept, r.Pending, r.Held, r.Stranded, r.Deposits, r.Note)
	}
	return w.Flush()
}
