// Package controllers holds one reconciler per resource of the payout service. Reconcilers are
// thin: they load from the cache, decide with pure functions, and write status.
package controllers

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/refund"
)

// Options configure the controllers.
type Options struct {
	Clock clock.Clock
	// QuoteRetention keeps expired quotes this long before deleting them.
	QuoteRetention time.Duration
	// ClaimGrace is how long a uniqueness claim waits for its holder before it is released.
	ClaimGrace time.Duration
	// ChainHeartbeatMaxAge is how old a deposit watcher's heartbeat (in its ChainCursor) may be
	// before the deposit options of its network read unavailable. The watchers write one at
	// least every heartbeatInterval of the chain configuration (default 5s).
	ChainHeartbeatMaxAge time.Duration

	// Provider pays fiat; required.
	Provider fiat.Provider
	// Notifier mails outcomes; nil sends no mail.
	Notifier Notifier
	// Chain looks up v2 transactions; nil leaves v2 transfers pending.
	Chain chain.TxLookup
	// V2 gives the fixed v2 deposit addresses.
	V2 V2Addresses
	// TransferWorkers is how many transfers are reconciled at once.
	TransferWorkers int
	// Screener screens the wallet that paid before every payout, and every refund's
	// destination; nil uses the local risk list (BlockedWallet objects, `kubectl payout wallet
	// block`), as the facade does by default.
	Screener walletscreen.Screener
	// MatchTimeout is how long a confirmed v2 hash may stay unfound on chain before its
	// transfer fails (DepositNotFound) and releases it; default transfer.DefaultMatchTimeout.
	MatchTimeout time.Duration

	// RefundWallets send refunds: the refund key on every EVM network of the chain
	// configuration (watch.Setup reads them); nil when none is configured: Refund objects then
	// wait with a message saying so.
	RefundWallets refund.Wallets
	// RefundPollInterval is how often a refund on its way is looked at; default 2s.
	RefundPollInterval time.Duration

	// Archive moves finished transfers into the archive after the retention; off without a Store.
	Archive ArchiveOptions

	// Gate says whether money may move (the recovery check, internal/recovery): no payout is
	// created and no refund signed while it says no. nil: money always moves (tests).
	Gate Gate
}

// Gate says whether money may move now, and when not, why.
type Gate interface {
	MoneyMoves(ctx context.Context) (bool, string)
}

// moneyMoves asks g; a nil gate is always open.
func moneyMoves(ctx context.Context, g Gate) (bool, string) {
	if g == nil {
		return true, ""
	}
	return g.MoneyMoves(ctx)
}

// DefaultOptions are the production defaults.
func DefaultOptions() Options {
	return Options{
		Clock:                clock.RealClock{},
		QuoteRetention:       10 * time.Minute,
		ClaimGrace:           2 * time.Minute,
		ChainHeartbeatMaxAge: 30 * time.Second,
		TransferWorkers:      8,
	}
}

// Setup registers every controller with the manager, and the default deposit options once the
// manager has started (they are created when missing, never overwritten).
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Screener == nil {
		o.Screener = walletscreen.LocalList{Reader: mgr.GetClient()}
	}
	steps := []func() error{
		func() error {
			return (&PayoutAccountReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("payoutaccount"),
				Clock: o.Clock}).SetupWithManager(mgr)
		},
		func() error { return SetupAPIKeyController(mgr, o.Clock) },
		func() error { return SetupWalletControllers(mgr) },
		func() error {
			return (&DepositOptionReconciler{Client: mgr.GetClient(), Clock: o.Clock, MaxHeartbeatAge: o.ChainHeartbeatMaxAge}).SetupWithManager(mgr)
		},
		func() error {
			return (&QuoteReconciler{Client: mgr.GetClient(), Clock: o.Clock, Retention: o.QuoteRetention}).SetupWithManager(mgr)
		},
		func() error {
			return (&ClaimReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clock: o.Clock, Grace: o.ClaimGrace}).SetupWithManager(mgr)
		},
		func() error {
			return (&RefundReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("refund"),
				Clock: o.Clock, PollInterval: o.RefundPollInterval, Wallets: o.RefundWallets, Screener: o.Screener, Provider: o.Provider, Gate: o.Gate}).SetupWithManager(mgr)
		},
		func() error {
			return (&TransferReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("transfer"), Clock: o.Clock,
				Provider: o.Provider, Notifier: o.Notifier, Chain: o.Chain, V2: o.V2, Screener: o.Screener, MatchTimeout: o.MatchTimeout, Gate: o.Gate,
			}).SetupWithManager(mgr, o.TransferWorkers)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if a := o.Archive; a.Store != nil {
		if err := mgr.Add(&Archiver{Client: mgr.GetClient(), Store: a.Store, Clock: o.Clock, Config: a.Config, Mailing: o.Notifier != nil, Swept: a.Swept,
			TransferJSON: a.TransferJSON, RecipientJSON: a.RecipientJSON, Log: mgr.GetLogger().WithName("archiver")}); err != nil {
			return err
		}
	}
	return mgr.Add(runnableFunc(func(ctx context.Context) error {
		return EnsureDepositOptions(ctx, mgr.GetClient())
	}))
}

// runnableFunc runs once when the manager starts (after the leader election when it needs one).
type runnableFunc func(context.Context) error

func (f runnableFunc) Start(ctx context.Context) error { return f(ctx) }
