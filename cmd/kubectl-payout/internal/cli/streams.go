// Package cli holds what every kubectl-payout command shares: its output streams, the cluster
// client built from the kubeconfig, the clock, and the name it is invoked by.
package cli

import (
	"io"
	"os"
)

// IOStreams are where a command writes: results on Out (scripts read it), everything meant
// for a person alone (errors, notes beside a machine-readable result) on ErrOut.
type IOStreams struct {
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams are the process's stdout and stderr.
func StdStreams() IOStreams { return IOStreams{Out: os.Stdout, ErrOut: os.Stderr} }
