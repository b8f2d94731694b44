package get

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `get transfers` needs (--account reads the account first).
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get

// TransfersOptions are the inputs of `get transfers [--account NAME]`.
type TransfersOptions struct {
	*cli.Factory

	Account string
}

// NewCmdTransfers is `get transfers`.
func NewCmdTransfers(f *cli.Factory) *cobra.Command {
	o := &TransfersOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "transfers",
		Aliases: []string{"transfer", "tr"},
		Short:   "List transfers, oldest first",
		Example: `  kubectl payout get transfers
  kubectl payout get transfers --account acme`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Account, "account", "", "list only the transfers of this account (default all accounts)")
	return cmd
}

// Validate checks the arguments before anything is sent to the cluster.
func (o *TransfersOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args); err != nil {
		return err
	}
	if o.Account == "" {
		return nil
	}
	return admin.ValidateAccountName(o.Account)
}

// Run prints the table.
func (o *TransfersOptions) Run(ctx context.Context, _ []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	var opts []client.ListOption
	if o.Account != "" {
		// A typo in --account should say so, not look like an account without transfers.
		if _, err := admin.GetAccount(ctx, c, o.Account); err != nil {
			return err
		}
		opts = append(opts, client.InNamespace(payoutv1.AccountNamespace(o.Account)))
	}
	list := &payoutv1.TransferList{}
	if err := c.List(ctx, list, opts...); err != nil {
		return fmt.Errorf("listing transfers: %w", err)
	}
	if len(list.Items) == 0 {
		// On stderr, like kubectl, so stdout stays an empty table for scripts.
		fmt.Fprintln(o.ErrOut, "No transfers found")
		return nil
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return WriteTransferTable(o.Out, list.Items, o.Clock.Now())
}
