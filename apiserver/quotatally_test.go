package apiserver

import (
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

// syncedRegistration is a registration whose handler has taken in the informer's first list.
type syncedRegistration struct {
	toolscache.ResourceEventHandlerRegistration
}

func (syncedRegistration) HasSynced() bool { return true }

func TestQuotaTallyCountsWhatEachCapCounts(t *testing.T) {
	const ns, other = "payout-acct-acme", "payout-acct-other"
	tally := newQuotaTally()
	transfers, recipients, claims := &handlerRecorder{}, &handlerRecorder{}, &handlerRecorder{}
	for _, reg := range []func() (func() bool, error){
		func() (func() bool, error) { return registerTally[payoutv1.Transfer](tally, transfers) },
		func() (func() bool, error) { return registerTally[payoutv1.Recipient](tally, recipients) },
		func() (func() bool, error) { return registerTally[payoutv1.Claim](tally, claims) },
	} {
		if _, err := reg(); err != nil {
			t.Fatal(err)
		}
	}
	held := func(ns string, q quota) int { return tally.count(quotaSlot{ns, q}) }
	want := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %d, want %d", what, got, want)
		}
	}

	v1 := bookVersion(ns, "a00000000000000000000001", "t1", "10")
	v2 := bookVersion(ns, "a00000000000000000000002", "t2", "11", testgen.V2())
	transfers.h.OnAdd(v1, true)
	transfers.h.OnAdd(v2, true)
	transfers.h.OnAdd(bookVersion(other, "a00000000000000000000003", "t3", "12"), false)
	want("open v1 transfers", held(ns, quotaOpenV1Transfers), 1)
	want("open v2 transfers", held(ns, quotaOpenV2Transfers), 1)
	want("the other account's open v1 transfers", held(other, quotaOpenV1Transfers), 1)

	// a resync hands the same version again: nothing moves
	transfers.h.OnUpdate(v1, v1.DeepCopy())
	want("open v1 transfers after a resync", held(ns, quotaOpenV1Transfers), 1)

	// a transfer that ends leaves its cap; its delete afterwards takes nothing more
	ended := bookVersion(ns, v1.Name, "t1", "13", testgen.Failed(payoutv1.FailureExpired, "expired"))
	transfers.h.OnUpdate(v1, ended)
	want("open v1 transfers once one ended", held(ns, quotaOpenV1Transfers), 0)
	transfers.h.OnDelete(ended)
	want("open v1 transfers after the ended one's delete", held(ns, quotaOpenV1Transfers), 0)

	// a delete the watch missed comes as a tombstone, with the object as last seen
	transfers.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: ns + "/" + v2.Name, Obj: v2})
	want("open v2 transfers after a tombstone", held(ns, quotaOpenV2Transfers), 0)

	// a transfer deleted and made again under the same name is another object (UID)
	again := bookVersion(ns, v2.Name, "t2-again", "20", testgen.V2())
	transfers.h.OnAdd(again, false)
	transfers.h.OnDelete(v2) // a late delete of the first one takes nothing from the second
	want("open v2 transfers after a name is reused", held(ns, quotaOpenV2Transfers), 1)

	rc := testgen.Recipient(ns, 42)
	rc.UID = "r1"
	recipients.h.OnAdd(rc, false)
	want("active recipients", held(ns, quotaActiveRecipients), 1)
	off := rc.DeepCopy()
	off.Spec.Deactivated = true
	recipients.h.OnUpdate(rc, off)
	want("active recipients once deactivated", held(ns, quotaActiveRecipients), 0)

	// a claim counts under the account of its holder
	cl := testgen.Claim(payoutv1.ClaimCustomerUUID, "7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d", payoutv1.ObjectRef{Namespace: ns, Name: again.Name})
	cl.UID = "c1"
	claims.h.OnAdd(cl, false)
	want("claims", held(ns, quotaClaims), 1)
	want("the other account's claims", held(other, quotaClaims), 0)
	claims.h.OnDelete(cl)
	want("claims after the release", held(ns, quotaClaims), 0)

	if len(tally.held) != 2 || len(tally.slotOf) != 2 {
		t.Fatalf("the tally keeps entries of objects it no longer counts: %v, %d objects", tally.held, len(tally.slotOf))
	}
}

func TestQuotaTallyAwaitWakesOnTheCount(t *testing.T) {
	tally := newQuotaTally()
	tr := bookVersion("payout-acct-acme", "a00000000000000000000001", "t1", "10")
	go func() {
		time.Sleep(20 * time.Millisecond)
		tally.put(tr)
	}()
	start := time.Now()
	tally.await(context.Background(), tr, false)
	if waited := time.Since(start); waited < 15*time.Millisecond || waited > time.Second {
		t.Fatalf("await returned after %v, not when the transfer was counted", waited)
	}
	if tally.count(quotaSlot{tr.Namespace, quotaOpenV1Transfers}) != 1 {
		t.Fatal("the transfer was not counted")
	}
	// an object the tally does not count returns at once, as does one already counted as written
	start = time.Now()
	tally.await(context.Background(), &payoutv1.Quote{}, false)
	tally.await(context.Background(), tr, false)
	if waited := time.Since(start); waited > 100*time.Millisecond {
		t.Fatalf("await of a quote and of a counted transfer took %v", waited)
	}
	// a deleted transfer is waited on until the tally no longer counts it
	go func() {
		time.Sleep(20 * time.Millisecond)
		tally.remove(tr)
	}()
	start = time.Now()
	tally.await(context.Background(), tr, true)
	if waited := time.Since(start); waited < 15*time.Millisecond || waited > time.Second {
		t.Fatalf("await of a deleted transfer returned after %v, not when the tally let it go", waited)
	}
	if tally.count(quotaSlot{tr.Namespace, quotaOpenV1Transfers}) != 0 {
		t.Fatal("the deleted transfer is still counted")
	}
}

