package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/metrics"
)

// Reasons of the ChainCursor's Ready condition and events.
const (
	// CursorSyncedReason: the watcher has scanned every block at depth.
	CursorSyncedReason = "Synced"
	// CursorNotSyncedReason: the watcher is behind, or cannot reach a node; the message says.
	CursorNotSyncedReason = "NotSynced"
	// CursorReorgReason (Warning event): a scanned block left the canonical chain and the
	// cursor was rewound.
	CursorReorgReason = "Reorg"
	// CursorResetReason (Warning event): the node serves another chain than the cursor's (a dev
	// chain restarted from scratch); the cursor starts again at the start block.
	CursorResetReason = "ChainReset"
	// CursorDepositSkippedReason (Warning event): a deposit could not be stored at all.
	CursorDepositSkippedReason = "DepositSkipped"
	// CursorDepositOrphanedReason (Warning event): a deposit arrived for a transfer whose
	// account was deleted; it is recorded in OrphanNamespace, to be refunded.
	CursorDepositOrphanedReason = "DepositOrphaned"
)

// maxMessage is the ChainCursor status message's length limit.
const maxMessage = 512

// Watcher is the deposit watcher of one EVM network, a leader-only manager.Runnable. Each poll
// it reads the head and the newest block at depth (evm.Chain.Tip: with depth finalized, the
// node's finalized block, in the same request; an endpoint whose head has stalled or lags
// behind another is failed over there), scans the blocks that reached depth since the cursor
// (evm.Scanner: one log query per range for all token contracts, reorg checks), records the
// deposits to watched addresses through Sink, and only then advances the cursor it persists in
// the network's ChainCursor status, with the time of its block (status.blockTime, which
// ChainCursor.ScannedPast reads).
//
// The cursor is written when deposits were recorded, when the watcher's sync state or message
// changes, after a reorg rewind, and otherwise at most once per HeartbeatInterval, with
// heartbeatAt: a stopped watcher leaves a stale heartbeat that deposit options read as not
// synced. A restart resumes from the persisted cursor; blocks scanned after the last write are
// scanned again, which records nothing twice (Deposit names are per log). A cursor taken on
// another chain (its chainID or genesisHash differs from the node's) is reset to the start
// block with a Warning event.
type Watcher struct {
	Scanner *evm.Scanner
	Sink    chain.DepositSink
	// Book, when set, is waited for before the first scan.
	Book interface{ WaitForSync(context.Context) bool }
	// Client writes the ChainCursor; Reader reads it from the API server (not a cache).
	Client   client.Client
	Reader   client.Reader
	Recorder events.EventRecorder
	Clock    clock.Clock
	Log      logr.Logger
	// MaxBackoff bounds the wait between attempts while failing. Default 30s.
	MaxBackoff time.Duration
	// Recorded, when set, hears of every step that recorded deposits, with when the poll that
	// found them read the head and when the deposits were stored (benchmarks).
	Recorded func(st evm.Step, polled, stored time.Time)
}

// NeedLeaderElection: one watcher per network in the whole deployment.
func (w *Watcher) NeedLeaderElection() bool { return true }

func (w *Watcher) network() payoutv1.Network { return w.Scanner.Chain.Network }

// Start runs the watcher until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	if w.Clock == nil {
		w.Clock = clock.RealClock{}
	}
	if w.MaxBackoff == 0 {
		w.MaxBackoff = 30 * time.Second
	}
	w.Log = w.Log.WithValues("network", w.network())
	if w.Book != nil && !w.Book.WaitForSync(ctx) {
		return nil
	}
	r := &run{w: w}
	for {
		err := r.setup(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if !sleepFor(ctx, w.Clock, r.failed(ctx, err)) {
			return nil
		}
	}
	w.Log.Info("deposit watcher started", "cursor", r.cur.Block, "depth", w.Scanner.Chain.Config.Confirmations.Describe(), "endpoint", w.Scanner.Chain.Client.Endpoint())
	for {
		if !sleepFor(ctx, w.Clock, r.poll(ctx)) {
			return nil
		}
	}
}

// run is a watcher's state between polls.
type run struct {
	w *Watcher
	cursorState
	chainID int64
	genesis string
	cur     evm.Cursor
	ready   bool // chainID, genesis and cur are known (setup succeeded)
	head    int64
}

// setup loads (or creates) the cursor and checks it belongs to the node's chain.
func (r *run) setup(ctx context.Context) error {
	w := r.w
	if err := r.load(ctx, w.Client, w.Reader, w.network()); err != nil {
		return err
	}
	obj := r.obj
	chainID, genesis, err := w.Scanner.Chain.Identity(ctx)
	if err != nil {
		return err
	}
	r.chainID, r.genesis = chainID, strings.ToLower(genesis.Hex())
	st := obj.Status
	fresh := st.BlockHash == ""
	if !fresh && (st.GenesisHash != r.genesis || st.ChainID != r.chainID) {
		w.event(obj, corev1.EventTypeWarning, CursorResetReason,
			"the node serves chain %d with genesis %s, the cursor was taken on chain %d with genesis %s (a dev chain restarted from scratch?): scanning again from the start block",
			r.chainID, r.genesis, st.ChainID, st.GenesisHash)
		fresh = true
	}
	if fresh {
		head, err := w.Scanner.Chain.HeadNumber(ctx)
		if err != nil {
			return err
		}
		if r.cur, err = w.Scanner.InitCursor(ctx, head); err != nil {
			return err
		}
		r.head = head
	} else {
		r.cur = cursorOf(st)
		r.head = st.Head
	}
	r.ready = true
	r.setState(false, fmt.Sprintf("starting: scanning from block %d", r.cur.Block+1))
	r.pending = true
	return r.persist(ctx)
}

