package sanctions

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

func tinyList(t *testing.T) *List {
	t.Helper()
	l, err := Parse(strings.NewReader(tinySDN), strings.NewReader(tinyAdd), strings.NewReader(tinyAlt), strings.NewReader(tinyCountries))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func wantUnavailable(t *testing.T, s *Screener) error {
	t.Helper()
	m, err := s.Screen(Subject{Name: bnc})
	if m != nil || err == nil {
		t.Fatalf("Screen = %+v, %v; want Unavailable error", m, err)
	}
	if apierror.CodeOf(err) != apierror.Unavailable || apierror.MessageOf(err) != "sanctions screening data unavailable" {
		t.Errorf("error code %q message %q", apierror.CodeOf(err), apierror.MessageOf(err))
	}
	return err
}

func TestScreenerFailsClosed(t *testing.T) {
	loadErr := errors.New("disk on fire")
	tests := []struct {
		name string
		load func() (*List, error)
	}{
		{"load error", func() (*List, error) { return nil, loadErr }},
		{"nil loader", nil},
		{"loader returns no list", func() (*List, error) { return nil, nil }},
		{"loader returns an empty list", func() (*List, error) { return &List{}, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewScreener(tt.load)
			err := wantUnavailable(t, s)
			if s.List() != nil || s.LastError() == nil {
				t.Errorf("List %v LastError %v; want nil list and an error", s.List(), s.LastError())
			}
			if strings.Contains(err.Error(), "fire") {
				t.Error("the load error leaks to the API caller")
			}
		})
	}
}

func TestScreenerReload(t *testing.T) {
	tiny := tinyList(t)
	full := embedded(t)
	var next *List
	var nextErr error
	s := NewScreener(func() (*List, error) { return next, nextErr })
	wantUnavailable(t, s) // next is nil at start

	next, nextErr = tiny, nil
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if m, err := s.Screen(Subject{Name: "John Doe"}); err != nil || m == nil || m.EntNum != 1 {
		t.Fatalf("after reload: %+v, %v", m, err)
	}

	next, nextErr = nil, errors.New("truncated download")
	if err := s.Reload(); err == nil || err.Error() != "truncated download" {
		t.Fatalf("failed Reload returned %v", err)
	}
	if s.List() != tiny || s.LastError() == nil {
		t.Fatalf("after a failed reload: list %p (want the old %p), LastError %v", s.List(), tiny, s.LastError())
	}
	if m, err := s.Screen(Subject{Name: "John Doe"}); err != nil || m == nil {
		t.Fatalf("the old list must still screen: %+v, %v", m, err)
	}

	next, nextErr = full, nil
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if s.LastError() != nil {
		t.Errorf("LastError after success: %v", s.LastError())
	}
	if m, _ := s.Screen(Subject{Name: "John Doe"}); m != nil {
		t.Errorf("old list still in use: %+v", m)
	}
	if m, _ := s.Screen(Subject{Name: bnc}); m == nil || m.EntNum != 306 {
		t.Errorf("new list not in use: %+v", m)
	}
}

// Screening goes on while lists are swapped; run with -race.
func TestScreenerConcurrentReload(t *testing.T) {
	lists := []*List{tinyList(t), embedded(t)}
	var mu sync.Mutex
	i := 0
	s := NewScreener(func() (*List, error) {
		mu.Lock()
		defer mu.Unlock()
		i++
		return lists[i%2], nil
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if _, err := s.Screen(Subject{Name: "John Doe", Country: "FD"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if err := s.Reload(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}
