package main

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// syncGate starts the informers the facade reads and reports ready once they have synced.
type syncGate struct {
	cache cache.Cache
	ready atomic.Bool
}

func newSyncGate(c cache.Cache) *syncGate { return &syncGate{cache: c} }

// Start runs with the manager: it starts the informers and waits for them.
func (g *syncGate) Start(ctx context.Context) error {
	for _, obj := range warmKinds {
		if _, err := g.cache.GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	if g.cache.WaitForCacheSync(ctx) {
		g.ready.Store(true)
	}
	return nil
}

// NeedLeaderElection is false: every replica serves and needs its cache.
func (*syncGate) NeedLeaderElection() bool { return false }

// check is the manager's readiness check.
func (g *syncGate) check(*http.Request) error { return g.err() }

func (g *syncGate) err() error {
	if !g.ready.Load() {
		return errors.New("informer cache not synced yet")
	}
	return nil
}
