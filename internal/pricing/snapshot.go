package pricing

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
)

// embeddedRates is the reference snapshot shipped with the binary; data/README.md records where
// it comes from.
//
//go:embed data/usd.json
var embeddedRates []byte

// embeddedRatesSource names the embedded snapshot in RateTable.Source.
const embeddedRatesSource = "embedded snapshot data/usd.json (@fawazahmed0/currency-api@2026.9.29, date 2026-09-29)"

// maxSnapshotFileSize bounds a snapshot file read at start; the reference file is under 3 KiB
// and a full fawazahmed0 document about 8 KiB.
const maxSnapshotFileSize = 1 << 20

// Snapshot is a RateSource with a fixed table. It never reports stale rates: it is meant for
// development, tests and deployments that deliberately price from a file they control; live
// pricing uses a Refresher.
type Snapshot struct {
	table *RateTable
}

// NewSnapshot returns the snapshot embedded in the binary.
func NewSnapshot() (*Snapshot, error) {
	t, err := ParseRates(embeddedRates, embeddedRatesSource)
	if err != nil {
		return nil, err
	}
	return &Snapshot{table: t}, nil
}

// LoadSnapshotFile reads a newer snapshot from path, in either shape ParseRates accepts. It is
// meant for start-up: a bad file is an error, never a silent fallback to the embedded rates.
func LoadSnapshotFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: open rate snapshot: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSnapshotFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("pricing: read rate snapshot %s: %w", path, err)
	}
	if len(data) > maxSnapshotFileSize {
		return nil, fmt.Errorf("pricing: rate snapshot %s is larger than the %d bytes allowed", path, maxSnapshotFileSize)
	}
	t, err := ParseRates(data, "snapshot file "+path)
	if err != nil {
		return nil, err
	}
	return &Snapshot{table: t}, nil
}

// EmbeddedSnapshot returns the embedded snapshot document as shipped; the dev environment
// serves it to payoutd's Refresher.
func EmbeddedSnapshot() []byte { return embeddedRates }

// Rates returns the snapshot's table.
func (s *Snapshot) Rates(context.Context) (*RateTable, error) { return s.table, nil }

// Table is the snapshot's table, for callers without a context at hand.
func (s *Snapshot) Table() *RateTable { return s.table }
