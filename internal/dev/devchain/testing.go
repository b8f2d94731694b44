package devchain

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// StartForTest starts dev chains for the networks given (all of Networks when none) in a temp
// dir and stops them when the test ends. Under -short (`make test-unit`) it skips the test, which
// needs anvil; otherwise a missing anvil fails the test: it is a set-up error, not a reason to
// skip (`make anvil` installs it).
func StartForTest(tb TB, networks ...string) *Set {
	tb.Helper()
	anvil := anvilForTest(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Anvil: anvil, Dir: tb.TempDir(), Networks: networks})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// anvilForTest returns the anvil a test runs (FindAnvil), skipping the test under -short and
// failing it when anvil is missing.
func anvilForTest(tb TB) string {
	tb.Helper()
	if short() {
		tb.Skip("-short: this test starts anvil (the dev chains)")
	}
	anvil, err := FindAnvil()
	if err != nil {
		tb.Fatal(err)
	}
	return anvil
}

// short reports go test's -short. It reads the flag rather than calling testing.Short so that
// payout-dev, which links this package, does not link package testing.
func short() bool {
	f := flag.Lookup("test.short")
	return f != nil && f.Value.String() == "true"
}

// TB is the part of testing.TB StartForTest uses; Ginkgo's GinkgoT() has it too.
type TB interface {
	Helper()
	Fatal(args ...any)
	Error(args ...any)
	Skip(args ...any)
	TempDir() string
	Cleanup(func())
}

// FindAnvil returns $PAYOUT_ANVIL (make sets it to bin/anvil), else the bin/anvil of the
// checkout holding the working directory.
func FindAnvil() (string, error) {
	if p := os.Getenv("PAYOUT_ANVIL"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("devchain: anvil not found at PAYOUT_ANVIL=%s: run `make anvil`", p)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "bin", "anvil")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("devchain: anvil not found at %s: run `make anvil`", p)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("devchain: anvil not found (no $PAYOUT_ANVIL, no checkout above the working directory): run `make anvil`")
		}
		dir = parent
	}
}
