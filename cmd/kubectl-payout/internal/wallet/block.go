package wallet

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `wallet block` needs.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=blockedwallets,verbs=get;create;patch

// BlockOptions are the inputs of `wallet block ADDRESS [--reason R]`.
type BlockOptions struct {
	*cli.Factory

	Reason string
}

// NewCmdBlock is `wallet block`.
func NewCmdBlock(f *cli.Factory) *cobra.Command {
	o := &BlockOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "block ADDRESS",
		Short: "Put a wallet on the local risk list",
		Long: `Put a wallet on the local risk list: wallet screening fails for it on every
account. EVM addresses compare case-insensitively. Blocking a blocked wallet
changes nothing, except that a new --reason replaces the old one.`,
		Example:           `  kubectl payout wallet block 0x8ba1f109551bD432803012645Ac136ddd64DBA72 --reason "chargeback fraud"`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why the wallet is blocked")
	return cmd
}

// Validate checks the address before anything is sent to the cluster.
func (o *BlockOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the wallet address"); err != nil {
		return err
	}
	return admin.ValidateWalletAddress(args[0])
}

// Run blocks the wallet.
func (o *BlockOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	if err := admin.BlockWallet(ctx, c, args[0], o.Reason); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Blocked wallet %s\n", payoutv1.NormalizeWallet(args[0]))
	return nil
}
