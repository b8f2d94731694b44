package watch

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// cursorState is what the EVM Watcher and the SolanaWatcher keep alike of their network's
// ChainCursor between polls (each embeds it in its run): the object as last read or written,
// the sync state and message it shows, the failures in a row, and when it was last written, for
// the heartbeat. What the cursor holds of the chain (block, hashes, slots) and when the watcher
// is in sync are each watcher's own.
type cursorState struct {
	obj      *payoutv1.ChainCursor // as last read or written
	synced   bool
	message  string
	failures int
	written  time.Time
	pending  bool // a change that must be written at the next chance
}

// load reads the network's cursor from the API server, creating it when there is none.
func (s *cursorState) load(ctx context.Context, c client.Client, rd client.Reader, network payoutv1.Network) error {
	obj := &payoutv1.ChainCursor{}
	err := rd.Get(ctx, client.ObjectKey{Name: string(network)}, obj)
	if apierrors.IsNotFound(err) {
		obj = &payoutv1.ChainCursor{
			ObjectMeta: metav1.ObjectMeta{Name: string(network)},
			Spec:       payoutv1.ChainCursorSpec{Network: network},
		}
		err = c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			err = rd.Get(ctx, client.ObjectKey{Name: string(network)}, obj)
		}
	}
	if err != nil {
		return fmt.Errorf("chain cursor %s: %w", network, err)
	}
	s.obj = obj
	return nil
}

// resumed reports whether the loaded cursor was in sync a moment ago: synced, with a heartbeat
// younger than within. A watcher that takes such a cursor over (payoutd restarted, a rolling
// update, a new leader) goes on from it in sync, and its first poll says how it stands: a
// "starting" state written first made every deposit option of the network unavailable, and
// refused transfers, on every restart until that poll.
func (s *cursorState) resumed(now time.Time, within time.Duration) bool {
	st := s.obj.Status
	return st.Synced && st.HeartbeatAt != nil && now.Sub(st.HeartbeatAt.Time) < within
}

func (s *cursorState) setState(synced bool, message string) {
	message = truncate(message, maxMessage)
	if synced != s.synced || message != s.message {
		s.synced, s.message, s.pending = synced, message, true
	}
}

// failure counts a failure in a row, shows err as the message (not synced), and returns the
// backoff before the next attempt: the poll interval doubled per failure, at most maxBackoff.
func (s *cursorState) failure(err error, poll, maxBackoff time.Duration) time.Duration {
	s.failures++
	s.setState(false, err.Error())
	return min(poll<<min(s.failures, 10), maxBackoff)
}

// writeIfDue writes the cursor, its status filled by fill, when a change is pending or the
// heartbeat is due. The write is a merge patch of what fill changed, never a whole status: a
// field of a newer release (after a rollback to this one) is not in our types, and an update
// would drop it (docs/operations/upgrade.md). The patch carries the resourceVersion it was
// computed from, as the update did.
func (s *cursorState) writeIfDue(ctx context.Context, c client.Client, rd client.Reader, now time.Time, heartbeat time.Duration,
	fill func(*payoutv1.ChainCursor, time.Time)) error {
	if !s.pending && now.Sub(s.written) < heartbeat {
		return nil
	}
	obj := s.obj.DeepCopy()
	fill(obj, now)
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(s.obj, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		// someone else wrote the object (a label, a kubectl edit): ours is the status
		fresh := &payoutv1.ChainCursor{}
		if err = rd.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err == nil {
			obj = fresh.DeepCopy()
			fill(obj, now)
			err = c.Status().Patch(ctx, obj, client.MergeFromWithOptions(fresh, client.MergeFromWithOptimisticLock{}))
		}
	}
	if err != nil {
		return err
	}
	s.obj, s.written, s.pending = obj, now, false
	return nil
}

// fillState writes the sync state, the heartbeat, the endpoint and the Ready condition into
// obj's status; syncedMessage is the condition's message while in sync (else the state's
// message is).
func (s *cursorState) fillState(obj *payoutv1.ChainCursor, now time.Time, endpoint, syncedMessage string) {
	st := &obj.Status
	st.Synced, st.Message = s.synced, s.message
	t := metav1.NewTime(now)
	st.HeartbeatAt = &t
	st.Endpoint = endpoint
	reason, status, msg := CursorSyncedReason, metav1.ConditionTrue, syncedMessage
	if !s.synced {
		reason, status, msg = CursorNotSyncedReason, metav1.ConditionFalse, s.message
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: payoutv1.ReadyCondition, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.Generation,
	})
	st.ObservedGeneration = obj.Generation
}

// sleepFor waits d on c; false when ctx ended first.
func sleepFor(ctx context.Context, c clock.Clock, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
