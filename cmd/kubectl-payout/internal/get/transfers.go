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

// TransfersOptions are the inputs of `get transfers [--account NAME] [-o wide|json|yaml]`.
type TransfersOptions struct {
	*cli.Factory

	Account string
	Output  string
}

// NewCmdTransfers is `get transfers`.
func NewCmdTransfers(f *cli.Factory) *cobra.Command {
	o := &TransfersOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "transfers",
		Aliases: []string{"transfer", "tr"},
		Short:   "List transfers, oldest first",
		Long: `List transfers, oldest first, of every account or of one (--account).

Columns: ID, STATUS, AMOUNT (USD), CURRENCY (paid out), NETWORK (of the deposit),
RECIPIENT (id) and AGE; -o wide adds METHOD (v1, v2), TOKEN, ACCOUNT and ERROR (the
failure reason). -o json and -o yaml print the Transfer resources as a List.`,
		Example: `  kubectl payout get transfers
  kubectl payout get transfers --account acme -o wide
  kubectl payout get transfers -o json | jq -r '.items[] | select(.status.phase=="failed") | .metadata.name'`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.Account, "account", "", "list only the transfers of this account (default all accounts)")
	_ = cmd.RegisterFlagCompletionFunc("account", cli.CompleteAccounts(f))
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputWide, cli.OutputJSON, cli.OutputYAML)
	return cmd
}

// Validate checks the arguments before anything is sent to the cluster.
func (o *TransfersOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args); err != nil {
		return err
	}
	if err := cli.ValidateOutput(o.Output, cli.OutputWide, cli.OutputJSON, cli.OutputYAML); err != nil {
		return err
	}
	if o.Account == "" {
		return nil
	}
	return admin.ValidateAccountName(o.Account)
}

// Run prints the table, or the resources.
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
	sort.SliceStable(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	switch o.Output {
	case cli.OutputJSON, cli.OutputYAML:
		return cli.PrintStructured(o.Out, o.Output, TransferList(list.Items))
	}
	if len(list.Items) == 0 {
		// On stderr, like kubectl, so stdout stays an empty table for scripts.
		fmt.Fprintln(o.ErrOut, "No transfers found")
		return nil
	}
	return WriteTransferTable(o.Out, list.Items, o.Clock.Now(), o.Output == cli.OutputWide)
}

// List is what kubectl prints for a list with -o json or yaml: the items, each with its kind.
type List struct {
	APIVersion string       `json:"apiVersion"`
	Items      []any        `json:"items"`
	Kind       string       `json:"kind"`
	Metadata   ListMetadata `json:"metadata"`
}

// ListMetadata is the (empty) metadata of a List.
type ListMetadata struct {
	ResourceVersion string `json:"resourceVersion"`
}

// TransferList is transfers as a kubectl List, each with apiVersion and kind and without
// managed fields.
func TransferList(transfers []payoutv1.Transfer) List {
	l := List{APIVersion: "v1", Kind: "List", Items: []any{}}
	for i := range transfers {
		l.Items = append(l.Items, Resource(&transfers[i]))
	}
	return l
}

// Resource is t as kubectl prints it: with apiVersion and kind, without managed fields.
func Resource(t *payoutv1.Transfer) *payoutv1.Transfer {
	out := t.DeepCopy()
	out.APIVersion, out.Kind = payoutv1.GroupVersion.String(), "Transfer"
	out.ManagedFields = nil
	return out
}
