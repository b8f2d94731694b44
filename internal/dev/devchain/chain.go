package devchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/stablepay/payout-operator/internal/chain/token"
)

// erc20 packs and unpacks the dev tokens' calls and events.
var erc20 = token.NewStableToken()

// tokenContract binds a dev token of this chain; the name must be one of c.Tokens.
func (c *Chain) tokenContract(name string) *bind.BoundContract {
	return erc20.Instance(c.Client, c.Tokens[name])
}

func (c *Chain) checkToken(name string) error {
	if _, ok := c.Tokens[name]; !ok {
		return fmt.Errorf("devchain %s: no token %q", c.Network, name)
	}
	return nil
}

// BalanceOf returns owner's balance of a dev token, in base units.
func (c *Chain) BalanceOf(ctx context.Context, tokenName string, owner common.Address) (*big.Int, error) {
	if err := c.checkToken(tokenName); err != nil {
		return nil, err
	}
	return bind.Call(c.tokenContract(tokenName), &bind.CallOpts{Context: ctx}, erc20.PackBalanceOf(owner), erc20.UnpackBalanceOf)
}

// Decimals returns a dev token's decimals (6).
func (c *Chain) Decimals(ctx context.Context, tokenName string) (uint8, error) {
	if err := c.checkToken(tokenName); err != nil {
		return 0, err
	}
	return bind.Call(c.tokenContract(tokenName), &bind.CallOpts{Context: ctx}, erc20.PackDecimals(), erc20.UnpackDecimals)
}

// NewTransfer signs, without sending, an ERC-20 transfer of amount base units of a dev token
// from key's wallet to `to`, with the wallet's next pending nonce: for Reorg, or to send later.
func (c *Chain) NewTransfer(ctx context.Context, key *ecdsa.PrivateKey, tokenName string, to common.Address, amount *big.Int) (*types.Transaction, error) {
	if err := c.checkToken(tokenName); err != nil {
		return nil, err
	}
	opts := bind.NewKeyedTransactor(key, new(big.Int).SetUint64(c.ChainID))
	opts.Context, opts.NoSend = ctx, true
	return bind.Transact(c.tokenContract(tokenName), opts, erc20.PackTransfer(to, amount))
}

// SendTransfer sends an ERC-20 transfer of amount base units of a dev token from key's wallet
// to `to` and returns it without waiting. Concurrent sends on one Chain get distinct nonces.
func (c *Chain) SendTransfer(ctx context.Context, key *ecdsa.PrivateKey, tokenName string, to common.Address, amount *big.Int) (*types.Transaction, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	tx, err := c.NewTransfer(ctx, key, tokenName, to, amount)
	if err != nil {
		return nil, err
	}
	return tx, c.Client.SendTransaction(ctx, tx)
}

// Transfer sends an ERC-20 transfer (see SendTransfer) and waits for its receipt, failing when
// the transfer reverted. With the default block time it is mined within a second.
func (c *Chain) Transfer(ctx context.Context, key *ecdsa.PrivateKey, tokenName string, to common.Address, amount *big.Int) (*types.Receipt, error) {
	tx, err := c.SendTransfer(ctx, key, tokenName, to, amount)
	if err != nil {
		return nil, err
	}
	r, err := c.WaitMined(ctx, tx.Hash())
	if err != nil {
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, fmt.Errorf("devchain %s: transfer %s reverted", c.Network, tx.Hash())
	}
	return r, nil
}

// WaitMined polls for a transaction's receipt until it is mined or ctx ends.
func (c *Chain) WaitMined(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := c.Client.TransactionReceipt(ctx, hash)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devchain %s: waiting for %s: %w", c.Network, hash, ctx.Err())
		case <-tick.C:
		}
	}
}

// TransferEvents returns a dev token's Transfer events in blocks [from, to] (to nil: up to the
// head), through the typed bindings.
func (c *Chain) TransferEvents(ctx context.Context, tokenName string, from uint64, to *uint64) ([]*token.StableTokenTransfer, error) {
	if err := c.checkToken(tokenName); err != nil {
		return nil, err
	}
	it, err := bind.FilterEvents(c.tokenContract(tokenName), &bind.FilterOpts{Context: ctx, Start: from, End: to}, erc20.UnpackTransferEvent)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var evs []*token.StableTokenTransfer
	for it.Next() {
		evs = append(evs, it.Value())
	}
	return evs, it.Error()
}

// Mine mines n blocks at once (anvil_mine), on top of interval mining.
func (c *Chain) Mine(ctx context.Context, n int) error {
	return c.RPC.CallContext(ctx, nil, "anvil_mine", hexutil.Uint64(uint64(n)))
}

// ReorgTx places a signed transaction into the blocks a Reorg makes: BlockOffset 0 is the
// first replaced block.
type ReorgTx struct {
	Tx          *types.Transaction
	BlockOffset uint64
}

// Reorg replaces the last depth blocks with depth new blocks (anvil_reorg): the transactions of
// the replaced blocks are dropped, their logs and receipts disappear, and the txs given are
// mined into the new blocks. A transaction can be moved to another block by reorging it out and
// passing it back at another offset. The head keeps its number and changes its hash.
func (c *Chain) Reorg(ctx context.Context, depth uint64, txs ...ReorgTx) error {
	pairs := make([][2]any, 0, len(txs))
	for _, t := range txs {
		raw, err := t.Tx.MarshalBinary()
		if err != nil {
			return err
		}
		pairs = append(pairs, [2]any{hexutil.Bytes(raw), t.BlockOffset})
	}
	return c.RPC.CallContext(ctx, nil, "anvil_reorg", depth, pairs)
}

// Snapshot saves the chain's state and returns its id for Revert (evm_snapshot).
func (c *Chain) Snapshot(ctx context.Context) (string, error) {
	var id string
	err := c.RPC.CallContext(ctx, &id, "evm_snapshot")
	return id, err
}

// Revert returns the chain to a snapshot (evm_revert): the blocks mined since are gone. A
// snapshot can be reverted to once.
func (c *Chain) Revert(ctx context.Context, id string) error {
	var ok bool
	if err := c.RPC.CallContext(ctx, &ok, "evm_revert", id); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("devchain %s: no snapshot %s", c.Network, id)
	}
	return nil
}

// ReorgFrom replaces block number and every block after it (see Reorg), placing txs into the
// new blocks (BlockOffset 0 is the new block number). Interval mining can add a block between
// reading the head and the reorg; ReorgFrom then reorgs again from the new head until block
// number itself has been replaced.
func (c *Chain) ReorgFrom(ctx context.Context, number uint64, txs ...ReorgTx) error {
	old, err := c.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(number))
	if err != nil {
		return err
	}
	for range 5 {
		head, err := c.Client.BlockNumber(ctx)
		if err != nil {
			return err
		}
		if err := c.Reorg(ctx, head-number+1, txs...); err != nil {
			return err
		}
		after, err := c.Client.BlockNumber(ctx)
		if err != nil {
			return err
		}
		h, err := c.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(number))
		if err != nil {
			return err
		}
		// A changed hash proves the block was replaced; an unchanged head proves the reorg had
		// the right depth (and made an identical block, which only an empty one can be).
		if h.Hash() != old.Hash() || after == head {
			return nil
		}
	}
	return fmt.Errorf("devchain %s: block %d was not replaced: the head kept moving", c.Network, number)
}
