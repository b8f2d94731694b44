package watch

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/evm"
)

// The watcher's permissions. ChainCursors are created by the watcher of their network; Deposits
// only ever created (the ledger is immutable); transfers read through the manager's cache.
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options of Setup.
type Options struct {
	Log   logr.Logger
	Clock clock.Clock
}

// Chains is what the chain side gives the rest of the operator once set up: the v2 transaction
// lookup (chain.TxLookup), the platform addresses, the address book and the refund wallet.
type Chains struct {
	// Networks are the configured EVM networks.
	Networks map[payoutv1.Network]*evm.Chain
	// Book is the deposit-address index the watchers match against.
	Book *AddressBook
	// Refunds is the Base refund wallet; nil when none is configured.
	Refunds *evm.Wallet
	// Watchers are the registered watchers, by network.
	Watchers map[payoutv1.Network]*Watcher

	cfg *config.Config
}

var _ chain.TxLookup = (*Chains)(nil)

// Setup registers a deposit watcher (leader-only) for every configured EVM network with mgr, and
// the address book they share; it reads the refund wallet's key. Nothing is called on the chains
// here: each watcher checks its node's chain id when it starts, and reports in its ChainCursor
// while it cannot. Networks of other kinds (solana, tron) are left to their own watchers.
func Setup(mgr manager.Manager, cfg *config.Config, o Options) (*Chains, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	log := o.Log
	out := &Chains{Networks: map[payoutv1.Network]*evm.Chain{}, Watchers: map[payoutv1.Network]*Watcher{}, cfg: cfg}
	out.Book = NewAddressBook(mgr.GetCache(), log.WithName("address-book"))
	recorder := mgr.GetEventRecorder("chain-watcher")
	sink := &DepositRecorder{Client: mgr.GetClient(), Log: log.WithName("deposits")}
	for _, name := range cfg.NetworkNames() {
		n, _ := cfg.Network(name)
		if n.Kind != config.KindEVM {
			log.Info("no EVM watcher for a network of another kind", "network", name, "kind", n.Kind)
			continue
		}
		ch, err := evm.NewChain(name, n)
		if err != nil {
			return nil, err
		}
		out.Networks[name] = ch
		w := &Watcher{
			Scanner:  &evm.Scanner{Chain: ch, Book: out.Book},
			Sink:     sink,
			Book:     out.Book,
			Client:   mgr.GetClient(),
			Reader:   mgr.GetAPIReader(),
			Recorder: recorder,
			Clock:    o.Clock,
			Log:      log.WithName("watcher"),
		}
		out.Watchers[name] = w
		if err := mgr.Add(w); err != nil {
			return nil, err
		}
	}
	sink.Skipped = func(d chain.DepositObserved, err error) {
		// the event goes to the network's cursor, the one object an operator watches per network
		cursor := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(d.Network)}}
		recorder.Eventf(cursor, nil, corev1.EventTypeWarning, CursorDepositSkippedReason, "Record",
			"%s of %s in %s (log %d) to transfer %s was not recorded: %v; the funds are on the deposit address",
			d.Amount, d.Token, d.TxHash, d.LogIndex, d.Transfer, err)
	}
	if len(out.Networks) > 0 {
		if err := mgr.Add(out.Book); err != nil {
			return nil, err
		}
	}
	if r, ok := cfg.RefundSettings(); ok {
		ch := out.Networks[r.Network]
		if ch == nil {
			return nil, fmt.Errorf("refund: network %s is not configured", r.Network)
		}
		key, err := r.Key.ReadLocal()
		if err != nil {
			return nil, fmt.Errorf("refund key from %s: %w", r.Key, err)
		}
		if out.Refunds, err = evm.NewWallet(ch, r.Token, key); err != nil {
			return nil, err
		}
		log.Info("refund wallet", "network", r.Network, "token", r.Token, "address", out.Refunds.Address())
	}
	return out, nil
}

// LookupTx implements chain.TxLookup over every configured EVM network.
func (c *Chains) LookupTx(ctx context.Context, network payoutv1.Network, txHash string) (*chain.TxObservation, error) {
	ch := c.Networks[network]
	if ch == nil {
		return nil, fmt.Errorf("no chain endpoint is configured for %s", network)
	}
	return ch.LookupTx(ctx, network, txHash)
}

// PlatformAddress is the v2 fixed deposit address of token on network, lower-case 0x hex, and
// whether one is configured.
func (c *Chains) PlatformAddress(network payoutv1.Network, token payoutv1.Token) (string, bool) {
	return c.cfg.PlatformAddress(network, token)
}
