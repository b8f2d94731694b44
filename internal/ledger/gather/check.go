package gather

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/ledger"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/poll"
)

// Balances reads the chain's token balances of deposit addresses; networks are those it read.
type Balances func(ctx context.Context, addrs []ledger.Address) (balances map[ledger.Address]*big.Int, networks map[string]bool, err error)

// EVMBalances reads the balances on the EVM chains (and Tron, read the same way) the watchers
// read; the deposit addresses of any other network are not compared.
func EVMBalances(chains map[payoutv1.Network]*evm.Chain) Balances {
	return func(ctx context.Context, addrs []ledger.Address) (map[ledger.Address]*big.Int, map[string]bool, error) {
		byToken := map[[2]string][]ledger.Address{}
		for _, a := range addrs {
			if chains[payoutv1.Network(a.Network)] != nil {
				byToken[[2]string{a.Network, a.Token}] = append(byToken[[2]string{a.Network, a.Token}], a)
			}
		}
		out, networks := map[ledger.Address]*big.Int{}, map[string]bool{}
		for n := range chains {
			networks[string(n)] = true
		}
		for k, as := range byToken {
			owners := make([]string, len(as))
			for i, a := range as {
				owners[i] = a.Address
			}
			got, err := chains[payoutv1.Network(k[0])].TokenBalances(ctx, payoutv1.Token(k[1]), owners)
			if err != nil {
				return nil, nil, err
			}
			for i, a := range as {
				out[a] = got[i]
			}
		}
		return out, networks, nil
	}
}

// Checker checks the whole ledger (from the first fact to now) every Interval, the chain's
// balances of the deposit addresses among its facts that can hold tokens (ledger.ToRead: the
// first check after a start reads every one), and exports the failures
// (payout_ledger_invariant_failures) and the time of the last complete check; the alerts
// PayoutLedgerUnbalanced and PayoutLedgerUnchecked read them (config/prometheus/rules.yaml).
type Checker struct {
	Client client.Reader
	// Store is the archive (nil: none).
	Store *archive.Store
	// Balances reads the chain (nil: not read; ChainAgrees then never fails).
	Balances Balances
	Interval time.Duration
	Clock    clock.PassiveClock
	Log      logr.Logger

	mu sync.Mutex
	// last is what the last complete check counted at each deposit address.
	last map[ledger.Address]ledger.Flow
}

// NeedLeaderElection: one replica checks.
func (c *Checker) NeedLeaderElection() bool { return true }

// Start checks until ctx ends; a check that fails (the API server, the archive or a node did
// not answer) is tried again after a minute at most.
func (c *Checker) Start(ctx context.Context) error {
	poll.Loop(ctx, time.Minute, func() time.Duration {
		r, err := c.Check(ctx)
		if err != nil {
			c.Log.Error(err, "the ledger could not be checked")
			return min(c.Interval, time.Minute)
		}
		for _, f := range r.Failures {
			c.Log.Info("the ledger does not balance", "invariant", f.Invariant, "subject", f.Subject, "message", f.Message)
		}
		return c.Interval
	})
	return nil
}

// Check reads every fact and the chain's balances, builds the ledger up to now and records its
// failures in the metrics.
func (c *Checker) Check(ctx context.Context) (*ledger.Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Clock.Now()
	o, err := Objects(ctx, c.Client, c.Store, now)
	if err != nil {
		return nil, err
	}
	f := ledger.FactsOf(o)
	flows := f.Flows()
	if c.Balances != nil {
		if f.Balances, f.ChainNetworks, err = c.Balances(ctx, ledger.ToRead(flows, c.last)); err != nil {
			return nil, fmt.Errorf("reading the deposit addresses' balances: %w", err)
		}
		// an address the chain disagrees with is read again until it agrees, whatever its flows
		for a, fl := range flows {
			if got := f.Balances[a]; (f.ChainNetworks == nil || f.ChainNetworks[a.Network]) && (got == nil && fl.In.Cmp(fl.Out) != 0 || got != nil && got.Cmp(new(big.Int).Sub(fl.In, fl.Out)) != 0) {
				delete(flows, a)
			}
		}
		c.last = flows
	}
	r := ledger.Build(f, time.Time{}, now)
	failures := map[string]int{}
	for _, fl := range r.Failures {
		failures[string(fl.Invariant)]++
	}
	metrics.LedgerChecked(failures, now)
	return r, nil
}
