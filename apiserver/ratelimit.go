package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/common"
	"github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// keyLimits are the per-key, per-endpoint limits of spec 8.1: one fixed one-minute window per
// key and budget, starting at the budget's first request, so that "20 per minute" admits
// exactly 20 and X-RateLimit-Reset is the window's end.
//
// Without a shared store the counters live in this process: with several facade replicas
// behind a balancer each replica counts on its own (a caller can get up to N times the limit
// across N replicas). With one (Config.SharedLimits), limiter's Redis store holds one count per
// key and budget for every replica, and answers; the in-memory counters are kept too, spent
// alongside, so that when the store fails the replica goes on counting on its own from where
// it stands rather than from zero (failing open to per-replica limits, never to none).
type keyLimits struct {
	local  map[string]*localLimit
	shared map[string]*limiter.Limiter // nil without a shared store
	store  *sharedlimits.Store
}

// localLimit is one budget's counters in this process: ulule/limiter's memory cache, the one
// its memory store keeps, with a cache of its own per budget so that a counter's key is the key
// id alone. The memory store names each counter "limiter:" + key, a string built per request
// (two allocations, and the budget/key id one more) for what a cache per budget tells apart
// already.
type localLimit struct {
	cache *memory.CacheWrapper
	rate  limiter.Rate
}

// get spends one request of keyID, as the memory store's Get does.
func (l *localLimit) get(keyID string) limiter.Context {
	if _, ok := l.cache.Load(keyID); !ok {
		// the key id is a part of the Authorization header, which holds the secret: a
		// counter kept for the window must not keep the header alive
		keyID = strings.Clone(keyID)
	}
	count, expiration := l.cache.Increment(keyID, 1, l.rate.Period)
	return common.GetContextFromState(time.Now(), l.rate, expiration, count)
}

// peek reads keyID's count without spending, as the memory store's Peek does.
func (l *localLimit) peek(keyID string) limiter.Context {
	count, expiration := l.cache.Get(keyID, l.rate.Period)
	return common.GetContextFromState(time.Now(), l.rate, expiration, count)
}

func newKeyLimits(budgets map[string]int64) *keyLimits {
	return newKeyLimitsPer(budgets, time.Minute, nil)
}

// newKeyLimitsPer is newKeyLimits with windows of another length (for tests), shared in store
// when it is not nil.
func newKeyLimitsPer(budgets map[string]int64, period time.Duration, store *sharedlimits.Store) *keyLimits {
	kl := &keyLimits{local: map[string]*localLimit{}, store: store}
	if store != nil {
		kl.shared = map[string]*limiter.Limiter{}
	}
	for name, limit := range budgets {
		rate := limiter.Rate{Period: period, Limit: limit}
		kl.local[name] = &localLimit{cache: memory.NewCache(limiter.DefaultCleanUpInterval), rate: rate}
		if store != nil {
			kl.shared[name] = limiter.New(store.RateStore(), rate)
		}
	}
	return kl
}

// take counts one request of keyID on budget, sets the X-RateLimit-* headers and reports
// whether the request may go on.
func (kl *keyLimits) take(ctx context.Context, w http.ResponseWriter, budget, keyID string) (bool, error) {
	return kl.count(ctx, w, budget, keyID, true)
}

// peek sets the X-RateLimit-* headers of keyID's budget without counting a request: for an
// authenticated answer that must not spend the budget (the allow-list's 403).
func (kl *keyLimits) peek(ctx context.Context, w http.ResponseWriter, budget, keyID string) error {
	_, err := kl.count(ctx, w, budget, keyID, false)
	return err
}

// count spends one request (spend) or reads the count of the budget's limiters: the shared
// one's answer when the store gives one, else the local one's.
func (kl *keyLimits) count(ctx context.Context, w http.ResponseWriter, budget, keyID string, spend bool) (bool, error) {
	local, ok := kl.local[budget]
	if !ok {
		return false, fmt.Errorf("no rate limit for the budget %q", budget)
	}
	var lc limiter.Context
	if spend {
		lc = local.get(keyID)
	} else {
		lc = local.peek(keyID)
	}
	if kl.shared != nil {
		op := (*limiter.Limiter).Peek
		if spend {
			op = (*limiter.Limiter).Get
		}
		var slc limiter.Context
		if kl.store.Call(ctx, metrics.LimitStorePerKey, func(ctx context.Context) (err error) {
			slc, err = op(kl.shared[budget], ctx, budget+"/"+keyID)
			return err
		}) {
			lc = slc
		}
	}
	setRateHeaders(w, lc)
	return !lc.Reached, nil
}

// setRateHeaders writes the headers of spec 8.1. The limiter reports the window's end truncated
// to the second (the Redis store computes the end as the replica's now plus the key's TTL, which
// lands a round trip late at most: later, never earlier); the end lies within the second after that (it falls on a whole second with a
// chance of about one in a billion, and then a retry one second later is still right), so
// X-RateLimit-Reset is rounded up: a client retrying at Reset finds the new window open.
func setRateHeaders(w http.ResponseWriter, lc limiter.Context) {
	reset := lc.Reset + 1
	h := w.Header()
	// Every authenticated answer carries these three: the keys are written in the canonical form
	// that Header.Set would make of "X-RateLimit-Limit" (and that is sent), the three values are
	// cut from one string and share one backing array, and the string's bytes are the struct's
	// own digits (never written after the string is made): one allocation where Header.Set and
	// FormatInt made up to eight.
	v := new(rateValues)
	b := strconv.AppendInt(v.digits[:0], lc.Limit, 10)
	i := len(b)
	b = strconv.AppendInt(b, lc.Remaining, 10)
	j := len(b)
	b = strconv.AppendInt(b, reset, 10)
	s := unsafe.String(unsafe.SliceData(b), len(b)) // b is v.digits: 60 bytes hold three int64s
	v.vals = [...]string{s[:i], s[i:j], s[j:]}
	vals := v.vals[:]
	h["X-Ratelimit-Limit"] = vals[0:1:1]
	h["X-Ratelimit-Remaining"] = vals[1:2:2]
	h["X-Ratelimit-Reset"] = vals[2:3:3]
	if lc.Reached {
		wait := time.Until(time.Unix(reset, 0))
		retry := max(int64((wait+time.Second-1)/time.Second), 1)
		h.Set("Retry-After", strconv.FormatInt(retry, 10))
	}
}

// rateValues are the three X-RateLimit-* values of an answer and the digits they are cut from:
// at most 20 bytes each (an int64 with its sign), so the digits never outgrow the array.
type rateValues struct {
	vals   [3]string
	digits [3 * 20]byte
}
