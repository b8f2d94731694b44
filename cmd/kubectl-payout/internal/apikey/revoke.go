package apikey

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `apikey revoke` needs.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=get;patch

// RevokeOptions are the inputs of `apikey revoke KEY_ID`.
type RevokeOptions struct {
	*cli.Factory
}

// NewCmdRevoke is `apikey revoke`.
func NewCmdRevoke(f *cli.Factory) *cobra.Command {
	o := &RevokeOptions{Factory: f}
	return &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key for good; its record stays",
		Long: `Revoke an API key. KEY_ID is the <keyId> of svc_live_<keyId>_<secret>. The key
never authenticates again; its record stays for audit. Revoking a revoked key
changes nothing.`,
		Example:           `  kubectl payout apikey revoke 3f9c2a7d1e0b4c68`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteKeyIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
}

// Validate checks the key id before anything is sent to the cluster.
func (o *RevokeOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the key id"); err != nil {
		return err
	}
	return admin.ValidateKeyID(args[0])
}

// Run revokes the key.
func (o *RevokeOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	if err := admin.RevokeKey(ctx, c, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "API key %s is revoked\n", args[0])
	return nil
}
