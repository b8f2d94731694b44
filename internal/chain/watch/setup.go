package watch

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/chain/solana"
	"github.com/stablepay/payout-operator/internal/chain/tron"
	"github.com/stablepay/payout-operator/internal/metrics"
)

// The watcher's permissions. ChainCursors are created by the watcher of their network; Deposits
// only ever created (the ledger is immutable); transfers read through the manager's cache;
// namespaces read (a released account namespace) and OrphanNamespace created when missing.
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options of Setup.
type Options struct {
	Log   logr.Logger
	Clock clock.Clock
	// SolanaStallAfter is the SolanaWatcher's StallAfter (0: the network's stallAfter setting).
	SolanaStallAfter time.Duration
}

// Chains is what the chain side gives the rest of the operator once set up: the v2 transaction
// lookup (chain.TxLookup), the platform addresses, the address book and the refund wallet.
type Chains struct {
	// Networks are the configured networks read over Ethereum's JSON-RPC: the EVM networks, and
	// Tron (through java-tron's Ethereum-compatible JSON-RPC, with Tron's spelling).
	Networks map[payoutv1.Network]*evm.Chain
	// Solana is the Solana network; nil when it is not configured.
	Solana *solana.Chain
	// SolanaWatcher keeps the solana ChainCursor in step; nil when Solana is not configured.
	SolanaWatcher *SolanaWatcher
	// Book is the deposit-address index the watchers match against.
	Book *AddressBook
	// Watchers are the registered watchers, by network.
	Watchers map[payoutv1.Network]*Watcher

	cfg *config.Config
}

var _ chain.TxLookup = (*Chains)(nil)

// Setup registers a watcher (leader-only) for every configured network with mgr, and the
// address book the deposit watchers share; it reads the refund wallet's key. EVM networks and
// Tron get a deposit watcher (Watcher: log scans at depth against the address book; Tron's
// deposit addresses are Base58Check); Solana gets a SolanaWatcher, which keeps its cursor in
// step and records no deposits (on Solana deposits are v2, looked up by signature). Nothing is
// called on the chains here: each watcher checks its node (chain id, or genesis hash) when it
// starts, and reports in its ChainCursor while it cannot.
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
		var ch *evm.Chain
		var err error
		switch n.Kind {
		case config.KindEVM:
			ch, err = evm.NewChain(name, n)
		case config.KindTron:
			ch, err = tron.NewChain(name, n)
		case config.KindSolana:
			if out.Solana, err = solana.NewChain(name, n); err != nil {
				return nil, err
			}
			out.SolanaWatcher = &SolanaWatcher{
				Chain:      out.Solana,
				Client:     mgr.GetClient(),
				Reader:     mgr.GetAPIReader(),
				Recorder:   recorder,
				Clock:      o.Clock,
				Log:        log.WithName("watcher"),
				StallAfter: cmp.Or(o.SolanaStallAfter, n.StallAfter.Duration),
			}
			if err := mgr.Add(out.SolanaWatcher); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, fmt.Errorf("%s: no watcher for networks of kind %q", name, n.Kind)
		}
		if err != nil {
			return nil, err
		}
		ch.CrossChecked = func(r evm.CrossCheck) { metrics.ChainCrossCheck(name, string(r)) }
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
	sink.Orphaned = func(d chain.DepositObserved, obj *payoutv1.Deposit) {
		cursor := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(d.Network)}}
		recorder.Eventf(cursor, nil, corev1.EventTypeWarning, CursorDepositOrphanedReason, "Record",
			"%s of %s in %s (log %d) to transfer %s arrived after its account %s was deleted: recorded as Deposit %s in namespace %s; send it back with `kubectl payout refund %s`",
			d.Amount, d.Token, d.TxHash, d.LogIndex, d.Transfer.Name, obj.Labels[payoutv1.AccountLabel], obj.Name, obj.Namespace, d.Transfer.Name)
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
	return out, nil
}

// LookupTx implements chain.TxLookup over every configured network: EVM networks and Tron by
// transaction hash, Solana by signature.
func (c *Chains) LookupTx(ctx context.Context, network payoutv1.Network, txHash string) (*chain.TxObservation, error) {
	if c.Solana != nil && network == c.Solana.Network {
		return c.Solana.LookupTx(ctx, network, txHash)
	}
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
