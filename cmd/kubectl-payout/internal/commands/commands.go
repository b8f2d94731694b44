// Package commands assembles the kubectl-payout command tree and runs it the way the binary
// does, so tests drive exactly what users run.
package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/account"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/apikey"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/completion"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/describe"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/get"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/ledger"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/recovery"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/refund"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/stray"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/treasury"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/wallet"
)

// NewRoot is the whole command tree. displayName is what help calls the program (see
// cli.DisplayName).
func NewRoot(displayName string, f *cli.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-payout",
		Short: "Operate the stablecoin payout service",
		Long: `Operate the stablecoin payout service: create accounts and API keys, verify and
block wallets, refund failed transfers, inspect transfers, print the treasury's
ledger and recover after a restore.

Every command talks to the cluster of $KUBECONFIG (or --kubeconfig) and returns
once its change is stored. The rights it needs are those of the ClusterRole
payout-operator-role. Shell completion: kubectl payout completion --help.`,
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: displayName},
		// Execute prints an error once; usage is for --help, not for every mistake.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// `completion` is a command of its own (package completion), with the plugin's help
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	f.AddFlags(root.PersistentFlags())
	cli.AsGroup(root)
	cli.FlagErrors(root)
	root.AddCommand(
		account.NewCmdAccount(f),
		apikey.NewCmdAPIKey(f),
		wallet.NewCmdWallet(f),
		refund.NewCmdRefund(f),
		stray.NewCmdStray(f),
		get.NewCmdGet(f),
		describe.NewCmdDescribe(f),
		recovery.NewCmdRecover(f),
		ledger.NewCmdLedger(f),
		treasury.NewCmdTreasury(f),
	)
	root.AddCommand(completion.NewCmdCompletion(f, root))
	return root
}

// Execute runs the command tree on args and returns the process exit code, having written any
// error to stderr.
func Execute(ctx context.Context, displayName string, args []string, f *cli.Factory) int {
	root := NewRoot(displayName, f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	// A refusal for lack of rights stands alone: what the command was doing adds nothing to it.
	if forbidden := (*cli.ForbiddenError)(nil); errors.As(err, &forbidden) {
		err = forbidden
	}
	fmt.Fprintf(f.ErrOut, "error: %v\n", err)
	if usage := (*cli.UsageError)(nil); errors.As(err, &usage) {
		fmt.Fprintf(f.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return 1
}
