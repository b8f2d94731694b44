package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
)

// TokenDecimals is what decimals() must answer on every configured token contract: amounts are
// counted in base units of 6 decimals, those of USDC and USDT on every supported network.
const TokenDecimals = 6

// decimalsSelector is the 4-byte selector of ERC-20 decimals().
var decimalsSelector = crypto.Keccak256([]byte("decimals()"))[:4]

// CheckTokens checks that every configured token contract is the token it is configured as:
// its decimals() answers TokenDecimals (an 18-decimal contract configured by mistake would
// credit 25 USD for 25 millionths of a millionth of a token), and, when the configuration gives
// a codeHash, the keccak256 of its runtime code is that hash. It asks once, in one request for
// every token; after a success it asks nothing again. The watcher checks before it scans, and
// LookupTx and the refund wallet before they report or send an amount, so a contract that fails
// the check credits and refunds nothing; the error names the token, its contract and what it
// answered.
func (c *Chain) CheckTokens(ctx context.Context) error {
	if c.tokensChecked.Load() {
		return nil
	}
	type check struct {
		addr     common.Address
		decimals hexutil.Bytes
		code     hexutil.Bytes
		want     string // the configured code hash, or ""
		calls    int    // index of its decimals() call in the batch
	}
	checks := make([]*check, 0, len(c.contracts))
	var calls []rpc.BatchElem
	for _, addr := range c.contracts {
		k := &check{addr: addr, want: c.Config.Tokens[c.tokens[addr]].CodeHash, calls: len(calls)}
		checks = append(checks, k)
		calls = append(calls, rpc.BatchElem{Method: "eth_call", Args: []any{
			map[string]any{"to": addr, "data": hexutil.Bytes(decimalsSelector)}, "latest"}, Result: &k.decimals})
		if k.want != "" {
			calls = append(calls, rpc.BatchElem{Method: "eth_getCode", Args: []any{addr, "latest"}, Result: &k.code})
		}
	}
	if err := c.Client.Batch(ctx, calls); err != nil {
		return fmt.Errorf("checking the token contracts: %w", err)
	}
	var errs []error
	for _, k := range checks {
		name := fmt.Sprintf("token %s (%s)", c.tokens[k.addr], c.spell.Address(k.addr))
		if err := calls[k.calls].Error; err != nil {
			errs = append(errs, fmt.Errorf("%s: decimals() failed: %w: is the contract an ERC-20 token on this chain?", name, err))
			continue
		}
		if err := checkDecimals(k.decimals); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		if k.want == "" {
			continue
		}
		if err := calls[k.calls+1].Error; err != nil {
			errs = append(errs, fmt.Errorf("%s: eth_getCode: %w", name, err))
			continue
		}
		if got := crypto.Keccak256Hash(k.code); !strings.EqualFold(got.Hex(), k.want) {
			errs = append(errs, fmt.Errorf("%s: the keccak256 of its code is %s, the configured codeHash is %s: the address is not the expected contract",
				name, strings.ToLower(got.Hex()), strings.ToLower(k.want)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: nothing is credited or refunded on it until the configuration is fixed: %w", c.Network, err)
	}
	c.tokensChecked.Store(true)
	return nil
}

// checkDecimals judges what decimals() answered.
func checkDecimals(answer []byte) error {
	if len(answer) == 0 {
		return errors.New("decimals() answered nothing: the address holds no contract on this chain")
	}
	if len(answer) != 32 {
		return fmt.Errorf("decimals() answered %d bytes, not a uint8", len(answer))
	}
	d := new(big.Int).SetBytes(answer)
	if d.Cmp(big.NewInt(TokenDecimals)) != 0 {
		return fmt.Errorf("decimals() answers %s; the service counts amounts in base units of %d decimals, so this contract is not the token it is configured as", d, TokenDecimals)
	}
	return nil
}
