package sanctions

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// Screener holds the list in use and swaps in new releases without stopping screening: readers
// take the current *List with one atomic load and never wait for a reload.
type Screener struct {
	load func() (*List, error)
	cur  atomic.Pointer[List]
	// mu serializes loads so that a slow, older load cannot overwrite the result of a newer one.
	mu      sync.Mutex
	lastErr atomic.Pointer[error]
}

// errUnavailable is what the API caller sees while no list is loaded; the cause stays in the
// logs (LastError), never in the response. A new value each time, since callers may annotate it.
func errUnavailable() *apierror.Error {
	return apierror.Errorf(apierror.Unavailable, "sanctions screening data unavailable")
}

// NewScreener loads a list with load at once. When that fails the Screener exists but is
// unavailable — every Screen returns an Unavailable error — until a Reload succeeds: screening
// fails closed rather than letting recipients through unscreened.
func NewScreener(load func() (*List, error)) *Screener {
	s := &Screener{load: load}
	_ = s.Reload() // the error is kept for LastError; unavailability is the visible effect
	return s
}

// Reload loads a list and swaps it in only when the load succeeds. A failed reload keeps the
// current list (an older list beats none) and returns the error.
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
	if err != nil {
		s.lastErr.Store(&err)
		return err
	}
	s.cur.Store(l)
	s.lastErr.Store(nil)
	return nil
}

// Screen screens subj against the current list: a nil *Match means clear. Without a list it
// returns an *apierror.Error with Code Unavailable.
func (s *Screener) Screen(subj Subject) (*Match, error) {
	l := s.cur.Load()
	if l == nil {
		return nil, errUnavailable()
	}
	return l.Screen(subj), nil
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
