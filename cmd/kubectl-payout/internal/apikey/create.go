package apikey

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `apikey create` needs: it reads the account and stores the key's hash.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=create

// CreateOptions are the inputs of `apikey create --account NAME`.
type CreateOptions struct {
	*cli.Factory

	Account string
}

// NewCmdCreate is `apikey create`.
func NewCmdCreate(f *cli.Factory) *cobra.Command {
	o := &CreateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "create --account NAME",
		Short: "Issue an API key; prints the key, which is never shown again",
		Long: `Issue an API key of an account. The full key is printed alone on stdout, so a
script can capture it; only its hash is stored and it is never shown again.`,
		Example:           `  KEY=$(kubectl payout apikey create --account acme)`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Account, "account", "", "account the key authenticates as (required)")
	_ = cmd.RegisterFlagCompletionFunc("account", cli.CompleteAccounts(f))
	return cmd
}

// Validate checks the arguments before anything is sent to the cluster.
func (o *CreateOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args); err != nil {
		return err
	}
	if o.Account == "" {
		return cli.UsageErrorf("--account is required: the account the key authenticates as")
	}
	return admin.ValidateAccountName(o.Account)
}

// Run issues the key. The key alone goes to stdout; the human line goes to stderr so that
// capturing stdout captures exactly the key.
func (o *CreateOptions) Run(ctx context.Context, _ []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	full, keyID, err := admin.IssueKey(ctx, c, o.Account)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, full)
	fmt.Fprintf(o.ErrOut, "Created API key %s for account %q; store it now, it is not shown again\n", keyID, o.Account)
	return nil
}
