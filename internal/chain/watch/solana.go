package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/solana"
)

// SolanaWatcher follows the Solana network's node and keeps its ChainCursor in step, which is
// what the network's deposit options read: available while the watcher is in sync (an endpoint
// answers, is healthy, and its slot at the configured commitment advances), unavailable
// otherwise. It records no deposits. With today's rules deposits reach the service on Solana
// only as v2 transfers, each confirmed by its signature and looked up by the transfer
// controller (Chains.LookupTx); v1 deposit addresses are derived from a secp256k1 key and exist
// on EVM networks and Tron only, so there is no Solana address to watch. Watching the platform
// address (getSignaturesForAddress of its token account) would find only deposits no transfer
// claims: it is not done.
//
// The cursor of solana holds: genesisHash (the cluster), block and blockHash (the newest slot at
// the commitment and its block's hash), head (the newest processed slot), synced, a heartbeat
// and the endpoint. It is written when the sync state or message changes and otherwise at most
// once per HeartbeatInterval; the slots then are those of the last write.
type SolanaWatcher struct {
	Chain *solana.Chain
	// Client writes the ChainCursor; Reader reads it from the API server (not a cache).
	Client   client.Client
	Reader   client.Reader
	Recorder events.EventRecorder
	Clock    clock.Clock
	Log      logr.Logger
	// MaxBackoff bounds the wait between attempts while failing. Default 30s.
	MaxBackoff time.Duration
	// StallAfter is how long the slot at the commitment may stay still before the node counts
	// as stuck (a slot lasts about 400 ms). Default 15 poll intervals, at least 30s.
	StallAfter time.Duration
}

// NeedLeaderElection: one watcher per network in the whole deployment.
func (w *SolanaWatcher) NeedLeaderElection() bool { return true }

func (w *SolanaWatcher) network() payoutv1.Network { return w.Chain.Network }

// Start runs the watcher until ctx ends.
func (w *SolanaWatcher) Start(ctx context.Context) error {
	if w.Clock == nil {
		w.Clock = clock.RealClock{}
	}
	if w.MaxBackoff == 0 {
		w.MaxBackoff = 30 * time.Second
	}
	poll := w.Chain.Config.PollInterval.Duration
	if w.StallAfter == 0 {
		w.StallAfter = max(30*time.Second, 15*poll)
	}
	w.Log = w.Log.WithValues("network", w.network())
	r := &solanaRun{w: w}
	for {
		err := r.start(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		w.Log.Error(err, "chain cursor")
		if !sleepFor(ctx, w.Clock, w.MaxBackoff) {
			return nil
		}
	}
	w.Log.Info("solana watcher started", "commitment", w.Chain.Config.Commitment)
	for {
		if !sleepFor(ctx, w.Clock, r.poll(ctx)) {
			return nil
		}
	}
}

// solanaRun is the watcher's state between polls.
type solanaRun struct {
	w *SolanaWatcher
	cursorState
	status solana.Status
	known  bool // status holds a successful read
	// the slot at the commitment, and when it last moved
	slot      int64
	slotMoved time.Time
}

// start reads (or creates) the cursor.
func (r *solanaRun) start(ctx context.Context) error {
	w := r.w
	if err := r.load(ctx, w.Client, w.Reader, w.network()); err != nil {
		return err
	}
	if r.resumed(w.Clock.Now(), w.StallAfter) {
		r.setState(true, "")
	} else {
		r.setState(false, "starting")
	}
	return nil
}

// poll reads the node and writes the cursor when due; it returns how long to wait.
func (r *solanaRun) poll(ctx context.Context) time.Duration {
	w := r.w
	poll := w.Chain.Config.PollInterval.Duration
	st, err := w.Chain.Status(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return poll
		}
		backoff := r.failure(err, poll, w.MaxBackoff)
		w.Log.Error(err, "solana watcher", "attempt", r.failures, "retryIn", backoff)
		r.persist(ctx)
		return backoff
	}
	r.failures = 0
	now := w.Clock.Now()
	if prev := r.obj.Status.GenesisHash; prev != "" && prev != st.Genesis && (!r.known || r.status.Genesis != st.Genesis) {
		w.event(corev1.EventTypeWarning, CursorResetReason,
			"the node serves the cluster of genesis %s, the cursor was taken on genesis %s (a test validator restarted from scratch?)", st.Genesis, prev)
	}
	if !r.known || st.Slot != r.slot {
		r.slot, r.slotMoved = st.Slot, now
	}
	r.status, r.known = st, true
	if still := now.Sub(r.slotMoved); still > w.StallAfter {
		r.setState(false, fmt.Sprintf("the %s slot has stayed at %d for %s: the node is stuck", w.Chain.Config.Commitment, st.Slot, still.Round(time.Second)))
	} else {
		r.setState(true, "")
	}
	r.persist(ctx)
	return poll
}

// persist writes the cursor when a change is pending or the heartbeat is due; a failure is
// logged (the next poll tries again).
func (r *solanaRun) persist(ctx context.Context) {
	w := r.w
	err := r.writeIfDue(ctx, w.Client, w.Reader, w.Clock.Now(), w.Chain.Config.HeartbeatInterval.Duration, r.fill)
	if err != nil && ctx.Err() == nil {
		w.Log.Error(err, "writing the chain cursor")
	}
}

// fill writes the run's state into obj's status. Before the node was read the slots are left as
// loaded.
func (r *solanaRun) fill(obj *payoutv1.ChainCursor, now time.Time) {
	st := &obj.Status
	if r.known {
		st.ChainID = 0
		st.GenesisHash = r.status.Genesis
		st.Block, st.BlockHash = r.status.Slot, r.status.Blockhash
		st.Recent = nil
		st.Head = r.status.Head
	}
	r.fillState(obj, now, r.w.Chain.Client.Endpoint(),
		fmt.Sprintf("%s slot %d (processed %d)", r.w.Chain.Config.Commitment, st.Block, st.Head))
}

func (w *SolanaWatcher) event(kind, reason, note string, args ...any) {
	if w.Recorder == nil {
		return
	}
	obj := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(w.network())}}
	w.Recorder.Eventf(obj, nil, kind, reason, "Watch", note, args...)
}
