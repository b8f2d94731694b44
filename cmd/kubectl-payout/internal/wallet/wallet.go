// Package wallet holds `wallet verify`, `wallet link` and `wallet block`.
package wallet

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdWallet is the `wallet` group.
func NewCmdWallet(f *cli.Factory) *cobra.Command {
	return cli.Group("wallet", "Verify and block wallets, and link accounts to the verification site", NewCmdVerify(f), NewCmdLink(f), NewCmdBlock(f))
}
