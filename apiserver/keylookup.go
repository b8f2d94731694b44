package apiserver

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/metrics"
)

// Bounds of the reads past the cache for key ids the cache does not know (keyLookup). A key is
// missing from a replica's cache only for the moment its informer takes to see it, so a few
// dozen reads a second are plenty for real callers; an attacker spraying random key ids gets no
// more than that out of the API server (a read by name, cheap for it), and what the budget
// refuses counts as a bad credential, as every unknown key did before. Ids found to exist are
// read past the budget (keyLookup.known): the budget is for ids nobody has shown to be real.
const (
	// keyLookupRate is the sustained rate of direct reads of ids not known to exist, per
	// replica, per second.
	keyLookupRate = 20
	// keyLookupBurst is how many such reads a replica makes at once after a quiet spell: a
	// tenant's batch of new keys used the moment they are issued (the conformance suite issues
	// some thirty at once), within the seconds an informer may lag on a loaded machine.
	keyLookupBurst = 50
	// keyLookupTimeout bounds one direct read: a slow API server must not hold requests (and
	// the callers coalesced on them) for longer.
	keyLookupTimeout = 2 * time.Second
	// absentKeys bounds the ids remembered as absent from the API server.
	absentKeys = 4096
	// absentKeyTTL is how long an id found absent is not read again. Key ids are random and
	// known only once their key is stored, so an id absent now is not one a real caller is
	// about to use; the cache is asked first anyway, so a key stored later is found there.
	absentKeyTTL = time.Minute
	// knownKeys and knownKeyTTL bound the ids remembered as found: their reads skip the budget
	// for a minute, longer than an informer lags.
	knownKeys   = 4096
	knownKeyTTL = time.Minute
)

// keyLookup reads API keys the informer cache does not (yet) hold from the API server, so that
// a key used the moment it is created is not refused, and counted as a bad credential, because
// this replica's informer has not seen it yet.
//
// The reads are bounded three ways: concurrent requests for one id share one read (a
// singleflight group), an id found absent is remembered for absentKeyTTL (at most absentKeys
// of them, least recently used out first), and the reads of ids not known to exist are
// rate-limited (keyLookupRate a second, keyLookupBurst at once). An id the budget leaves unread
// is reported absent: the caller gets 401 and the attempt counts, as it would have without the
// lookup.
//
// An id once found is remembered for knownKeyTTL, and its reads skip the budget: while the
// informer lags, every request of a new key is read past the cache (each read is the API
// server's, so a revocation counts at once), and a key that worked a moment ago must not be
// refused, and counted against its caller, because other new keys, or a spray of random ids,
// spent the budget meanwhile. Only an id that exists can become known, so a spray gains nothing
// from it.
type keyLookup struct {
	reader  client.Reader
	now     func() time.Time
	budget  *rate.Limiter
	flights singleflight.Group
	absent  *cache.LRUExpireCache
	known   *cache.LRUExpireCache
}

func newKeyLookup(reader client.Reader, clk cache.Clock) *keyLookup {
	return &keyLookup{reader: reader, now: clk.Now,
		budget: rate.NewLimiter(keyLookupRate, keyLookupBurst),
		absent: cache.NewLRUExpireCacheWithClock(absentKeys, clk),
		known:  cache.NewLRUExpireCacheWithClock(knownKeys, clk)}
}

// find reads the key named id past the cache. It returns nil, nil when the key does not exist
// or the budget leaves it unread (a bad credential either way), and an error only when the API
// server could not answer (neither good nor bad). The key returned may be shared with
// concurrent callers: read it, never change it.
func (l *keyLookup) find(ctx context.Context, id string) (*payoutv1.APIKey, error) {
	if _, ok := l.absent.Get(id); ok {
		return nil, nil
	}
	obj, err := l.read(ctx, &payoutv1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: id}}, true)
	if err != nil || obj == nil {
		return nil, err
	}
	return obj.(*payoutv1.APIKey), nil
}

// account reads the account named name past the cache, for a key bound to another UID than the
// cached account's: the cache may still hold an account deleted and made again a moment ago,
// and a key issued to the new one must not be refused (and counted) for it. Within the same
// budget as find: a key of the earlier account asks on every use, and each ask is one read.
// It returns nil, nil when the account does not exist or the budget leaves it unread (the
// cached account decides then), and an error when the API server could not answer. The
// account may be shared with concurrent callers: read it, never change it.
func (l *keyLookup) account(ctx context.Context, name string) (*payoutv1.PayoutAccount, error) {
	obj, err := l.read(ctx, &payoutv1.PayoutAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, false)
	if err != nil || obj == nil {
		return nil, err
	}
	return obj.(*payoutv1.PayoutAccount), nil
}

// read reads obj, by its name, from the API server under l's bounds: concurrent reads of one
// object share one, within the budget and keyLookupTimeout. It returns nil, nil for an object
// not there or not read. With remember (API keys), an object not there is remembered absent, one
// found is remembered known, and the read of a known one skips the budget.
func (l *keyLookup) read(ctx context.Context, obj client.Object, remember bool) (client.Object, error) {
	id := obj.GetName()
	key := fmt.Sprintf("%T/%s", obj, id)
	v, err, _ := l.flights.Do(key, func() (any, error) {
		// a flight that ended just before this one may have found it absent
		if _, ok := l.absent.Get(id); ok && remember {
			return nil, nil
		}
		if _, known := l.known.Get(id); !(known && remember) && !l.budget.AllowN(l.now(), 1) {
			if remember {
				metrics.KeyRead(metrics.KeyReadUnread)
			}
			return nil, nil
		}
		// the read is shared: one caller giving up must not fail the others
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyLookupTimeout)
		defer cancel()
		if err := l.reader.Get(rctx, client.ObjectKey{Name: id}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				if remember {
					metrics.KeyRead(metrics.KeyReadAbsent)
					l.known.Remove(id)
					l.absent.Add(id, struct{}{}, absentKeyTTL)
				}
				return nil, nil
			}
			return nil, err
		}
		if remember {
			metrics.KeyRead(metrics.KeyReadFound)
			l.known.Add(id, struct{}{}, knownKeyTTL)
		}
		return obj, nil
	})
	if err != nil || v == nil {
		return nil, err
	}
	return v.(client.Object), nil
}
