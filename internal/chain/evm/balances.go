package evm

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// balanceOfSelector is the 4-byte selector of ERC-20 balanceOf(address).
var balanceOfSelector = crypto.Keccak256([]byte("balanceOf(address)"))[:4]

// balancesPerBatch bounds one JSON-RPC batch of balance reads (public endpoints refuse large ones).
const balancesPerBatch = 100

// TokenBalances reads what each of owners (spelled as the chain spells addresses) holds of
// token at the latest block, in base units, in owners' order: the treasury ledger's check of
// what the deposit addresses hold.
func (c *Chain) TokenBalances(ctx context.Context, token payoutv1.Token, owners []string) ([]*big.Int, error) {
	var contract common.Address
	found := false
	for addr, t := range c.tokens {
		if t == token {
			contract, found = addr, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: token %s is not configured", c.Network, token)
	}
	out := make([]*big.Int, len(owners))
	for start := 0; start < len(owners); start += balancesPerBatch {
		end := min(start+balancesPerBatch, len(owners))
		results := make([]hexutil.Bytes, end-start)
		calls := make([]rpc.BatchElem, 0, end-start)
		for i, owner := range owners[start:end] {
			addr, err := c.spell.ParseAddress(owner)
			if err != nil {
				return nil, fmt.Errorf("%s: deposit address %q: %w", c.Network, owner, err)
			}
			data := append(append([]byte{}, balanceOfSelector...), common.LeftPadBytes(addr.Bytes(), 32)...)
			calls = append(calls, rpc.BatchElem{Method: "eth_call",
				Args: []any{map[string]any{"to": contract, "data": hexutil.Bytes(data)}, "latest"}, Result: &results[i]})
		}
		if err := c.Client.Batch(ctx, calls); err != nil {
			return nil, err
		}
		for i, call := range calls {
			if call.Error != nil {
				return nil, fmt.Errorf("%s: balanceOf(%s): %w", c.Network, owners[start+i], call.Error)
			}
			out[start+i] = new(big.Int).SetBytes(results[i])
		}
	}
	return out, nil
}
