package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/chain/tron"
	"github.com/stablepay/payout-operator/internal/secretfile"
	"github.com/stablepay/payout-operator/internal/sweeper"
	"github.com/stablepay/payout-operator/internal/treasury"
)

// sweeperOptions are the settings of `payoutd --sweeper`: the one process that holds the
// deposit master key (docs/operations/sweeper.md). It runs alone, never with the controllers or
// the facade, so that no pod that serves callers or talks to the bank can read the key.
type sweeperOptions struct {
	enabled    bool
	gasKeyFile string
	threshold  string
	maxAge     time.Duration
	maxBatch   int
	interval   time.Duration
}

func (s *sweeperOptions) bindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&s.enabled, "sweeper", false, "run the sweeper alone (with --controllers=false --api=false): move every deposit that is the platform's from its v1 deposit address to the network's treasury (networks.<name>.treasury); needs the deposit xprv (--deposit-xprv-file) and --sweeper-gas-key-file")
	fs.StringVar(&s.gasKeyFile, "sweeper-gas-key-file", "", "file holding the hex private key of the sweeper's gas wallet, which signs and pays for every sweep transaction")
	fs.StringVar(&s.threshold, "sweep-threshold", "1000000000", "a batch goes once the due deposits of a token on a network add up to this many base units (default 1,000 tokens)")
	fs.DurationVar(&s.maxAge, "sweep-max-age", 24*time.Hour, "a batch goes once the oldest due deposit of a token on a network has waited this long, whatever the amount")
	fs.IntVar(&s.maxBatch, "sweep-max-batch", 50, "deposit addresses per sweep transaction (at most 64)")
	fs.DurationVar(&s.interval, "sweep-interval", 30*time.Second, "longest time between two passes of the sweeper")
}

func (s *sweeperOptions) check(o *options) error {
	if !s.enabled {
		return nil
	}
	switch {
	case o.controllers || o.api:
		return errors.New("--sweeper runs alone: set --controllers=false and --api=false (the deposit master key is held by no other part of payoutd)")
	case s.gasKeyFile == "":
		return errors.New("--sweeper needs --sweeper-gas-key-file")
	case s.maxBatch < 1 || s.maxBatch > payoutv1.MaxSweepBatch:
		return fmt.Errorf("--sweep-max-batch: must be between 1 and %d, not %d", payoutv1.MaxSweepBatch, s.maxBatch)
	case s.maxAge < time.Second || s.interval < 100*time.Millisecond:
		return errors.New("--sweep-max-age must be at least 1s and --sweep-interval at least 100ms")
	}
	if t, ok := new(big.Int).SetString(s.threshold, 10); !ok || t.Sign() <= 0 {
		return fmt.Errorf("--sweep-threshold: %q is not a positive number of base units", s.threshold)
	}
	return nil
}

// wrapSweeperMover is the identity, except in a binary built for the sweeper's crash test
// (sweeperfault.go), where it stops the sweeper at a point of a batch.
var wrapSweeperMover = func(m sweeper.Mover) sweeper.Mover { return m }

// The points at which a binary built for the crash test stops the sweeper.
const (
	// faultBeforeBroadcast: the batch's transaction is signed (and, by the sweeper's order,
	// stored); the node has not seen it.
	faultBeforeBroadcast = "before-broadcast"
	// faultAfterBroadcast: the node took the transaction; its status write has not happened.
	faultAfterBroadcast = "after-broadcast"
)

// runSweeper runs the sweeper against the cluster of cfg until ctx ends.
func runSweeper(ctx context.Context, cfg *rest.Config, o *options, log logr.Logger) error {
	// its own Lease: the sweeper leads apart from the controllers
	mgr, err := ctrl.NewManager(cfg, managerOptions(o, o.leaderElect, "sweeper.payout.stablepay.dev"))
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	chains, err := o.chains.Config()
	if err != nil {
		return err
	}
	keys, err := depositkey.LoadPrivate(ctx, mgr.GetAPIReader(), chains.DepositKey)
	if err != nil {
		return fmt.Errorf("deposit key: %w", err)
	}
	gasKey, err := secretfile.Read(o.sweeper.gasKeyFile)
	if err != nil {
		return fmt.Errorf("--sweeper-gas-key-file: %w", err)
	}
	evmChains := map[payoutv1.Network]*evm.Chain{}
	movers := sweeper.ByNetwork{}
	to := map[payoutv1.Network]string{}
	for _, network := range chains.NetworkNames() {
		t, ok := chains.Treasury(network)
		if !ok {
			continue
		}
		n, _ := chains.Network(network)
		to[network] = t
		if n.Kind == config.KindTron {
			if movers[network], err = tronMover(network, n, gasKey, keys); err != nil {
				return err
			}
			continue
		}
		if evmChains[network], err = evm.NewChain(network, n); err != nil {
			return fmt.Errorf("chains: %w", err)
		}
	}
	if len(to) == 0 {
		log.Info("no network has a treasury (networks.<name>.treasury): nothing is swept")
	}
	mover, err := sweeper.NewEVM(evmChains, gasKey, keys)
	if err != nil {
		return err
	}
	for network := range evmChains {
		movers[network] = mover
	}
	for network := range to {
		at, _ := movers.GasWallet(network)
		log.Info("sweeping", "network", network, "treasury", to[network], "gasWallet", at)
	}
	threshold, _ := new(big.Int).SetString(o.sweeper.threshold, 10)
	s := &sweeper.Sweeper{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Mover: wrapSweeperMover(movers), Treasury: to, Now: time.Now,
		Interval: o.sweeper.interval, Policy: treasury.Policy{Threshold: threshold, MaxAge: o.sweeper.maxAge, MaxItems: o.sweeper.maxBatch}}
	if err := mgr.Add(s); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// tronMover is the mover of the Tron network n: its HTTP API, its tokens, its treasury and depth,
// and the gas key as its energy wallet (which must be n's energyWallet when that is set).
func tronMover(network payoutv1.Network, n config.Network, gasKey string, keys *depositkey.Private) (*sweeper.Tron, error) {
	tokens := map[payoutv1.Token]string{}
	for token, t := range n.Tokens {
		tokens[token] = t.Contract
	}
	depth := n.Confirmations.Blocks()
	if depth <= 0 {
		depth = config.DefaultTronConfirmations // finalized: java-tron solidifies 19 blocks down
	}
	m, err := sweeper.NewTron(network, &tron.Node{URL: n.HTTPAPI}, tokens, n.Treasury, gasKey, keys, depth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	if at, _ := m.GasWallet(network); n.EnergyWallet != "" && at != n.EnergyWallet {
		return nil, fmt.Errorf("networks.%s.energyWallet is %s, but --sweeper-gas-key-file holds the key of %s", network, n.EnergyWallet, at)
	}
	return m, nil
}
