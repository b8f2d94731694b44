package poll

import (
	"context"
	"testing"
	"time"
)

// TestLoopWaitsWhatEachStepSays: the step's answer is the next wait, and the loop ends with its
// context.
func TestLoopWaitsWhatEachStepSays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls []time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		Loop(ctx, 0, func() time.Duration {
			calls = append(calls, time.Now())
			if len(calls) == 3 {
				cancel()
			}
			return 50 * time.Millisecond
		})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not end with its context")
	}
	if len(calls) != 3 {
		t.Fatalf("%d steps, want 3", len(calls))
	}
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].Sub(calls[i-1]); gap < 50*time.Millisecond {
			t.Errorf("step %d came %v after the previous one, before the 50ms it asked for", i, gap)
		}
	}
}
