package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// keyLimits are the per-key, per-endpoint limits of spec 8.1: one fixed one-minute window per
// key and budget, starting at the budget's first request, so that "20 per minute" admits
// exactly 20 and X-RateLimit-Reset is the window's end. The counters live in this process: with
// several facade replicas behind a balancer each replica counts on its own (a caller can get up
// to N times the limit across N replicas); limiter's Redis store is the drop-in for one shared
// count.
type keyLimits struct {
	store    limiter.Store
	limiters map[string]*limiter.Limiter
}

func newKeyLimits(budgets map[string]int64) *keyLimits {
	kl := &keyLimits{store: memory.NewStore(), limiters: map[string]*limiter.Limiter{}}
	for name, limit := range budgets {
		kl.limiters[name] = limiter.New(kl.store, limiter.Rate{Period: time.Minute, Limit: limit})
	}
	return kl
}

// take counts one request of keyID on budget, sets the X-RateLimit-* headers and reports
// whether the request may go on.
func (kl *keyLimits) take(ctx context.Context, w http.ResponseWriter, budget, keyID string) (bool, error) {
	l := kl.limiters[budget]
	lc, err := l.Get(ctx, budget+"/"+keyID)
	if err != nil {
		return false, err
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.FormatInt(lc.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(lc.Remaining, 10))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(lc.Reset, 10))
	if lc.Reached {
		retry := max(lc.Reset-time.Now().Unix(), 1)
		h.Set("Retry-After", strconv.FormatInt(retry, 10))
	}
	return !lc.Reached, nil
}
