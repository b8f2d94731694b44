package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Depth is how deep a block must be before what it holds counts (a deposit is credited, a v2
// transaction accepted, a refund confirmed): a number of confirmations (the including block is
// the first, each block on top of it one more), or Finalized. In a file and on the command line
// it is a positive integer or the word finalized.
type Depth int64

// Finalized is the depth of the node's finalized block: a block counts once it is at or below
// the block eth_getBlockByNumber("finalized") answers. The node decides what finalized means on
// its network (docs/chains.md): Ethereum's finalized checkpoint, Polygon's latest milestone, a
// rollup's L2 block whose batch is in a finalized L1 block, Tron's latest solidified block. A
// node that answers no finalized block stops the network's watcher (it says why) rather than
// falling back to a count.
const Finalized Depth = math.MinInt64

// IsFinalized reports whether d is the node's finalized block rather than a count.
func (d Depth) IsFinalized() bool { return d == Finalized }

// Blocks is the number of confirmations d requires; 0 for Finalized (and when unset).
func (d Depth) Blocks() int64 { return max(int64(d), 0) }

// String is "finalized" or the count, as the configuration writes it.
func (d Depth) String() string {
	if d.IsFinalized() {
		return "finalized"
	}
	return strconv.FormatInt(int64(d), 10)
}

// Describe is d for a person: "the finalized block" or "12 confirmations".
func (d Depth) Describe() string {
	if d.IsFinalized() {
		return "the finalized block"
	}
	return fmt.Sprintf("%d confirmations", int64(d))
}

// ParseDepth reads a depth as the configuration and flags write it: a positive integer or
// finalized.
func ParseDepth(s string) (Depth, error) {
	s = strings.TrimSpace(s)
	if s == "finalized" {
		return Finalized, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a depth: a number of confirmations (at least 1) or finalized", s)
	}
	return Depth(n), nil
}

// MarshalJSON writes the word finalized or the count.
func (d Depth) MarshalJSON() ([]byte, error) {
	if d.IsFinalized() {
		return []byte(`"finalized"`), nil
	}
	return []byte(strconv.FormatInt(int64(d), 10)), nil
}

// UnmarshalJSON reads a count (any integer: Validate judges it) or the word finalized.
func (d *Depth) UnmarshalJSON(b []byte) error {
	var word string
	if json.Unmarshal(b, &word) == nil {
		if word != "finalized" {
			return fmt.Errorf("confirmations: %q is not a depth: a number of confirmations or finalized", word)
		}
		*d = Finalized
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("confirmations: %s is not a depth: a number of confirmations or finalized", b)
	}
	*d = Depth(n)
	return nil
}

// DefaultDepth is the depth of a network whose confirmations are not configured: what the
// network's finality justifies, each argued with its sources in docs/chains.md.
//
//   - ethereum: Finalized. A block is final once its epoch's checkpoint is finalized (two-thirds
//     of the staked ETH attested to it; reverting it burns at least a third of the stake), about
//     two epochs (64-95 blocks, ~13-19 minutes) behind the head; no number of confirmations
//     below that is final, and execution clients serve the checkpoint as the finalized tag.
//   - polygon: Finalized. Since PIP-11 (milestones, 2023) Heimdall's validators vote milestones
//     of the Bor chain, Bor will not reorganise below the last one and serves it as the
//     finalized tag; before milestones, finality was probabilistic up to the last checkpoint on
//     Ethereum (about 512 blocks), so no count short of that is final.
//   - arbitrum and base: Finalized. Both are rollups: a block from the sequencer is a soft
//     confirmation, a promise of one operator that any number of L2 blocks on top does not make
//     final. An L2 block is final once the batch holding it is in a finalized L1 block
//     (Arbitrum's and the OP Stack's finalized tag; typically 15-30 minutes).
//   - avalanche: 1. Snowman consensus accepts a block once and for all (single-slot finality,
//     about two seconds), and the node (coreth) answers latest with its last accepted block and
//     refuses to serve unaccepted ones; the block that includes a deposit is already final.
//   - tron: 20 (DefaultTronConfirmations). java-tron solidifies a block (makes it irreversible)
//     once 19 of the 27 super representatives have built on it (about a minute); its JSON-RPC
//     also serves the latest solidified block as finalized, which may be configured instead.
//
// Solana's depth is its commitment (SolanaFinalizedConfirmations), not this.
func DefaultDepth(name payoutv1.Network) Depth {
	if d, ok := defaultDepths[name]; ok {
		return d
	}
	if KindOf(name) == KindTron {
		return DefaultTronConfirmations
	}
	return Finalized
}

var defaultDepths = map[payoutv1.Network]Depth{
	payoutv1.NetworkEthereum:  Finalized,
	payoutv1.NetworkPolygon:   Finalized,
	payoutv1.NetworkArbitrum:  Finalized,
	payoutv1.NetworkBase:      Finalized,
	payoutv1.NetworkAvalanche: 1,
	payoutv1.NetworkTron:      DefaultTronConfirmations,
}
