// Package refund holds `refund TRANSFER_ID`.
package refund

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `refund` needs: it finds the transfer in whichever account holds it and records the
// request.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=get

// Options are the inputs of `refund TRANSFER_ID`.
type Options struct {
	*cli.Factory
}

// NewCmdRefund is `refund`.
func NewCmdRefund(f *cli.Factory) *cobra.Command {
	o := &Options{Factory: f}
	return &cobra.Command{
		Use:   "refund TRANSFER_ID",
		Short: "Refund everything a transfer owes: a failed transfer's deposit, and stray deposits",
		Long: `Request the refund of everything a transfer owes its senders: the deposit of a
failed transfer (sent back in USDC on Base; the transfer then reads refunded),
and every stray deposit of any transfer (a payment from another wallet than the
transfer's, of another token or network, the excess above the amount, or one
that arrived after the end), each sent back to its own sender on its own
network where the refund wallet can pay there, else in USDC on Base. Every
destination is screened first; a blocked one is held. A stray deposit an
operator wrote off (kubectl payout stray write-off) is not refunded. A transfer
that owes nothing is refused and left unchanged. Each refund is requested once: repeating
the command changes nothing and fails.`,
		Example:           `  kubectl payout refund 65f1c0de9a8b7c6d5e4f3a21`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteTransferIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
}

// Validate checks the transfer id before anything is sent to the cluster.
func (o *Options) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the transfer id"); err != nil {
		return err
	}
	return admin.ValidateTransferID(args[0])
}

// Run records the refund request.
func (o *Options) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	// the audit record names the Kubernetes identity, as the API server authenticated it: the
	// admission policy payout-refund-requester refuses any other name
	who, err := cli.Username(ctx, c)
	if err != nil {
		return fmt.Errorf("learning who you are for the refund's audit record (a SelfSubjectReview): %w", err)
	}
	t, requested, err := admin.RequestRefund(ctx, c, args[0], who)
	if err != nil {
		return err
	}
	if len(requested) == 1 && requested[0].Deposit == nil {
		fmt.Fprintf(o.Out, "Requested the refund of transfer %s of account %q\n", t.Name, t.Spec.Account)
		return nil
	}
	what := make([]string, len(requested))
	for i, r := range requested {
		what[i] = r.What()
	}
	fmt.Fprintf(o.Out, "Requested the refund of transfer %s of account %q: %s\n", t.Name, t.Spec.Account, strings.Join(what, "; "))
	return nil
}
