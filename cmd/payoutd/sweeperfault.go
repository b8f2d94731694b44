//go:build sweeperfault

package main

import (
	"context"
	"os"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/sweeper"
)

// The sweeper's crash test (sweeper_crash_test.go) builds payoutd with -tags sweeperfault: a
// binary of this tag stops at one point of a sweep batch, named by $PAYOUT_SWEEPER_FAULT, and
// waits there for the test's SIGKILL, having created the file $PAYOUT_SWEEPER_FAULT_FILE to
// say it got there. No build without the tag has this file, so no deployed sweeper honours the
// variables.
func init() {
	point, marker := os.Getenv("PAYOUT_SWEEPER_FAULT"), os.Getenv("PAYOUT_SWEEPER_FAULT_FILE")
	if (point != faultBeforeBroadcast && point != faultAfterBroadcast) || marker == "" {
		return
	}
	wrapSweeperMover = func(m sweeper.Mover) sweeper.Mover { return &faultMover{Mover: m, point: point, marker: marker} }
}

// faultMover stops the first broadcast of a sweep transaction at its point, for ever. The
// treasury's delegate deployment is sent by the EVM mover itself (Prepare), not through here.
type faultMover struct {
	sweeper.Mover
	point, marker string
}

func (f *faultMover) Broadcast(ctx context.Context, network payoutv1.Network, raw []byte) error {
	if f.point == faultAfterBroadcast {
		if err := f.Mover.Broadcast(ctx, network, raw); err != nil {
			return err
		}
	}
	if err := os.WriteFile(f.marker, raw, 0o600); err != nil {
		return err
	}
	select {} // the test's SIGKILL ends the process here
}
