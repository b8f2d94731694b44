// Command kubectl-payout is the operators' plugin of the payout service, also usable as
// `kubectl payout ...`. See `kubectl payout --help` and docs/kubectl-payout.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/commands"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := commands.Execute(ctx, cli.DisplayName(os.Args[0]), cli.Args(os.Args[0], os.Args[1:]), cli.NewFactory(cli.StdStreams()))
	stop()
	os.Exit(code)
}
