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
	// chain restarted from scratch, a chain id changed); the cursor starts again from the block
	// of the oldest transfer watched, and status.gap shows the blocks to scan again.
	CursorResetReason = "ChainReset"
	// CursorGapReason (Warning event): the cursor had no scanned block while transfers were
	// watched (it was deleted, or lost in a restore); it starts from the block of the oldest
	// transfer watched, and status.gap shows the blocks to scan again.
	CursorGapReason = "Gap"
	// CursorDisagreementReason (Warning event): two RPC endpoints answered differently about
	// blocks at depth; nothing of them is credited until they agree (evm.ErrDisagreement).
	CursorDisagreementReason = "EndpointsDisagree"
	// CursorDepositSkippedReason (Warning event): a deposit could not be stored at all.
	CursorDepositSkippedReason = "DepositSkipped"
	// CursorDepositOrphanedReason (Warning event): a deposit arrived for a transfer whose
	// account was deleted; it is recorded in OrphanNamespace, to be refunded.
	CursorDepositOrphanedReason = "DepositOrphaned"
)

// restartSlack is how long before the oldest watched transfer's creation a watcher that lost its
// place restarts: the creation time is the API server's clock, block times are the chain's.
const restartSlack = 10 * time.Minute

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
// scanned again, which records nothing twice (Deposit names are per log).
//
// A watcher never skips a block where a watched deposit could be: before it scans, the token
// contracts must pass evm.Chain.CheckTokens (decimals, code hash); and a cursor without a
// scanned block (new, deleted, lost in a restore) or taken on another chain (its chainID or
// genesisHash differs from the node's) restarts from the block of the oldest transfer in the
// book (BlockAt its creation, less restartSlack), or startBlock when that is earlier, or the
// head when the book is empty, with a Warning event; the blocks from there to the newest block
// at depth are the cursor's status.gap, counted by payout_chain_gap_blocks until they are
// scanned. With more than one endpoint every range is cross-checked (evm.Scanner.StepTo); a
// disagreement credits nothing, is shown in the cursor's message with a Warning event, and is
// asked again.
type Watcher struct {
	Scanner *evm.Scanner
	Sink    chain.DepositSink
	// Book, when set, is waited for before the first scan, and says where a cursor that lost its
	// place restarts.
	Book Transfers
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

// Transfers is what a Watcher asks of the address book besides lookups: whether it holds every
// transfer yet, and the creation time of the oldest one watched on a network (AddressBook).
type Transfers interface {
	WaitForSync(context.Context) bool
	Oldest(payoutv1.Network) (time.Time, bool)
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
	gap     *payoutv1.ChainGap // blocks to scan again, nil when none
	ready   bool               // chainID, genesis and cur are known (setup succeeded)
	head    int64
	// disagreement is the text of the last endpoints' disagreement reported in an event.
	disagreement string
}

// setup checks the token contracts, loads (or creates) the cursor and checks it belongs to the
// node's chain; a cursor that lost its place restarts where no watched deposit can be skipped.
func (r *run) setup(ctx context.Context) error {
	w := r.w
	if err := r.load(ctx, w.Client, w.Reader, w.network()); err != nil {
		return err
	}
	if err := w.Scanner.Chain.CheckTokens(ctx); err != nil {
		return err
	}
	obj := r.obj
	chainID, genesis, err := w.Scanner.Chain.Identity(ctx)
	if err != nil {
		return err
	}
	r.chainID, r.genesis = chainID, strings.ToLower(genesis.Hex())
	st := obj.Status
	lost, reason := st.BlockHash == "", "the cursor had no scanned block (new, deleted, or lost in a restore)"
	event := CursorGapReason
	if !lost && (st.GenesisHash != r.genesis || st.ChainID != r.chainID) {
		lost, event = true, CursorResetReason
		reason = fmt.Sprintf("the node serves chain %d with genesis %s, the cursor was taken on chain %d with genesis %s (a dev chain restarted from scratch, or the chain id changed)",
			r.chainID, r.genesis, st.ChainID, st.GenesisHash)
	}
	if lost {
		tip, err := w.Scanner.Chain.Tip(ctx)
		if err != nil {
			return err
		}
		from, why, err := r.restart(ctx, tip.Head)
		if err != nil {
			return err
		}
		if r.cur, err = w.Scanner.CursorBefore(ctx, from); err != nil {
			return err
		}
		r.head, r.gap = tip.Head, nil
		if from < tip.Target {
			// the blocks at depth when the watcher restarted: those above are scanned as usual
			r.gap = &payoutv1.ChainGap{From: from, To: tip.Target, Reason: truncate(reason+"; "+why, maxMessage), Since: metav1.NewTime(w.Clock.Now())}
			w.event(obj, corev1.EventTypeWarning, event, "%s: scanning blocks %d..%d again (%s); deposits in them are recorded as they are scanned",
				reason, from, tip.Target, why)
		} else if event == CursorResetReason {
			w.event(obj, corev1.EventTypeWarning, event, "%s: scanning from block %d (%s)", reason, from, why)
		}
	} else {
		r.cur = cursorOf(st)
		r.head = st.Head
		r.gap = st.Gap.DeepCopy()
	}
	r.ready = true
	r.gapScanned()
	if !lost && r.gap == nil && r.resumed(w.Clock.Now(), w.Scanner.Chain.Config.StallAfter.Duration) {
		r.setState(true, "")
	} else {
		r.setState(false, fmt.Sprintf("starting: scanning from block %d", r.cur.Block+1))
	}
	r.pending = true
	return r.persist(ctx)
}

// restart is the first block a cursor that lost its place scans, and why there: the block of
// the oldest transfer the book watches on the network (the newest block mined restartSlack
// before its creation, read by evm.Chain.BlockAt), or startBlock when that is earlier, or the
// head when neither is known (nothing is watched, so nothing can be skipped).
func (r *run) restart(ctx context.Context, head int64) (int64, string, error) {
	w := r.w
	from, why := head, "no transfer is watched: from the head"
	if sb := w.Scanner.Chain.Config.StartBlock; sb != nil {
		from, why = *sb, fmt.Sprintf("from startBlock %d", *sb)
	}
	if w.Book == nil {
		return from, why, nil
	}
	oldest, ok := w.Book.Oldest(w.network())
	if !ok {
		return from, why, nil
	}
	before, err := w.Scanner.Chain.BlockAt(ctx, oldest.Add(-restartSlack), head)
	if err != nil {
		return 0, "", fmt.Errorf("finding the block of the oldest transfer watched (created %s): %w", oldest.UTC().Format(time.RFC3339), err)
	}
	if before+1 < from {
		from, why = before+1, fmt.Sprintf("from block %d, mined %s before the oldest transfer watched was created (%s)",
			before+1, restartSlack, oldest.UTC().Format(time.RFC3339))
	}
	return from, why, nil
}

// gapScanned clears the gap once the cursor has scanned through it, and records what is left of
// it.
func (r *run) gapScanned() {
	w := r.w
	if r.gap != nil && r.cur.Block >= r.gap.To {
		w.Log.Info("gap scanned", "from", r.gap.From, "to", r.gap.To, "reason", r.gap.Reason)
		r.gap, r.pending = nil, true
	}
	var left int64
	if r.gap != nil {
		left = r.gap.To - r.cur.Block
	}
	metrics.ChainGap(w.network(), left)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
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
		if errors.Is(err, evm.ErrChainMoved) || errors.Is(err, evm.ErrSecondBehind) {
			w.Log.V(1).Info("the chain moved during a scan, or the endpoint asked for a second opinion has not reached it yet; scanning again", "detail", err.Error())
			return w.Scanner.Chain.Config.PollInterval.Duration
		}
		if errors.Is(err, evm.ErrDisagreement) && err.Error() != r.disagreement {
			r.disagreement = err.Error()
			w.event(r.obj, corev1.EventTypeWarning, CursorDisagreementReason, "%s", err.Error())
		}
		if err != nil {
			return r.failed(ctx, err)
		}
		r.disagreement = ""
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
		r.gapScanned()
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
		st.Gap = r.gap.DeepCopy()
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
