// Package describe holds `describe transfer`.
package describe

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdDescribe is the `describe` group.
func NewCmdDescribe(f *cli.Factory) *cobra.Command {
	return cli.Group("describe", "Show a resource of the service in detail", NewCmdTransfer(f))
}
