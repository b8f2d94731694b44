package apikey

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `apikey list` and `apikey get` need.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=get;list

// ListOptions are the inputs of `apikey list [--account NAME]` and `apikey get KEY_ID`.
type ListOptions struct {
	*cli.Factory

	Account string
	Output  string
}

const keysLong = `

Columns: KEY ID, ACCOUNT, CREATED, LAST USED and STATUS (active, revoked). LAST USED is
when the facade last saw the key authenticate a request, recorded at most once a
minute per key (the payout.stablepay.dev/last-used annotation): it is accurate to
the minute, and "never" for a key not used since it was issued. -o json and -o
yaml print the APIKey resources.`

// NewCmdList is `apikey list`.
func NewCmdList(f *cli.Factory) *cobra.Command {
	o := &ListOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "list [--account NAME]",
		Short: "List API keys with when each was created and last used",
		Long:  "List the API keys of every account or of one (--account), newest first." + keysLong,
		Example: `  kubectl payout apikey list --account acme
  kubectl payout apikey list -o json | jq -r '.items[] | select(.spec.revoked | not) | .metadata.name'`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return err
			}
			return o.list(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.Account, "account", "", "list only the keys of this account (default all accounts)")
	_ = cmd.RegisterFlagCompletionFunc("account", cli.CompleteAccounts(f))
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputJSON, cli.OutputYAML)
	return cmd
}

// NewCmdGet is `apikey get`.
func NewCmdGet(f *cli.Factory) *cobra.Command {
	o := &ListOptions{Factory: f}
	cmd := &cobra.Command{
		Use:               "get KEY_ID",
		Short:             "Show one API key with when it was created and last used",
		Long:              "Show the API key KEY_ID (the <keyId> of svc_live_<keyId>_<secret>)." + keysLong,
		Example:           `  kubectl payout apikey get 3f9c2a7d1e0b4c68`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteKeyIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.ExpectArgs(args, "the key id"); err != nil {
				return err
			}
			if err := cli.ValidateOutput(o.Output, cli.OutputJSON, cli.OutputYAML); err != nil {
				return err
			}
			if err := admin.ValidateKeyID(args[0]); err != nil {
				return err
			}
			return o.get(cmd.Context(), args[0])
		},
	}
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputJSON, cli.OutputYAML)
	return cmd
}

func (o *ListOptions) validate(args []string) error {
	if err := cli.ExpectArgs(args); err != nil {
		return err
	}
	if err := cli.ValidateOutput(o.Output, cli.OutputJSON, cli.OutputYAML); err != nil {
		return err
	}
	if o.Account == "" {
		return nil
	}
	return admin.ValidateAccountName(o.Account)
}

func (o *ListOptions) list(ctx context.Context) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	if o.Account != "" {
		// a typo in --account should say so, not look like an account without keys
		if _, err := admin.GetAccount(ctx, c, o.Account); err != nil {
			return err
		}
	}
	list := &payoutv1.APIKeyList{}
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("listing API keys: %w", err)
	}
	keys := list.Items[:0]
	for _, k := range list.Items {
		if o.Account == "" || k.Spec.Account == o.Account {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return b.CreationTimestamp.Before(&a.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	if o.Output != cli.OutputText {
		items := make([]any, 0, len(keys))
		for i := range keys {
			items = append(items, resource(&keys[i]))
		}
		return cli.PrintStructured(o.Out, o.Output, map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]string{"resourceVersion": ""}})
	}
	if len(keys) == 0 {
		// on stderr, like kubectl, so stdout stays an empty table for scripts
		fmt.Fprintln(o.ErrOut, "No API keys found")
		return nil
	}
	return writeKeys(o.Out, keys)
}

func (o *ListOptions) get(ctx context.Context, id string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	k := &payoutv1.APIKey{}
	if err := c.Get(ctx, client.ObjectKey{Name: id}, k); err != nil {
		return fmt.Errorf("reading API key %s: %w", id, err)
	}
	if o.Output != cli.OutputText {
		return cli.PrintStructured(o.Out, o.Output, resource(k))
	}
	return writeKeys(o.Out, []payoutv1.APIKey{*k})
}

// resource is k with its apiVersion and kind and without managed fields, as kubectl prints it.
func resource(k *payoutv1.APIKey) *payoutv1.APIKey {
	out := k.DeepCopy()
	out.APIVersion, out.Kind = payoutv1.GroupVersion.String(), "APIKey"
	out.ManagedFields = nil
	return out
}

// writeKeys prints the keys' table; times are UTC to the minute, the granularity of last used.
func writeKeys(w io.Writer, keys []payoutv1.APIKey) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tACCOUNT\tCREATED\tLAST USED\tSTATUS")
	for _, k := range keys {
		used := "never"
		if at, ok := k.LastUsed(); ok {
			used = minute(at)
		}
		status := "active"
		if k.Spec.Revoked {
			status = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.Spec.Account, minute(k.CreationTimestamp.Time), used, status)
	}
	return tw.Flush()
}

func minute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
