package sanctions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/poll"
)

// Screener holds the list in use and swaps in new releases without stopping screening: readers
// take the current *List with one atomic load and never wait for a reload.
type Screener struct {
	load func() (*List, error)
	cur  atomic.Pointer[List]
	// mu serializes loads so that a slow, older load cannot overwrite the result of a newer one.
	mu      sync.Mutex
	lastErr atomic.Pointer[error]
	maxAge  time.Duration
	now     func() time.Time
}

// Option configures a Screener.
type Option func(*Screener)

// WithMaxAge makes the Screener refuse to screen (Unavailable) with a list published more than
// d ago, or of unknown date: a list that stopped being refreshed lets everyone listed since
// through. Zero or less means no limit.
func WithMaxAge(d time.Duration) Option { return func(s *Screener) { s.maxAge = d } }

// WithClock replaces time.Now for the age limit.
func WithClock(now func() time.Time) Option { return func(s *Screener) { s.now = now } }

// errUnavailable is what the API caller sees while no list is loaded; the cause stays in the
// logs (LastError), never in the response. A new value each time, since callers may annotate it.
func errUnavailable() *apierror.Error {
	return apierror.Errorf(apierror.Unavailable, "sanctions screening data unavailable")
}

// NewScreener loads a list with load at once. When that fails the Screener exists but is
// unavailable — every Screen returns an Unavailable error — until a Reload succeeds: screening
// fails closed rather than letting recipients through unscreened.
func NewScreener(load func() (*List, error), opts ...Option) *Screener {
	s := &Screener{load: load, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	_ = s.Reload() // the error is kept for LastError; unavailability is the visible effect
	return s
}

// Reload loads a list and swaps it in only when the load succeeds and the list is not older
// (by publish date, when both are known) than the one in force: a lagging mirror or a stale cache must not bring
// back names that were added since. A failed reload keeps the current list (an older list
// beats none) and returns the error.
func (s *Screener) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var l *List
	err := errors.New("sanctions: no loader")
	if s.load != nil {
		l, err = s.load()
		if err == nil && (l == nil || l.Len() == 0) {
			err = errors.New("sanctions: loader returned an empty list")
		}
	}
	// A list of unknown date cannot be compared; with an age limit it is not screened with.
	if cur := s.cur.Load(); err == nil && cur != nil && !l.Published().IsZero() && l.Published().Before(cur.Published()) {
		err = fmt.Errorf("sanctions: the new list is published %s, before the %s of the list in force",
			day(l.Published()), day(cur.Published()))
	}
	if err != nil {
		s.lastErr.Store(&err)
		return err
	}
	s.cur.Store(l)
	s.lastErr.Store(nil)
	return nil
}

// day formats a publish date for messages.
func day(t time.Time) string {
	if t.IsZero() {
		return "(unknown date)"
	}
	return t.Format(time.DateOnly)
}

// Screen screens subj against the current list: a nil *Match means clear. Without a list, or
// with one past the maximum age, it returns an *apierror.Error with Code Unavailable.
func (s *Screener) Screen(subj Subject) (*Match, error) {
	l := s.cur.Load()
	if l == nil || s.stale(l) {
		return nil, errUnavailable()
	}
	return l.Screen(subj), nil
}

// stale tells whether l is past the maximum age or of unknown date while one is set.
func (s *Screener) stale(l *List) bool {
	if s.maxAge <= 0 {
		return false
	}
	return l.Published().IsZero() || s.now().Sub(l.Published()) > s.maxAge
}

// Stale tells whether Screen answers Unavailable because the list in force is too old; false
// while there is no list (LastError says why).
func (s *Screener) Stale() bool {
	l := s.cur.Load()
	return l != nil && s.stale(l)
}

// Age is the time since the list in force was published; false when there is no list or its
// date is unknown. It is meant for metrics.
func (s *Screener) Age() (time.Duration, bool) {
	l := s.cur.Load()
	if l == nil || l.Published().IsZero() {
		return 0, false
	}
	return s.now().Sub(l.Published()), true
}

// List returns the list in use, or nil while unavailable.
func (s *Screener) List() *List { return s.cur.Load() }

// LastError returns the error of the latest load, or nil when it succeeded. After a failed
// reload the Screener still screens with its previous list; this is how the failure is seen.
func (s *Screener) LastError() error {
	if p := s.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Run reloads every interval until ctx ends, one minute after a failed reload (at most
// interval), and reports every result to report (nil: a new list is in force). The first load
// is NewScreener's.
func (s *Screener) Run(ctx context.Context, interval time.Duration, report func(error)) {
	retry := min(interval, time.Minute)
	first := interval
	if s.LastError() != nil {
		first = retry
	}
	poll.Loop(ctx, first, func() time.Duration {
		err := s.Reload()
		report(err)
		if err != nil {
			return retry
		}
		return interval
	})
}
