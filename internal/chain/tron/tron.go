// Package tron reads Tron through java-tron's Ethereum-compatible JSON-RPC (the node's
// /jsonrpc service: eth_chainId, eth_blockNumber, eth_getBlockByNumber, eth_getLogs,
// eth_getTransactionReceipt). That interface speaks Ethereum's shapes with Tron's values:
// addresses are the 20-byte account id without Tron's 0x41 version byte, block hashes are
// Tron block ids (the first 8 bytes are the height), eth_chainId answers the last 4 bytes of the
// genesis block id, and a TRC-20 transfer emits the same Transfer(address,address,uint256) event
// as an ERC-20. So a Tron network is an evm.Chain with Tron's spelling: the watcher, its
// scanner (log queries, depth, reorg checks) and the v2 lookup are package evm's, and only the
// spelling of what they report differs: Base58Check addresses (T...) and transaction and block
// ids in 64 hex digits without 0x, as Tron's explorers and HTTP API write them.
//
// Differences of java-tron that the scanner meets: eth_getLogs refuses ranges over its
// maxBlockRange (5000 by default, "exceed max block range") and more than maxAddressSize
// addresses; the scanner's range (maxBlockRange, 1000 by default) stays below, and halves on a
// node's refusal. Batches are capped by the node's jsonrpc maxBatchSize: a scan step batches 2
// header reads plus one per block with a matched log, a reorg rewind one per remembered block (at
// most 128).
package tron

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/evm"
)

// Spelling is Tron's: Base58Check addresses, hashes in 64 lower-case hex digits without 0x.
var Spelling = evm.Spelling{
	Address: func(a common.Address) string { return chain.TronAddress(a) },
	Hash:    TxID,
	ParseAddress: func(s string) (common.Address, error) {
		id, err := chain.TronAddressBytes(s)
		if err != nil {
			return common.Address{}, fmt.Errorf("%q: %w", s, err)
		}
		return common.Address(id), nil
	},
	ParseTxHash: ParseTxID,
}

// TxID is a transaction (or block) hash as Tron writes it: 64 lower-case hex digits.
func TxID(h common.Hash) string { return hex.EncodeToString(h[:]) }

// ParseTxID reads a Tron transaction id, with or without 0x, in any case.
func ParseTxID(s string) (common.Hash, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if !chain.IsTronTxID(digits) {
		return common.Hash{}, errors.New("not a Tron transaction id (64 hex digits)")
	}
	return common.HexToHash(digits), nil
}

// NewChain prepares a Tron network from its configuration (kind tron, with defaults applied):
// the JSON-RPC client checks eth_chainId against the configured chain id, token contracts are
// Base58Check addresses.
func NewChain(network payoutv1.Network, n config.Network) (*evm.Chain, error) {
	if n.Kind != config.KindTron {
		return nil, fmt.Errorf("%s is a %s network, not tron", network, n.Kind)
	}
	return evm.NewChainSpelled(network, n, Spelling)
}
