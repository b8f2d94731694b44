package apiserver

import (
	"context"
	"slices"
	"sync"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// bookEntry is a recipient's place in the list of spec 4.4: oldest first, by creation time
// (seconds, as the API server stores it) and then by id.
type bookEntry struct {
	created int64
	id      int64
}

func (a bookEntry) compare(b bookEntry) int {
	switch {
	case a.created != b.created:
		return cmpInt64(a.created, b.created)
	default:
		return cmpInt64(a.id, b.id)
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func entryOf(rc *payoutv1.Recipient) bookEntry {
	return bookEntry{created: rc.CreationTimestamp.Unix(), id: rc.Spec.ID}
}

// recipientBook holds, per account namespace, the list order of the active recipients: 16 bytes
// a recipient, fed by the informer's events. A page of GET /api/payouts/recipients is a binary
// search and a slice of it, and only the page's recipients are read (and copied) from the cache:
// a request costs the same with a thousand recipients as with a hundred thousand, where listing
// the namespace copied every recipient and sorted them all.
type recipientBook struct {
	mu      sync.Mutex
	byNS    map[string]*nsBook
	changed changeSignal
	// hasSynced reports whether the informer's first list is in (the handler's registration).
	hasSynced func() bool
}

type nsBook struct {
	entries []bookEntry
	// unsorted: an entry went in out of order (the informer's first list comes in name order,
	// which for random ids is none); sorted once, on the next read.
	unsorted bool
}

func newRecipientBook() *recipientBook {
	return &recipientBook{byNS: map[string]*nsBook{}, changed: newChangeSignal()}
}

// register feeds the book from informer's events.
func (b *recipientBook) register(informer eventSource) error {
	reg, err := informer.AddEventHandler(bookEvents(b.update))
	if err != nil {
		return err
	}
	b.hasSynced = reg.HasSynced
	return nil
}

// synced reports whether the book has taken in the informer's first list.
func (b *recipientBook) synced() bool { return b.hasSynced != nil && b.hasSynced() }

// update moves a recipient from old to now (either nil: added or deleted).
func (b *recipientBook) update(old, now *payoutv1.Recipient) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old != nil && !old.Spec.Deactivated {
		b.removeLocked(old.Namespace, entryOf(old))
	}
	if now != nil && !now.Spec.Deactivated {
		b.addLocked(now.Namespace, entryOf(now))
	}
	b.changed.fire()
}

func (b *recipientBook) addLocked(ns string, e bookEntry) {
	nb := b.byNS[ns]
	if nb == nil {
		nb = &nsBook{}
		b.byNS[ns] = nb
	}
	n := len(nb.entries)
	if nb.unsorted || n == 0 || nb.entries[n-1].compare(e) < 0 {
		// the usual case, a new recipient, is the newest
		nb.unsorted = nb.unsorted || (n > 0 && nb.entries[n-1].compare(e) > 0)
		nb.entries = append(nb.entries, e)
		return
	}
	i, found := slices.BinarySearchFunc(nb.entries, e, bookEntry.compare)
	if !found {
		nb.entries = slices.Insert(nb.entries, i, e)
	}
}

func (b *recipientBook) removeLocked(ns string, e bookEntry) {
	nb := b.sortedLocked(ns)
	if nb == nil {
		return
	}
	if i, found := slices.BinarySearchFunc(nb.entries, e, bookEntry.compare); found {
		nb.entries = slices.Delete(nb.entries, i, i+1)
	}
	if len(nb.entries) == 0 {
		delete(b.byNS, ns)
	}
}

func (b *recipientBook) sortedLocked(ns string) *nsBook {
	nb := b.byNS[ns]
	if nb != nil && nb.unsorted {
		slices.SortFunc(nb.entries, bookEntry.compare)
		nb.entries = slices.CompactFunc(nb.entries, func(x, y bookEntry) bool { return x == y })
		nb.unsorted = false
	}
	return nb
}

// page is the ids of at most limit active recipients of ns that follow after in list order (from
// the first when after is nil), and whether more follow them.
func (b *recipientBook) page(ns string, after *bookEntry, limit int) (ids []int64, more bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	nb := b.sortedLocked(ns)
	if nb == nil {
		return nil, false
	}
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(nb.entries, *after, bookEntry.compare)
		if start < len(nb.entries) && nb.entries[start] == *after {
			start++
		}
	}
	end := min(start+limit, len(nb.entries))
	ids = make([]int64, 0, end-start)
	for _, e := range nb.entries[start:end] {
		ids = append(ids, e.id)
	}
	return ids, end < len(nb.entries)
}

// hasLocked tells whether the book lists e in ns; b.mu is held.
func (b *recipientBook) hasLocked(ns string, e bookEntry) bool {
	nb := b.sortedLocked(ns)
	if nb == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(nb.entries, e, bookEntry.compare)
	return found
}

// await waits (briefly, 2 s at most) until the book lists rc as the cache holds it: active and
// listed, or not. The informer updates the cache before it tells its handlers, so a write the
// cache already shows (awaitCached) reaches the book a moment later.
func (b *recipientBook) await(ctx context.Context, rc *payoutv1.Recipient, listed bool) {
	e := entryOf(rc)
	awaitBook(ctx, func() (<-chan struct{}, bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.changed.next(), b.hasLocked(rc.Namespace, e) == listed
	})
}
