package keyuse

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TestTouchOfAWrittenKeyTakesNoLock: every request of a busy key touches it, and a use the
// interval already covers is dropped without the lock that queuing takes (Touch must not wait
// for it) and without an allocation.
func TestTouchOfAWrittenKeyTakesNoLock(t *testing.T) {
	r := New(nil, time.Minute, 0, logr.Discard())
	key := &payoutv1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "k1"}}
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	r.Touch(key, start)
	if len(r.queued) != 1 {
		t.Fatalf("first use: %d queued, want 1", len(r.queued))
	}

	r.mu.Lock()
	done := make(chan struct{})
	go func() {
		r.Touch(key, start.Add(30*time.Second))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("a use within the interval waited for the lock")
	}
	r.mu.Unlock()
	<-done

	if n := testing.AllocsPerRun(1000, func() { r.Touch(key, start.Add(time.Second)) }); n != 0 {
		t.Errorf("a use within the interval: %.1f allocations, want none", n)
	}
	if len(r.queued) != 1 || !r.queued["k1"].Equal(start) {
		t.Errorf("queued %v, want the first use alone", r.queued)
	}

	// past the interval the key is queued again, once
	r.mu.Lock()
	delete(r.queued, "k1")
	r.mu.Unlock()
	r.Touch(key, start.Add(time.Minute))
	r.Touch(key, start.Add(time.Minute+time.Second))
	if len(r.queued) != 1 || !r.queued["k1"].Equal(start.Add(time.Minute)) {
		t.Errorf("after the interval: queued %v, want the use at one minute", r.queued)
	}
}
