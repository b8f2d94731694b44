package devchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/chain/token"
)

// Gas limits of the deployer's transactions, fixed so that they can be signed before the
// contract they call is mined.
const (
	deployGas = 2_000_000
	mintGas   = 100_000
)

// minGas is the least ether a funded wallet keeps; below it Start restores anvil's 10,000.
var (
	minGas     = new(big.Int).Mul(big.NewInt(100), big.NewInt(params.Ether))
	defaultGas = new(big.Int).Mul(big.NewInt(10_000), big.NewInt(params.Ether))
)

// holding is a balance Start guarantees.
type holding struct {
	holder common.Address
	token  string
}

// holdings lists the balances Start guarantees on a network: the funded key and the refund
// wallet hold every token (a failed transfer's deposit is refunded in USDC on base, a stray
// deposit on its own network in its own token).
func holdings(network string) []holding {
	var hs []holding
	for _, t := range tokensOf(network) {
		hs = append(hs, holding{crypto.PubkeyToAddress(fundedKey.PublicKey), t}, holding{crypto.PubkeyToAddress(refundKey.PublicKey), t})
	}
	return hs
}

// ensureTokens deploys the tokens that are not on the chain yet, at their fixed addresses, and
// mints to every holder below MinBalance. On a fresh chain that is one block of transactions.
func (c *Chain) ensureTokens(ctx context.Context, log logr.Logger) error {
	deployer := crypto.PubkeyToAddress(deployerKey.PublicKey)
	nonce, err := c.Client.PendingNonceAt(ctx, deployer)
	if err != nil {
		return err
	}
	head, err := c.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return err
	}
	opts := bind.NewKeyedTransactor(deployerKey, new(big.Int).SetUint64(c.ChainID))
	opts.Context = ctx
	opts.NoSend = true
	opts.GasTipCap = big.NewInt(params.GWei)
	opts.GasFeeCap = new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(4)), opts.GasTipCap)
	next := func(gas uint64) *bind.TransactOpts {
		o := *opts
		o.Nonce, o.GasLimit = new(big.Int).SetUint64(nonce), gas
		nonce++
		return &o
	}

	var txs []*types.Transaction
	deployed := map[string]bool{}
	for i, t := range tokensOf(c.Network) {
		addr := crypto.CreateAddress(deployer, uint64(i))
		c.Tokens[t] = addr
		code, err := c.Client.CodeAt(ctx, addr, nil)
		if err != nil {
			return err
		}
		if len(code) > 0 {
			continue
		}
		if nonce != uint64(i) {
			return fmt.Errorf("%w: no %s code at %s, but the deployer's nonce is %d", errInconsistent, t, addr, nonce)
		}
		info := tokenInfo[t]
		_, tx, err := bind.DeployContract(next(deployGas), common.FromHex(token.StableTokenMetaData.Bin), c.Client,
			erc20.PackConstructor(info.name, info.symbol))
		if err != nil {
			return fmt.Errorf("deploying %s: %w", t, err)
		}
		txs, deployed[t] = append(txs, tx), true
		log.Info("deploying", "token", t, "address", addr)
	}
	for _, h := range holdings(c.Network) {
		if !deployed[h.token] {
			bal, err := c.BalanceOf(ctx, h.token, h.holder)
			if err != nil {
				return err
			}
			if bal.Cmp(MinBalance) >= 0 {
				continue
			}
		}
		tx, err := bind.Transact(c.tokenContract(h.token), next(mintGas), erc20.PackMint(h.holder, MintAmount))
		if err != nil {
			return fmt.Errorf("minting %s: %w", h.token, err)
		}
		txs = append(txs, tx)
	}
	for _, h := range holdings(c.Network) {
		if err := c.ensureGas(ctx, h.holder); err != nil {
			return err
		}
	}
	if len(txs) == 0 {
		return nil
	}
	for _, tx := range txs {
		if err := c.Client.SendTransaction(ctx, tx); err != nil {
			return err
		}
	}
	// Mine them now rather than at the next interval.
	if err := c.Mine(ctx, 1); err != nil {
		return err
	}
	for _, tx := range txs {
		r, err := c.WaitMined(ctx, tx.Hash())
		if err != nil {
			return err
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("deployer transaction %s failed", tx.Hash())
		}
	}
	return nil
}

// ensureGas restores a wallet's ether when it runs low (a long-lived chain).
func (c *Chain) ensureGas(ctx context.Context, addr common.Address) error {
	bal, err := c.Client.BalanceAt(ctx, addr, nil)
	if err != nil || bal.Cmp(minGas) >= 0 {
		return err
	}
	return c.RPC.CallContext(ctx, nil, "anvil_setBalance", addr, (*hexutil.Big)(defaultGas))
}
