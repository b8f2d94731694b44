package evm

import (
	"slices"
	"sync"
	"testing"
)

// results is what a Chain's CrossChecked heard.
type results struct {
	mu  sync.Mutex
	got []CrossCheck
}

// crossResults records ch's cross-check outcomes.
func crossResults(ch *Chain) *results {
	r := &results{}
	ch.CrossChecked = func(c CrossCheck) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, c)
	}
	return r
}

// want checks that the last outcome heard is c.
func (r *results) want(t *testing.T, c CrossCheck) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 || r.got[len(r.got)-1] != c {
		t.Errorf("cross-checks heard %v, want the last to be %s", slices.Clone(r.got), c)
	}
}
