package apiserver

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"
)

// windowShards is how many locks the in-memory windows are spread over: enough that two
// requests of different keys rarely wait on one another on the few cores a replica has.
const windowShards = 64

// windows are keyLimits' in-memory counts: one fixed window per budget and key, opened by the
// window's first request and lasting period, the semantics of ulule/limiter's memory store
// (which they replace on the request path). They differ from it in what a request costs: the
// counts sit in shards under a lock each, keyed by the (budget, key id) pair rather than by a
// string made for every request, and an expired window is dropped by the next request of its
// shard that comes a period after the shard's last sweep, not by a goroutine of their own.
type windows struct {
	period time.Duration
	seed   maphash.Seed
	shards [windowShards]windowShard
}

type windowKey struct{ budget, keyID string }

// window is one count; end is the window's end in Unix nanoseconds.
type window struct {
	count int64
	end   int64
}

type windowShard struct {
	mu      sync.Mutex
	m       map[windowKey]window
	sweepAt int64 // Unix nanoseconds
}

func newWindows(period time.Duration) *windows {
	ws := &windows{period: period, seed: maphash.MakeSeed()}
	for i := range ws.shards {
		ws.shards[i].m = map[windowKey]window{}
	}
	return ws
}

// take counts one request of keyID on budget (limit requests a window) and reports the
// window's state after it.
func (ws *windows) take(budget, keyID string, limit int64) limiter.Context {
	return ws.at(budget, keyID, limit, true, time.Now())
}

// peek reports the window's state without counting a request: a key with no open window has
// its whole limit, in a window that would end a period from now.
func (ws *windows) peek(budget, keyID string, limit int64) limiter.Context {
	return ws.at(budget, keyID, limit, false, time.Now())
}

func (ws *windows) at(budget, keyID string, limit int64, spend bool, now time.Time) limiter.Context {
	k := windowKey{budget, keyID}
	sh := &ws.shards[maphash.String(ws.seed, keyID)%windowShards]
	t := now.UnixNano()
	sh.mu.Lock()
	if t > sh.sweepAt {
		for key, win := range sh.m {
			if t > win.end {
				delete(sh.m, key)
			}
		}
		sh.sweepAt = t + int64(ws.period)
	}
	win, ok := sh.m[k]
	if !ok || t > win.end { // a window is open up to and including its end, as in the memory store
		win = window{end: t + int64(ws.period)}
	}
	if spend {
		win.count++
		sh.m[k] = win
	}
	sh.mu.Unlock()
	lc := limiter.Context{Limit: limit, Reset: time.Unix(0, win.end).Unix(), Reached: win.count > limit}
	if !lc.Reached {
		lc.Remaining = limit - win.count
	}
	return lc
}
