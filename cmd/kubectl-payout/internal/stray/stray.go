// Package stray holds `stray write-off`.
package stray

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// NewCmdStray is the `stray` group.
func NewCmdStray(f *cli.Factory) *cobra.Command {
	return cli.Group("stray", "Decide about stray deposits", NewCmdWriteOff(f))
}

// What `stray write-off` needs: it finds the deposit, reads its transfer, its transfer's
// deposits and the refund of its stray part, and records the write-off.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=get;create

// maxReason is the longest reason a write-off records (the Sweep's spec.writeOff.why).
const maxReason = 512

// WriteOffOptions are the inputs of `stray write-off DEPOSIT`.
type WriteOffOptions struct {
	*cli.Factory

	Reason string
}

// NewCmdWriteOff is `stray write-off`.
func NewCmdWriteOff(f *cli.Factory) *cobra.Command {
	o := &WriteOffOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "write-off DEPOSIT --reason TEXT",
		Short: "Give up refunding a stray deposit: the treasury takes it",
		Long: `Write off a stray deposit: decide that it is not refunded, so that the sweeper
moves it to the network's treasury. DEPOSIT is the name of its Deposit (kubectl
get deposits -A). Only a stray is written off: a deposit of another wallet,
token or network than its transfer's, the excess above the amount, one that
arrived after the end (once its transfer has ended), or one that arrived after
its transfer's account was deleted. The write-off records who you are and the
reason, in the deposit's Sweep (reason WrittenOff), once.

It is refused while a refund of the deposit is in flight or once it was
refunded; and once it is written off, a refund of the deposit is refused.`,
		Example:           `  kubectl payout stray write-off base-3b1f0c9e2d4a6b8c0e1f2a3b4c5d6e7f8a9b0c1d --reason "sender unreachable for 90 days"`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why the deposit is not refunded (required; recorded with your name)")
	return cmd
}

// Validate checks the arguments before anything is sent to the cluster.
func (o *WriteOffOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the deposit's name"); err != nil {
		return err
	}
	switch r := strings.TrimSpace(o.Reason); {
	case r == "":
		return cli.UsageErrorf("--reason is required: a write-off records why the deposit is not refunded")
	case len(r) > maxReason:
		return cli.UsageErrorf("--reason is %d characters long; at most %d are recorded", len(r), maxReason)
	}
	return nil
}

// Run records the write-off.
func (o *WriteOffOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	who, err := cli.Username(ctx, c)
	if err != nil {
		return fmt.Errorf("learning who you are for the write-off's audit record (a SelfSubjectReview): %w", err)
	}
	sw, dep, err := admin.WriteOff(ctx, c, args[0], who, strings.TrimSpace(o.Reason))
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Wrote off deposit %s of transfer %s (%s %s on %s from %s): the sweeper moves it to the treasury once it is due (kubectl get sweep -n %s %s)\n",
		dep.Name, dep.Spec.Transfer, transfer.TokenAmount(dep.Spec.Amount), dep.Spec.Token, dep.Spec.Network, dep.Spec.From, sw.Namespace, sw.Name)
	return nil
}
