package apiserver

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// awaitCached waits (briefly) until the informer cache holds obj as written or newer, so that a
// caller reading right after a write sees it: every read of the facade comes from the cache.
func (s *Server) awaitCached(ctx context.Context, obj client.Object) {
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	s.awaitCache(ctx, obj, "catch up with a write", func(probe client.Object, err error) bool {
		// etcd resource versions increase; the watch cache relies on that too.
		got, perr := strconv.ParseUint(probe.GetResourceVersion(), 10, 64)
		return err == nil && perr == nil && got >= want
	})
	if rc, ok := obj.(*payoutv1.Recipient); ok && s.book != nil {
		s.book.await(ctx, rc, !rc.Spec.Deactivated)
	}
}

// awaitGone waits (briefly) until the informer cache no longer holds obj, so that a caller
// listing right after a withdrawal does not see it.
func (s *Server) awaitGone(ctx context.Context, obj client.Object) {
	s.awaitCache(ctx, obj, "drop a deleted object", func(_ client.Object, err error) bool { return apierrors.IsNotFound(err) })
	if rc, ok := obj.(*payoutv1.Recipient); ok && s.book != nil {
		s.book.await(ctx, rc, false)
	}
}

// awaitCache reads obj's key from the informer cache, backing off from 2 ms to 50 ms, until done
// accepts the read or 2 s have passed (then it logs that the cache did not do what).
func (s *Server) awaitCache(ctx context.Context, obj client.Object, what string, done func(probe client.Object, err error) bool) {
	probe := obj.DeepCopyObject().(client.Object)
	key := client.ObjectKeyFromObject(obj)
	pause := 2 * time.Millisecond
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if done(probe, s.cfg.Client.Get(ctx, key, probe)) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
	s.cfg.Log.Info("cache did not "+what+" within 2s", "object", key.String())
}
