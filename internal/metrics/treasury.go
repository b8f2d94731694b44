package metrics

import (
	"math/big"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var tokens = set(string(payoutv1.TokenUSDC), string(payoutv1.TokenUSDT))

// Treasury records what the sweeper read of a network at a pass: the treasury's balance of
// token (base units), and its gas wallet's native balance (wei) with the number of full batches
// it pays at the current fee cap. Balances above 2^53 lose precision as float64 samples; they
// are for watching and alerting, never for deciding about money.
//
// The sweeper calls it once per network and token after it read the chain:
//
//	metrics.Treasury(network, token, treasuryUnits, gasWei, batchesLeft)
func Treasury(network payoutv1.Network, token payoutv1.Token, treasuryUnits, gasWei *big.Int, batchesLeft float64) {
	n := oneOf(string(network), networks)
	if treasuryUnits != nil {
		f, _ := new(big.Float).SetInt(treasuryUnits).Float64()
		treasuryBalance.WithLabelValues(n, oneOf(string(token), tokens)).Set(f)
	}
	if gasWei != nil {
		f, _ := new(big.Float).SetInt(gasWei).Float64()
		sweeperGasBalance.WithLabelValues(n).Set(f)
		sweeperGasBatches.WithLabelValues(n).Set(batchesLeft)
	}
}
