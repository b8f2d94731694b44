// Package wallet holds `wallet verify` and `wallet block`.
package wallet

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdWallet is the `wallet` group.
func NewCmdWallet(f *cli.Factory) *cobra.Command {
	return cli.Group("wallet", "Verify and block wallets", NewCmdVerify(f), NewCmdBlock(f))
}