// BenchmarkQuotaCount compares a cap's count read from the tally with the count it replaced,
// the keys of the cache's field index (client-go's IndexKeys, which sorts them), for an account
// holding n open transfers. Run it with `go test -run X -bench QuotaCount ./apiserver/`
// (docs/benchmarks.md, "Creates: the cap's count and the floor's transfer").
func BenchmarkQuotaCount(b *testing.B) {
	const ns = "payout-acct-acme"
	for _, n := range []int{100, 1000, 10000} {
		ix := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{
			"field:open.method": func(o any) ([]string, error) {
				t := o.(*payoutv1.Transfer)
				return []string{t.Namespace + "/" + string(t.Spec.Method)}, nil
			},
		})
		tally := newQuotaTally()
		for i := range n {
			tr := testgen.Transfer(ns, fmt.Sprintf("%024x", i))
			tr.UID = types.UID(fmt.Sprintf("u%d", i))
			if err := ix.Add(tr); err != nil {
				b.Fatal(err)
			}
			tally.put(tr)
		}
		b.Run(fmt.Sprintf("index-keys/%d", n), func(b *testing.B) {
			for range b.N {
				keys, err := ix.IndexKeys("field:open.method", ns+"/v1")
				if err != nil || len(keys) != n {
					b.Fatal(len(keys), err)
				}
			}
		})
		b.Run(fmt.Sprintf("tally/%d", n), func(b *testing.B) {
			for range b.N {
				if got := tally.count(quotaSlot{ns, quotaOpenV1Transfers}); got != n {
					b.Fatal(got)
				}
			}
		})
	}
}

func TestACreatesPlaceIsHeldUntilTheTallyCountsIt(t *testing.T) {
	s := &Server{stores: &stores{held: newQuotaTally()}}
	s.stores.ready.Store(true)
	acct := &payoutv1.PayoutAccount{Spec: payoutv1.PayoutAccountSpec{Quotas: payoutv1.Quotas{MaxOpenV1Transfers: 1}}}
	acct.Name = "acme"
	ctx := context.Background()
	reserve := func() error {
		free, err := s.reserve(ctx, acct, quotaOpenV1Transfers)
		if err == nil {
			free()
		}
		return err
	}
	free, err := s.reserve(ctx, acct, quotaOpenV1Transfers)
	if err != nil {
		t.Fatalf("the first place of a cap of one: %v", err)
	}
	// the create's transfer is stored; the cache has it, the tally not yet
	tr := bookVersion(payoutv1.AccountNamespace("acme"), "a00000000000000000000001", "t1", "10")
	freed := make(chan struct{})
	go func() {
		s.freeWhenCounted(ctx, tr, free)
		close(freed)
	}()
	time.Sleep(30 * time.Millisecond)
	select {
	case <-freed:
		t.Fatal("the place was given back before the tally counted the transfer")
	default:
	}
	if reserve() == nil {
		t.Fatal("a second create took the place of a transfer the tally does not count yet")
	}
	s.stores.held.put(tr)
	select {
	case <-freed:
	case <-time.After(time.Second):
		t.Fatal("the place was not given back once the tally counted the transfer")
	}
	if reserve() == nil {
		t.Fatal("a second create took the place of a counted transfer")
	}
	s.stores.held.put(bookVersion(tr.Namespace, tr.Name, "t1", "11", testgen.Failed(payoutv1.FailureExpired, "expired")))
	if err := reserve(); err != nil {
		t.Fatalf("the place of an ended transfer: %v", err)
	}
}

// BenchmarkQuotaTallyMemory measures what the tally adds per counted object (the objects are the
// cache's, shared, and not counted): the heap after a collection, before and after 10 000 open
// transfers are counted, in bytes per transfer:
//
//	go test -run '^$' -bench BenchmarkQuotaTallyMemory -benchtime 3x ./apiserver/
func BenchmarkQuotaTallyMemory(b *testing.B) {
	const n = 10000
	objs := make([]*payoutv1.Transfer, n)
	for i := range objs {
		objs[i] = testgen.Transfer("payout-acct-acme", fmt.Sprintf("%024x", i))
		objs[i].UID = types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
	}
	for range b.N {
		before := heapAlloc()
		tally := newQuotaTally()
		for _, t := range objs {
			tally.put(t)
		}
		b.ReportMetric(float64(heapAlloc()-before)/n, "B/transfer")
		runtime.KeepAlive(tally)
	}
}

// heapAlloc is the heap in use after a collection, for the memory benchmarks.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
