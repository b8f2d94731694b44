package testenv

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stablepay/payout-operator/internal/index"
)

// TB is what StartManager needs of a test: testing.T, or a Ginkgo suite's GinkgoT().
type TB interface {
	Helper()
	Fatal(args ...any)
	Error(args ...any)
}

// StartManager runs a controller-runtime manager on the control plane as payoutd runs one (the
// field indexes of internal/index registered; no metrics endpoint, which would take a port),
// with what each setup adds to it, until ctx ends; it returns the manager once its cache has
// synced, so a spec's first read through its client sees what is stored. A manager that stops
// with an error fails tb.
func (e *Env) StartManager(ctx context.Context, tb TB, setup ...func(manager.Manager) error) manager.Manager {
	tb.Helper()
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		tb.Fatal(err)
	}
	for _, s := range setup {
		if err := s(mgr); err != nil {
			tb.Fatal(err)
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	synced := make(chan bool, 1)
	go func() { synced <- mgr.GetCache().WaitForCacheSync(ctx) }()
	select {
	case err := <-stopped:
		tb.Fatal("the manager stopped before its cache synced: ", err)
	case ok := <-synced:
		if !ok {
			tb.Fatal("the manager's cache did not sync: ", ctx.Err())
		}
	}
	go func() {
		if err := <-stopped; err != nil {
			tb.Error("the manager stopped: ", err)
		}
	}()
	return mgr
}
