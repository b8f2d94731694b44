package apiserver

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// quotaTally counts what every account holds under each of its caps (an open transfer of a
// method, an active recipient, a claim), kept by the informers' events, so that a cap's check
// (quotaSlots.reserve) reads a number.
//
// Why not the cache's field index, as before: client-go's IndexKeys returns an index's keys
// sorted, so a count cost O(n log n) for an account holding n, on every create, under the lock
// all creates of the replica take to reserve their place. With a few hundred transfers an
// account it was already 5 % of the facade's process under the create load; an account at its
// default caps holds thousands (docs/benchmarks.md, "Creates: the cap's count and the floor's
// transfer").
//
// The tally follows the cache a moment behind (an informer tells its handlers after it has
// updated its store), so a create holds its place until the tally counts its object
// (Server.freeWhenCounted), not only until the cache shows it; and a request that wrote or
// deleted a counted object waits for the tally as for the cache (awaitCached, awaitGone), so
// that its caller's next create is judged on what it wrote.
type quotaTally struct {
	mu sync.Mutex
	// held is the count of each account's cap; slotOf is where each object is counted, by UID
	// (what a later event of the object, or its delete, takes back)
	held    map[quotaSlot]int
	slotOf  map[types.UID]quotaSlot
	changed changeSignal
}

func newQuotaTally() *quotaTally {
	return &quotaTally{held: map[quotaSlot]int{}, slotOf: map[types.UID]quotaSlot{}, changed: newChangeSignal()}
}

// quotaSlotOf is the cap obj counts under, and whether it counts under one: a transfer that has
// not ended (transfer.Ended) under its method's cap, an active recipient, a claim under its
// holder's account (the claim's key was claimed for that account's transfer or recipient).
func quotaSlotOf(obj client.Object) (quotaSlot, bool) {
	switch o := obj.(type) {
	case *payoutv1.Transfer:
		return quotaSlot{o.Namespace, quotaOfMethod(o.Spec.Method)}, !transfer.Ended(o)
	case *payoutv1.Recipient:
		return quotaSlot{o.Namespace, quotaActiveRecipients}, !o.Spec.Deactivated
	case *payoutv1.Claim:
		return quotaSlot{o.Spec.Holder.Namespace, quotaClaims}, true
	}
	return quotaSlot{}, false
}

// registerTally feeds t from the events of an informer of T; the registration says when the
// informer's objects at start have all been counted.
func registerTally[T any, PT interface {
	*T
	client.Object
}](t *quotaTally, informer eventSource) (func() bool, error) {
	reg, err := informer.AddEventHandler(bookEvents(func(old, now *T) {
		if now != nil {
			t.put(PT(now))
		} else {
			t.remove(PT(old))
		}
	}))
	if err != nil {
		return nil, err
	}
	return reg.HasSynced, nil
}

// put counts obj as it is now, in place of where its earlier version was counted.
func (t *quotaTally) put(obj client.Object) {
	slot, counts := quotaSlotOf(obj)
	t.mu.Lock()
	defer t.mu.Unlock()
	was, wasCounted := t.slotOf[obj.GetUID()]
	if !wasCounted && !counts || wasCounted && counts && was == slot {
		return // a resync, or a change that moves nothing
	}
	if wasCounted {
		t.drop(obj.GetUID(), was)
	}
	if counts {
		t.held[slot]++
		t.slotOf[obj.GetUID()] = slot
	}
	t.changed.fire()
}

// remove takes a deleted object out of the count.
func (t *quotaTally) remove(obj client.Object) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if was, ok := t.slotOf[obj.GetUID()]; ok {
		t.drop(obj.GetUID(), was)
		t.changed.fire()
	}
}

// drop takes uid out of slot; t.mu is held.
func (t *quotaTally) drop(uid types.UID, slot quotaSlot) {
	delete(t.slotOf, uid)
	if t.held[slot]--; t.held[slot] <= 0 {
		delete(t.held, slot)
	}
}

// count is what the account holds under one cap.
func (t *quotaTally) count(slot quotaSlot) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[slot]
}

// await waits (briefly, as awaitBook) until the tally counts obj as it is written, counted if it
// counts under a cap and not if not, or, with gone, until it no longer counts obj (deleted).
// Objects of the kinds it does not count are never counted, so they return at once.
func (t *quotaTally) await(ctx context.Context, obj client.Object, gone bool) {
	_, counts := quotaSlotOf(obj)
	counts = counts && !gone
	awaitBook(ctx, func() (<-chan struct{}, bool) {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, counted := t.slotOf[obj.GetUID()]
		return t.changed.next(), counted == counts
	})
}
