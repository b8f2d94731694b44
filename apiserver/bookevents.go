package apiserver

import (
	"context"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
)

// eventSource is what a book needs of an informer: to be told of its events.
type eventSource interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// bookEvents is the informer handler of a book of objects of type T: change gets the object
// before and after each event, nil for none (an add has no before, a delete no after); a
// delete the watch missed, which the informer hands over as a tombstone, gets the object as
// last seen. Objects of another type are ignored.
func bookEvents[T any](change func(old, now *T)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if now, ok := obj.(*T); ok {
				change(nil, now)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, _ := oldObj.(*T)
			if now, ok := newObj.(*T); ok {
				change(old, now)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if old, ok := obj.(*T); ok {
				change(old, nil)
			}
		},
	}
}

// changeSignal is a book's channel of its next change, closed and replaced on every change (under
// the book's lock), so that a waiter (awaitBook) that read the book and this channel together
// wakes on the first change after what it read.
type changeSignal struct{ ch chan struct{} }

func newChangeSignal() changeSignal { return changeSignal{ch: make(chan struct{})} }

// next is the channel the next change closes.
func (s *changeSignal) next() <-chan struct{} { return s.ch }

// fire tells the waiters of a change.
func (s *changeSignal) fire() {
	close(s.ch)
	s.ch = make(chan struct{})
}

// awaitBook waits (briefly, 2 s at most) until a book shows what a request wrote: check says
// whether it does, with the book's channel of its next change, read together under the book's
// lock so that a change between the two is not missed.
func awaitBook(ctx context.Context, check func() (changed <-chan struct{}, done bool)) {
	deadline := time.NewTimer(2 * time.Second)
	defer deadline.Stop()
	for {
		changed, done := check()
		if done {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		}
	}
}
