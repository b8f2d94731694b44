package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// bookVersion is transfer id of namespace ns at resourceVersion rv, with uid.
func bookVersion(ns, id, uid, rv string, mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	t := testgen.Transfer(ns, id, mods...)
	t.UID, t.ResourceVersion = types.UID(uid), rv
	return t
}

func TestTransferBookAnswersTheVersionItWasLastTold(t *testing.T) {
	const ns, id = "payout-acct-acme", "b00c0000000000000000000b"
	b := newTransferBook()
	if b.get(id) != nil {
		t.Fatal("an empty book holds a transfer")
	}
	v1 := bookVersion(ns, id, "u1", "10")
	b.put(v1)
	first := b.get(id).body(false)
	if !bytes.Contains(first, []byte(`"status":"ready_to_process"`)) || !bytes.HasSuffix(first, []byte("}\n")) {
		t.Fatalf("answer of a new transfer: %s", first)
	}
	if !bytes.Equal(first, lookupBody(v1, false)) {
		t.Fatalf("the book's answer differs from the encoding of the object:\n%s\n%s", first, lookupBody(v1, false))
	}

	// the informer's resync hands the same version again: the encoded answer is kept
	b.put(v1.DeepCopy())
	if again := b.get(id).body(false); &again[0] != &first[0] {
		t.Fatal("a resync of the same version encoded the answer again")
	}

	// a new version is answered as it is, not as the first was encoded
	v2 := bookVersion(ns, id, "u1", "11", func(t *payoutv1.Transfer) {
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, Message: "expired"}
	})
	b.put(v2)
	if got := b.get(id).body(false); !bytes.Contains(got, []byte(`"status":"failed"`)) {
		t.Fatalf("answer after the update: %s", got)
	}

	// an older version told late (a create files what it stored; the informer's event of a
	// later write can come first) does not replace the newer one
	b.put(v1)
	if got := b.get(id); got.t != v2 {
		t.Fatalf("the book went back to version %s", got.t.ResourceVersion)
	}

	// another account's key gets the masked answer, encoded apart
	masked := b.get(id).body(true)
	if !bytes.Equal(masked, lookupBody(v2, true)) || bytes.Equal(masked, b.get(id).body(false)) {
		t.Fatalf("masked answer: %s", masked)
	}

	// the delete of an older object of the same id (another uid) leaves the newer one
	b.remove(bookVersion(ns, id, "u0", "9"))
	if b.get(id) == nil {
		t.Fatal("the delete of another object removed the transfer")
	}
	b.remove(v2)
	if b.get(id) != nil {
		t.Fatal("a deleted transfer is still in the book")
	}
}

func TestTransferBookAwaitsTheWrittenVersion(t *testing.T) {
	const ns, id = "payout-acct-acme", "b00c0000000000000000000c"
	b := newTransferBook()
	b.put(bookVersion(ns, id, "u1", "10"))
	written := bookVersion(ns, id, "u1", "12")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	b.await(ctx, written) // the book holds only version 10
	if waited := time.Since(start); waited < 90*time.Millisecond {
		t.Fatalf("await returned after %v while the book held an older version", waited)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		b.await(context.Background(), written)
	}()
	b.put(bookVersion(ns, id, "u1", "11"))
	select {
	case <-done:
		t.Fatal("await returned at a version older than the write")
	case <-time.After(50 * time.Millisecond):
	}
	b.put(bookVersion(ns, id, "u1", "13")) // newer than the write: as good
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("await did not return once the book held a newer version")
	}
}

// The informer's events feed the book, a tombstone's delete included.
func TestTransferBookFollowsTheInformer(t *testing.T) {
	const ns, id = "payout-acct-acme", "b00c0000000000000000000d"
	inf := &handlerRecorder{}
	b := newTransferBook()
	if err := b.register(inf); err != nil {
		t.Fatal(err)
	}
	v1, v2 := bookVersion(ns, id, "u1", "10"), bookVersion(ns, id, "u1", "11")
	inf.h.OnAdd(v1, true)
	if e := b.get(id); e == nil || e.t != v1 {
		t.Fatal("an added transfer is not in the book")
	}
	inf.h.OnUpdate(v1, v2)
	if e := b.get(id); e == nil || e.t != v2 {
		t.Fatal("an updated transfer is not the new version in the book")
	}
	inf.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: ns + "/" + id, Obj: v2})
	if b.get(id) != nil {
		t.Fatal("a transfer deleted while the watch was down is still in the book")
	}
}

// handlerRecorder keeps the handler registered on it, in place of an informer; the test plays
// the informer's events through it, and its registration says it has synced.
type handlerRecorder struct {
	h toolscache.ResourceEventHandler
}

func (r *handlerRecorder) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	r.h = h
	return syncedRegistration{}, nil
}

// BenchmarkTransferBookMemory measures what the book adds to the informer cache's transfers:
// its entry per transfer, and the answers it keeps once a transfer has been read, by its owner
// and by another account (the objects themselves are the cache's, shared, and not counted).
// The heap is measured after a collection, before the entries are made and after every
// transfer's two answers are encoded; the metrics are bytes per transfer:
//
//	go test -run '^$' -bench BenchmarkTransferBookMemory -benchtime 3x ./apiserver/
func BenchmarkTransferBookMemory(b *testing.B) {
	const n = 10000
	// the objects, for scale: the cache holds each (with the fields the API server adds, which
	// these do not have)
	start := heapAlloc()
	objs := make([]*payoutv1.Transfer, n)
	for i := range objs {
		objs[i] = bookVersion("payout-acct-acme", fmt.Sprintf("b00c%020d", i), fmt.Sprint("u", i), "10")
	}
	objects := heapAlloc() - start
	var entries, answers uint64
	for b.Loop() {
		book := newTransferBook()
		before := heapAlloc()
		for _, t := range objs {
			book.put(t)
		}
		filed := heapAlloc()
		for _, t := range objs {
			e := book.get(t.Name)
			e.body(false)
			e.body(true)
		}
		read := heapAlloc()
		entries, answers = filed-before, read-filed
		runtime.KeepAlive(book)
	}
	b.ReportMetric(float64(objects)/n, "object-B/transfer")
	b.ReportMetric(float64(entries)/n, "entry-B/transfer")
	b.ReportMetric(float64(answers)/n, "answers-B/transfer")
}
