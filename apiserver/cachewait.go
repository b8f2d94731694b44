package apiserver

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The facade waits after its writes in two places, each woken by what it waits on rather than
// polling. awaitCached and awaitGone wait on the informer cache, per object: cacheEvents wakes
// the requests waiting on one object when that object's informer event arrives. The recipient
// book (recipientbook.go) is an index the same informer's handler keeps after the cache, so a
// recipient's write is waited on twice, cache first, then book.await on the book's own changed
// channel; the book is not the cache, so it has a signal of its own. The transfer book
// (transferbook.go), which GET transfer reads, is waited on the same way, and so is the tally of
// the caps (quotatally.go), which the next create is judged on.

// awaitCached waits (briefly) until the informer cache holds obj as written or newer, so that a
// caller reading right after a write sees it: every read of the facade comes from the cache.
func (s *Server) awaitCached(ctx context.Context, obj client.Object) {
	if _, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err != nil {
		return
	}
	s.awaitCache(ctx, obj, "catch up with a write", func(probe client.Object, err error) bool {
		return err == nil && !newerVersion(obj, probe)
	})
	if rc, ok := obj.(*payoutv1.Recipient); ok && s.book != nil {
		s.book.await(ctx, rc, !rc.Spec.Deactivated)
	}
	if t, ok := obj.(*payoutv1.Transfer); ok && s.transferBook != nil {
		s.transferBook.await(ctx, t)
	}
	if s.stores != nil {
		s.stores.held.await(ctx, obj, false)
	}
}

// newerVersion tells whether a is a later version of the object than b. etcd resource versions
// increase; the watch cache relies on that too. Versions that are not numbers are only equal or
// not.
func newerVersion(a, b metav1.Object) bool {
	av, aerr := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	bv, berr := strconv.ParseUint(b.GetResourceVersion(), 10, 64)
	if aerr != nil || berr != nil {
		return a.GetResourceVersion() != b.GetResourceVersion()
	}
	return av > bv
}

// awaitGone waits (briefly) until the informer cache no longer holds obj, so that a caller
// listing right after a withdrawal does not see it.
func (s *Server) awaitGone(ctx context.Context, obj client.Object) {
	s.awaitCache(ctx, obj, "drop a deleted object", func(_ client.Object, err error) bool { return apierrors.IsNotFound(err) })
	if rc, ok := obj.(*payoutv1.Recipient); ok && s.book != nil {
		s.book.await(ctx, rc, false)
	}
	if s.stores != nil {
		s.stores.held.await(ctx, obj, true)
	}
}

// awaitCache reads obj's key from the informer cache until done accepts the read or 2 s have
// passed (then it logs that the cache did not do what). For the types the facade writes and then
// waits for (cacheEvents), it reads again when their informer delivers an event, the moment the
// cache can have changed; for others it polls, backing off from 2 ms to 50 ms.
func (s *Server) awaitCache(ctx context.Context, obj client.Object, what string, done func(probe client.Object, err error) bool) {
	probe := obj.DeepCopyObject().(client.Object)
	key := client.ObjectKeyFromObject(obj)
	deadline := time.NewTimer(2 * time.Second)
	defer deadline.Stop()
	next, stop := s.events.wait(obj)
	defer stop()
	pause := 2 * time.Millisecond
	for {
		// taken before the read, so that an event between the read and the wait is not missed
		changed := next()
		if done(probe, s.cfg.Client.Get(ctx, key, probe)) {
			return
		}
		var wake <-chan time.Time
		if changed == nil {
			wake = time.After(pause)
			pause = min(2*pause, 50*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			s.cfg.Log.Info("cache did not "+what+" within 2s", "object", key.String())
			return
		case <-changed:
		case <-wake:
		}
	}
}

// cacheEvents tells the requests waiting for an object that its informer delivered an event of
// it: the informer updates its cache before it calls its handlers, so a read after the event sees
// it. Waking on the event, rather than at the next poll of a backing-off loop, answers a create as
// soon as the cache holds it (a poll from 2 ms doubling to 50 ms found a write the informer had
// after 20 ms only at 30 ms, one it had after 35 ms only at 80), and reads the cache only when
// the object changed. Waiters are kept per object, so the events of other objects wake nobody.
type cacheEvents struct {
	mu sync.Mutex
	// watched are the types whose informers tell this.
	watched map[reflect.Type]bool
	// waiting are, per object, the channel closed at its next event and how many wait on it.
	waiting map[eventKey]*eventWaiters
}

type eventKey struct {
	t   reflect.Type
	key string
}

type eventWaiters struct {
	ch chan struct{}
	n  int
}

// watch registers the informer of obj's type.
func (e *cacheEvents) watch(ctx context.Context, informers cache.Informers, obj client.Object) error {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	t := reflect.TypeOf(obj)
	e.mu.Lock()
	if e.watched == nil {
		e.watched, e.waiting = map[reflect.Type]bool{}, map[eventKey]*eventWaiters{}
	}
	e.watched[t] = true
	e.mu.Unlock()
	notify := func(o any) {
		key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(o)
		if err != nil {
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if w := e.waiting[eventKey{t, key}]; w != nil {
			close(w.ch)
			w.ch = make(chan struct{})
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, o any) { notify(o) },
		DeleteFunc: notify,
	})
	return err
}

// wait registers a waiter for obj: next is the channel closed at obj's next event (nil when its
// type is not watched); done unregisters it.
func (e *cacheEvents) wait(obj client.Object) (next func() <-chan struct{}, done func()) {
	t := reflect.TypeOf(obj)
	unwatched := func() <-chan struct{} { return nil }
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.watched[t] {
		return unwatched, func() {}
	}
	key, err := toolscache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return unwatched, func() {}
	}
	k := eventKey{t, key}
	w := e.waiting[k]
	if w == nil {
		w = &eventWaiters{ch: make(chan struct{})}
		e.waiting[k] = w
	}
	w.n++
	return func() <-chan struct{} {
			e.mu.Lock()
			defer e.mu.Unlock()
			return w.ch
		}, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if w.n--; w.n == 0 {
				delete(e.waiting, k)
			}
		}
}
