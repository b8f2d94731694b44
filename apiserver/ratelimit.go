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
	return newKeyLimitsPer(budgets, time.Minute)
}

// newKeyLimitsPer is newKeyLimits with windows of another length (for tests).
func newKeyLimitsPer(budgets map[string]int64, period time.Duration) *keyLimits {
	kl := &keyLimits{store: memory.NewStore(), limiters: map[string]*limiter.Limiter{}}
	for name, limit := range budgets {
		kl.limiters[name] = limiter.New(kl.store, limiter.Rate{Period: period, Limit: limit})
	}
	return kl
}

// take counts one request of keyID on budget, sets the X-RateLimit-* headers and reports
// whether the request may go on.
func (kl *keyLimits) take(ctx context.Context, w http.ResponseWriter, budget, keyID string) (bool, error) {
	lc, err := kl.limiters[budget].Get(ctx, budget+"/"+keyID)
	if err != nil {
		return false, err
	}
	setRateHeaders(w, lc)
	return !lc.Reached, nil
}

// peek sets the X-RateLimit-* headers of keyID's budget without counting a request: for an
// authenticated answer that must not spend the budget (the allow-list's 403).
func (kl *keyLimits) peek(ctx context.Context, w http.ResponseWriter, budget, keyID string) error {
	lc, err := kl.limiters[budget].Peek(ctx, budget+"/"+keyID)
	if err != nil {
		return err
	}
	setRateHeaders(w, lc)
	return nil
}

// setRateHeaders writes the headers of spec 8.1. The limiter reports the window's end truncated
// to the second; the end lies within the second after that (it falls on a whole second with a
// chance of about one in a billion, and then a retry one second later is still right), so
// X-RateLimit-Reset is rounded up: a client retrying at Reset finds the new window open.
func setRateHeaders(w http.ResponseWriter, lc limiter.Context) {
	reset := lc.Reset + 1
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.FormatInt(lc.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(lc.Remaining, 10))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if lc.Reached {
		wait := time.Until(time.Unix(reset, 0))
		retry := max(int64((wait+time.Second-1)/time.Second), 1)
		h.Set("Retry-After", strconv.FormatInt(retry, 10))
	}
}
