package apiserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// transferBook holds the informer cache's transfers by id, each with its lookup answer (spec
// 4.15) encoded once per version, fed by the informer's events. It is what GET transfer reads.
//
// Why a book of our own and not the cache's index: a lookup of the cache by id went through the
// field index (a map to a set of keys), the store (a map by namespace/name), the object, and then
// a bounded LRU of encoded answers keyed by uid and resourceVersion; some fifteen scattered
// reads of memory per request. Polling callers read transfers at random among thousands, so each
// of those reads missed the CPU's caches, and evicted what the rest of the request needed: with
// 10 000 stored transfers a GET transfer ran at 0.77 of the bare handler where the same read of
// one transfer ran at 0.89 (docs/benchmarks.md, "GET transfer from a book of its own"). Here a
// lookup is one map read and the answer's bytes.
//
// The informer updates its cache before it tells its handlers, so the book can be a moment
// behind the cache: a transfer the book does not hold yet is read from the cache (findTransfer),
// and a request that updated a transfer waits for the book as well as the cache (awaitCached),
// so that its caller's next lookup sees the write. A create files its transfer in the book
// itself, as the API server stored it, and answers without waiting for the informer
// (createTransfer).
type transferBook struct {
	mu      sync.RWMutex
	byID    map[string]*bookTransfer
	changed changeSignal
}

// bookTransfer is one version of a cached transfer and its lookup answers, encoded at the first
// read that wants each: the owner's, and the masked one another account's key gets.
type bookTransfer struct {
	t             *payoutv1.Transfer // the cache's object: read it, never change it
	plain, masked atomic.Pointer[[]byte]
}

func newTransferBook() *transferBook {
	return &transferBook{byID: map[string]*bookTransfer{}, changed: newChangeSignal()}
}

// register feeds the book from informer's events.
func (b *transferBook) register(informer eventSource) error {
	_, err := informer.AddEventHandler(bookEvents(func(old, now *payoutv1.Transfer) {
		if now != nil {
			b.put(now)
		} else {
			b.remove(old)
		}
	}))
	return err
}

// put files t under its id, unless the book holds this version of it or a newer one: a create
// files the transfer as the API server stored it (createTransfer), and the informer's event of
// that version comes after; the informer's periodic resync hands the same version again. A
// version kept keeps its encoded answers.
func (b *transferBook) put(t *payoutv1.Transfer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.byID[t.Name]; e != nil && e.t.UID == t.UID && !newerVersion(t, e.t) {
		return
	}
	b.byID[t.Name] = &bookTransfer{t: t}
	b.changed.fire()
}

// remove drops t, unless its id already names a newer object (ids are global: a transfer's
// name is its id in whatever namespace).
func (b *transferBook) remove(t *payoutv1.Transfer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.byID[t.Name]; e != nil && e.t.UID == t.UID {
		delete(b.byID, t.Name)
		b.changed.fire()
	}
}

// get is the transfer with id, or nil when the book does not hold it.
func (b *transferBook) get(id string) *bookTransfer {
	b.mu.RLock()
	e := b.byID[id]
	b.mu.RUnlock()
	return e
}

// body is the encoded `{"transfer": ...}` answer of the transfer, masked for a key of another
// account. Two readers of a new version may both encode it; either's bytes are the same.
func (e *bookTransfer) body(masked bool) []byte {
	slot := &e.plain
	if masked {
		slot = &e.masked
	}
	if b := slot.Load(); b != nil {
		return *b
	}
	b := lookupBody(e.t, masked)
	slot.Store(&b)
	return b
}

// lookupBody encodes the `{"transfer": ...}` answer of t (spec 4.15), masked for a key of
// another account.
func lookupBody(t *payoutv1.Transfer, masked bool) []byte {
	b, err := json.Marshal(map[string]any{"transfer": transferView(t)})
	if err == nil && masked {
		b, err = maskLookup(b)
	}
	if err != nil {
		return []byte(`{"error":"internal error"}` + "\n")
	}
	return append(b, '\n')
}

// await waits (briefly, 2 s at most) until the book holds t as written or newer. The informer
// updates the cache before it tells its handlers, so a write the cache already shows
// (awaitCached) reaches the book a moment later.
func (b *transferBook) await(ctx context.Context, t *payoutv1.Transfer) {
	awaitBook(ctx, func() (<-chan struct{}, bool) {
		b.mu.RLock()
		changed, e := b.changed.next(), b.byID[t.Name]
		b.mu.RUnlock()
		return changed, e != nil && e.t.UID == t.UID && !newerVersion(t, e.t)
	})
}
