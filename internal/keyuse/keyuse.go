// Package keyuse records when each API key was last used: the "last used" of the dashboard's
// developer area and of `kubectl payout apikey list`.
//
// A busy key authenticates many requests a second, so a write per request would multiply the
// API server's load by the request rate. The Recorder writes a key's
// payoutv1.APIKeyLastUsedAnnotation at most once per interval (a minute in payoutd): a use
// within the interval of the last one this replica wrote, or of the time the cached key already
// shows (another replica's write), is not written. Writes leave the request path: Touch only
// queues, under a lock and without I/O, and one goroutine (Run) patches what was queued, so
// however many requests a key serves, its writes are coalesced into one. The time shown is thus
// accurate to the interval; with N replicas a key gets at most N writes per interval, usually
// one (the others see it in their caches first).
//
// The writes are paced too (DefaultWrites a second per replica): they share the API server, and
// the service account's priority level, with the controllers' writes that move money, so a
// burst of keys used for the first time in their interval (a deploy's first minute, many
// integrators polling with keys of their own) must not become a burst of patches. A key whose
// write waits its turn stays queued, coalesced with its later uses: its last use is then
// recorded late, never lost while the queue has room.
package keyuse

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// DefaultInterval is the granularity of last used.
const DefaultInterval = time.Minute

// DefaultWrites is the most last-use writes a Recorder makes a second: 600 keys a minute, each
// recorded within its interval; more keys active at once are recorded later.
const DefaultWrites = 10

// maxQueued bounds the keys waiting for their write: past it a use goes unrecorded (last used
// is informational; a request must never wait for it or grow memory without bound).
const maxQueued = 10000

// writeTimeout bounds one patch: a slow API server delays the record, not the next ones.
const writeTimeout = 5 * time.Second

// Recorder queues and writes the keys' last use. It is safe for concurrent use.
type Recorder struct {
	c        client.Writer
	interval time.Duration
	pace     *rate.Limiter
	log      logr.Logger

	mu sync.Mutex
	// queued are the uses to write, by key id; written is when this replica last queued a
	// write of each key (*atomic.Int64 of Unix nanoseconds by key id), kept for an interval:
	// every request of a busy key reads it, so a use it covers costs a load, not the lock.
	queued  map[string]time.Time
	written sync.Map
	wake    chan struct{}
}

// New is a Recorder writing through c at most once per interval per key (0: DefaultInterval)
// and at most writes patches a second (0: DefaultWrites), a second's worth at once.
func New(c client.Writer, interval time.Duration, writes float64, log logr.Logger) *Recorder {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if writes <= 0 {
		writes = DefaultWrites
	}
	return &Recorder{c: c, interval: interval, pace: rate.NewLimiter(rate.Limit(writes), max(1, int(writes))), log: log,
		queued: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// Touch records that key authenticated a request at now. It does no I/O: a use the interval
// already covers is dropped, another is queued for Run.
func (r *Recorder) Touch(key *payoutv1.APIKey, now time.Time) {
	if r.writtenWithin(key.Name, now) {
		return
	}
	if last, ok := key.LastUsed(); ok && now.Sub(last) < r.interval {
		return
	}
	r.mu.Lock()
	if r.writtenWithin(key.Name, now) {
		r.mu.Unlock()
		return
	}
	if len(r.queued) >= maxQueued {
		r.mu.Unlock()
		return
	}
	r.queued[key.Name] = now
	w, _ := r.written.LoadOrStore(key.Name, new(atomic.Int64))
	w.(*atomic.Int64).Store(now.UnixNano())
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // a flush is already due: it takes this one too
	}
}

// writtenWithin reports whether this replica queued a write of the key within the interval
// before now.
func (r *Recorder) writtenWithin(id string, now time.Time) bool {
	w, ok := r.written.Load(id)
	return ok && now.Sub(time.Unix(0, w.(*atomic.Int64).Load())) < r.interval
}

// Run writes what Touch queued until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.flush(ctx)
	}
}

// flush writes the queued uses, one merge patch of the annotation each, taking them from the
// queue one at a time as the pace lets it: a key waiting its turn stays queued, so that its
// later uses are coalesced into its one write and maxQueued bounds all that waits. A failed
// write is logged and not retried: the key's next use after the interval queues it again.
func (r *Recorder) flush(ctx context.Context) {
	r.mu.Lock()
	var latest time.Time
	for _, at := range r.queued {
		if at.After(latest) {
			latest = at
		}
	}
	// under the lock, so that a write Touch queues meanwhile is not dropped with its entry
	for id, w := range r.written.Range {
		if latest.Sub(time.Unix(0, w.(*atomic.Int64).Load())) >= r.interval {
			r.written.Delete(id)
		}
	}
	r.mu.Unlock()
	for {
		if err := r.pace.Wait(ctx); err != nil {
			return // stopping: what is left goes unrecorded, as on any stop
		}
		id, at, ok := r.next()
		if !ok {
			return
		}
		if err := r.write(ctx, id, at); err != nil && ctx.Err() == nil {
			r.log.Error(err, "recording an API key's last use", "keyId", id)
		}
	}
}

// next takes a key and its latest use off the queue; ok is false when the queue is empty.
func (r *Recorder) next() (id string, at time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at = range r.queued {
		delete(r.queued, id)
		return id, at, true
	}
	return "", time.Time{}, false
}

func (r *Recorder) write(ctx context.Context, id string, at time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		payoutv1.APIKeyLastUsedAnnotation: at.UTC().Format(time.RFC3339)}}})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	// a merge patch of the annotation alone, without the resourceVersion: it cannot conflict
	// with a revocation or the controller's status, and a deleted key is not made again
	err = r.c.Patch(wctx, &payoutv1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: id}}, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
