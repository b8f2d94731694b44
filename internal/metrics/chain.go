package metrics

import (
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var networks = set(
	string(payoutv1.NetworkArbitrum), string(payoutv1.NetworkAvalanche), string(payoutv1.NetworkBase),
	string(payoutv1.NetworkEthereum), string(payoutv1.NetworkPolygon), string(payoutv1.NetworkSolana),
	string(payoutv1.NetworkTron))

// ChainHead records where a network's deposit watcher stands: head is the newest block it
// read from the node, scanned the newest block it has scanned at confirmation depth (its
// cursor). The head lag is their difference: about the confirmation depth when the watcher
// keeps up, more while it catches up or cannot reach a node.
//
// The watcher calls it after each head read:
//
//	metrics.ChainHead(w.network(), head, r.cur.Block)
func ChainHead(network payoutv1.Network, head, scanned int64) {
	n := oneOf(string(network), networks)
	chainHeadBlock.WithLabelValues(n).Set(float64(head))
	chainScannedBlock.WithLabelValues(n).Set(float64(scanned))
	chainHeadLag.WithLabelValues(n).Set(float64(max(head-scanned, 0)))
}

// DepositDetected records a deposit the watcher has recorded at recordedAt, from a block
// mined at blockTime: the detection lag (confirmation time plus the watcher's own delay) and
// the deposit count. A zero blockTime counts the deposit only.
//
// The watcher calls it for each deposit once RecordDeposits succeeded:
//
//	for _, d := range st.Deposits {
//		metrics.DepositDetected(d.Network, d.BlockTime, w.Clock.Now())
//	}
func DepositDetected(network payoutv1.Network, blockTime, recordedAt time.Time) {
	n := oneOf(string(network), networks)
	chainDeposits.WithLabelValues(n).Inc()
	if !blockTime.IsZero() {
		chainDetectionLag.WithLabelValues(n).Set(max(recordedAt.Sub(blockTime).Seconds(), 0))
	}
}

// ChainGap records how many blocks of a gap (ChainCursor status.gap: blocks a watcher scans again
// after it lost its place) the network's watcher has still to scan; 0 when it has none. It stays
// above 0 until the gap is scanned, also across restarts (the watcher reads the gap back from
// its cursor).
//
// The watcher calls it whenever its cursor moves:
//
//	metrics.ChainGap(w.network(), remaining)
func ChainGap(network payoutv1.Network, remaining int64) {
	chainGap.WithLabelValues(oneOf(string(network), networks)).Set(float64(max(remaining, 0)))
}

// Results of a cross-check (ChainCrossCheck).
const (
	CrossCheckAgreed    = "agreed"
	CrossCheckDisagreed = "disagreed"
	CrossCheckUnchecked = "unchecked"
)

var crossCheckResults = set(CrossCheckAgreed, CrossCheckDisagreed, CrossCheckUnchecked)

// ChainCrossCheck counts an answer that credits money (a scanned range, a receipt at depth)
// asked again of a second RPC endpoint, by result: agreed, disagreed (nothing was credited) or
// unchecked (more than one endpoint is configured but no other could be asked).
//
// The chain client calls it through evm.Chain.CrossChecked:
//
//	ch.CrossChecked = func(r evm.CrossCheck) { metrics.ChainCrossCheck(name, string(r)) }
func ChainCrossCheck(network payoutv1.Network, result string) {
	chainCrossChecks.WithLabelValues(oneOf(string(network), networks), oneOf(result, crossCheckResults)).Inc()
}