// poll reads the head and scans up to the newest block at depth; it returns how long to wait.
func (r *run) poll(ctx context.Context) time.Duration {
	w := r.w
	polled := time.Now()
	tip, err := w.Scanner.Chain.Tip(ctx)
	if err != nil {
		return r.failed(ctx, err)
	}
	head := tip.Head
	r.head = head
	metrics.ChainHead(w.network(), head, r.cur.Block)
	for ctx.Err() == nil {
		st, err := w.Scanner.StepTo(ctx, r.cur, tip)
		if errors.Is(err, evm.ErrChainMoved) {
			w.Log.V(1).Info("the chain moved during a scan; scanning again", "detail", err.Error())
			return w.Scanner.Chain.Config.PollInterval.Duration
		}
		if err != nil {
			return r.failed(ctx, err)
		}
		if st.Reorg != nil {
			w.Log.Info("reorg: cursor rewound", "detail", st.Reorg.String())
			w.event(r.obj, corev1.EventTypeWarning, CursorReorgReason, "%s", st.Reorg.String())
			r.cur, r.pending = st.Cursor, true
			continue
		}
		if len(st.Deposits) > 0 {
			if err := w.Sink.RecordDeposits(ctx, st.Deposits); err != nil {
				return r.failed(ctx, err)
			}
			r.pending = true
			if w.Recorded != nil {
				w.Recorded(st, polled, time.Now())
			}
			for _, d := range st.Deposits {
				metrics.DepositDetected(d.Network, d.BlockTime, w.Clock.Now())
			}
		}
		r.cur = st.Cursor
		metrics.ChainHead(w.network(), head, r.cur.Block)
		if st.CaughtUp() {
			r.setState(true, "")
		} else {
			r.setState(false, fmt.Sprintf("catching up to block %d", st.Target))
		}
		if err := r.persist(ctx); err != nil {
			w.Log.Error(err, "writing the chain cursor")
		}
		if st.CaughtUp() {
			break
		}
	}
	r.failures = 0
	return w.Scanner.Chain.Config.PollInterval.Duration
}

// failed records a failure (not synced, the error as message) and returns the backoff.
func (r *run) failed(ctx context.Context, err error) time.Duration {
	w := r.w
	backoff := r.failure(err, w.Scanner.Chain.Config.PollInterval.Duration, w.MaxBackoff)
	w.Log.Error(err, "deposit watcher", "attempt", r.failures, "retryIn", backoff)
	if r.obj != nil {
		if perr := r.persist(ctx); perr != nil && ctx.Err() == nil {
			w.Log.Error(perr, "writing the chain cursor")
		}
	}
	return backoff
}

// persist writes the cursor when a change is pending or the heartbeat is due.
func (r *run) persist(ctx context.Context) error {
	w := r.w
	return r.writeIfDue(ctx, w.Client, w.Reader, w.Clock.Now(), w.Scanner.Chain.Config.HeartbeatInterval.Duration, r.fill)
}

// fill writes the run's state into obj's status. Before setup has succeeded the cursor fields
// are left as loaded: a watcher that cannot reach its node at start reports that, and must not
// overwrite the cursor it has not read the chain for.
func (r *run) fill(obj *payoutv1.ChainCursor, now time.Time) {
	st := &obj.Status
	if r.ready {
		st.ChainID, st.GenesisHash = r.chainID, r.genesis
		st.Block, st.BlockHash = r.cur.Block, hashHex(r.cur.Hash)
		st.BlockTime = nil
		if !r.cur.Time.IsZero() {
			t := metav1.NewTime(r.cur.Time)
			st.BlockTime = &t
		}
		st.Recent = make([]payoutv1.RecentBlock, len(r.cur.Recent))
		for i, b := range r.cur.Recent {
			st.Recent[i] = payoutv1.RecentBlock{Number: b.Number, Hash: hashHex(b.Hash)}
		}
		st.Head = r.head
	}
	r.fillState(obj, now, r.w.Scanner.Chain.Client.Endpoint(),
		fmt.Sprintf("scanned to block %d (head %d, depth %s)", st.Block, st.Head, r.w.Scanner.Chain.Config.Confirmations.Describe()))
}

func (w *Watcher) event(obj *payoutv1.ChainCursor, kind, reason, note string, args ...any) {
	if w.Recorder != nil && obj != nil {
		w.Recorder.Eventf(obj, nil, kind, reason, "Watch", note, args...)
	}
}

func cursorOf(st payoutv1.ChainCursorStatus) evm.Cursor {
	c := evm.Cursor{Block: st.Block, Hash: common.HexToHash(st.BlockHash)}
	if st.BlockTime != nil {
		c.Time = st.BlockTime.UTC()
	}
	for _, b := range st.Recent {
		c.Recent = append(c.Recent, evm.BlockRef{Number: b.Number, Hash: common.HexToHash(b.Hash)})
	}
	if len(c.Recent) == 0 || c.Recent[len(c.Recent)-1].Number != c.Block {
		c.Recent = append(c.Recent, evm.BlockRef{Number: c.Block, Hash: c.Hash})
	}
	return c
}

func hashHex(h common.Hash) string { return strings.ToLower(h.Hex()) }
