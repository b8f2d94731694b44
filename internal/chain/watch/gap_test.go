package watch

import (
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/test/metricstest"
)

// gapOf is network's cursor's status.gap.
func gapOf(t testing.TB, network payoutv1.Network) (from, to int64, ok bool) {
	t.Helper()
	g := cursor(t, network).Status.Gap
	if g == nil {
		return 0, 0, false
	}
	return g.From, g.To, true
}

// gapMetric is payout_chain_gap_blocks of network.
func gapMetric(t testing.TB, network payoutv1.Network) float64 {
	t.Helper()
	return metricstest.MustGather(t).Sum(metrics.ChainGapName, "network", string(network))
}

// crossChecks is payout_chain_crosschecks_total of network and result.
func crossChecks(t testing.TB, network payoutv1.Network, result string) float64 {
	t.Helper()
	return metricstest.MustGather(t).Sum(metrics.ChainCrossChecksName, "network", string(network), "result", result)
}

// waitGapScanned waits until network's cursor has no gap and payout_chain_gap_blocks reads 0.
func waitGapScanned(t testing.TB, network payoutv1.Network) {
	t.Helper()
	eventually(t, 20*time.Second, "the gap scanned", func() bool {
		_, _, open := gapOf(t, network)
		return !open && gapMetric(t, network) == 0
	})
}
