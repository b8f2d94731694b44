// Package apikey holds `apikey create`, `apikey list`, `apikey get` and `apikey revoke`.
package apikey

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdAPIKey is the `apikey` group.
func NewCmdAPIKey(f *cli.Factory) *cobra.Command {
	return cli.Group("apikey", "Issue, list and revoke API keys", NewCmdCreate(f), NewCmdList(f), NewCmdGet(f), NewCmdRevoke(f))
}
