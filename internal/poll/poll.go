// Package poll is the loop of the refreshers of reference data (exchange rates, sanctions
// lists): one step at a time, each choosing how long to wait before the next, so that a failed
// step can be retried sooner than a good one is repeated.
package poll

import (
	"context"
	"time"
)

// Loop calls step once first has passed, then again each time the wait step returned has
// passed, until ctx ends. A step is never cut short: ctx is checked between steps.
func Loop(ctx context.Context, first time.Duration, step func() time.Duration) {
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(step())
	}
}
