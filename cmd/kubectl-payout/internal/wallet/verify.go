package wallet

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `wallet verify` needs: the account, its namespace (made when missing) and the wallet
// record, created or updated.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=wallets,verbs=get;create;patch

// VerifyOptions are the inputs of `wallet verify ADDRESS --account NAME`.
type VerifyOptions struct {
	*cli.Factory

	Account string
}

// NewCmdVerify is `wallet verify`.
func NewCmdVerify(f *cli.Factory) *cobra.Command {
	o := &VerifyOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "verify ADDRESS --account NAME",
		Short: "Mark a wallet KYC-verified for an account",
		Long: `Mark a wallet KYC-verified for one account. ADDRESS is an EVM address (any
letter case: all spellings are the same wallet) or a Solana address.`,
		Example:           `  kubectl payout wallet verify 0x8ba1f109551bD432803012645Ac136ddd64DBA72 --account acme`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Account, "account", "", "account the verification is for (required)")
	_ = cmd.RegisterFlagCompletionFunc("account", cli.CompleteAccounts(f))
	return cmd
}

// Validate checks the address and account before anything is sent to the cluster.
func (o *VerifyOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the wallet address"); err != nil {
		return err
	}
	if o.Account == "" {
		return cli.UsageErrorf("--account is required: the account the wallet is verified for")
	}
	if err := admin.ValidateAccountName(o.Account); err != nil {
		return err
	}
	return admin.ValidateWalletAddress(args[0])
}

// Run records the verification.
func (o *VerifyOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	if err := admin.VerifyWallet(ctx, c, o.Account, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Verified wallet %s for account %q\n", payoutv1.NormalizeWallet(args[0]), o.Account)
	return nil
}
