package watch_test

import (
	"context"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/watch"
	"github.com/stablepay/payout-operator/internal/refund"
)

// How payoutd wires the chain side: the flags (and a file), the watchers and the refund wallet
// on the controllers' side, the deposit-address deriver on the facade's. (Compiled, not run.)
func ExampleSetup() {
	fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
	var chainFlags config.Flags
	chainFlags.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])
	cfg, err := chainFlags.Config() // file + flags, validated
	if err != nil {
		fmt.Println("chain configuration:", err)
		return
	}
	ctx := context.Background()
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		return
	}

	// controllers side (leader-elected): one watcher per configured network (EVM, Tron, Solana)
	chains, err := watch.Setup(mgr, cfg, watch.Options{Log: ctrl.Log.WithName("chains")})
	if err != nil {
		return
	}
	copts := controllers.DefaultOptions()
	// the refund key's wallets on the watchers' clients; none without refund.key: Refunds wait,
	// saying so
	if refunds, err := refund.NewEVMWallets(cfg, chains.Networks); err == nil && refunds != nil {
		copts.RefundWallets = refunds
	}
	_ = controllers.Setup(mgr, copts)
	// the transfer controller's v2 verification: chains (a chain.TxLookup, EVM hashes and Solana
	// signatures) and the address to expect, cfg.PlatformAddress(network, token)

	// facade side: v1 deposit addresses from the xpub (a Secret, a file or an env variable)
	deriver, err := depositkey.LoadPublic(ctx, mgr.GetAPIReader(), cfg.DepositKey)
	if err != nil {
		fmt.Println("v1 deposit addresses unavailable:", err)
	}
	_ = deriver // address, path, err := deriver.DepositAddress(network, transferID)
	_ = mgr.Start(ctx)
}
