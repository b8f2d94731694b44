// Package get holds `get transfers`.
package get

import (
	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// NewCmdGet is the `get` group.
func NewCmdGet(f *cli.Factory) *cobra.Command {
	return cli.Group("get", "List resources of the service", NewCmdTransfers(f))
}
