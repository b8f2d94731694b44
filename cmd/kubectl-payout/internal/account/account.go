// Package account holds `account create`.
package account

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdAccount is the `account` group.
func NewCmdAccount(f *cli.Factory) *cobra.Command {
	return cli.Group("account", "Manage payout accounts", NewCmdCreate(f))
}
