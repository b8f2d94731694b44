package evm

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// ErrInsufficientFunds means the wallet cannot pay the transfer now (token balance or gas);
// the message says which. Nothing was signed: the same nonce is used once it can.
var ErrInsufficientFunds = errors.New("insufficient funds")

// transferSelector is the 4-byte selector of ERC-20 transfer(address,uint256).
var transferSelector = crypto.Keccak256([]byte("transfer(address,uint256)"))[:4]

// Wallet is a platform wallet that sends one token on one chain: a refund wallet. Its key never
// leaves it and is never printed.
type Wallet struct {
	chain    *Chain
	key      *ecdsa.PrivateKey
	address  common.Address
	token    payoutv1.Token
	contract common.Address
}

// NewWallet makes the wallet of hexKey (with or without 0x) sending token on ch.
func NewWallet(ch *Chain, token payoutv1.Token, hexKey string) (*Wallet, error) {
	t := ch.Config.Tokens[token]
	if t == nil {
		return nil, fmt.Errorf("token %s is not configured on %s", token, ch.Network)
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(hexKey), "0x"))
	if err != nil {
		// the parse error could quote the key: say only that it is not one
		return nil, errors.New("the refund key is not a hex secp256k1 private key")
	}
	return &Wallet{chain: ch, key: key, address: crypto.PubkeyToAddress(key.PublicKey), token: token, contract: common.HexToAddress(t.Contract)}, nil
}

// Address is the wallet's address, lower-case 0x hex.
func (w *Wallet) Address() string { return Hex(w.address) }

// Network is the chain the wallet sends on.
func (w *Wallet) Network() payoutv1.Network { return w.chain.Network }

// Token is the token the wallet sends.
func (w *Wallet) Token() payoutv1.Token { return w.token }

// PendingNonce is the wallet's next nonce counting the transactions in the node's pool.
func (w *Wallet) PendingNonce(ctx context.Context) (uint64, error) {
	var n hexutil.Uint64
	if err := w.chain.Client.Call(ctx, &n, "eth_getTransactionCount", w.address, "pending"); err != nil {
		return 0, fmt.Errorf("eth_getTransactionCount: %w", err)
	}
	return uint64(n), nil
}

// Signed is a signed transaction: its raw bytes and hash.
type Signed struct {
	Raw  []byte
	Hash common.Hash
}

// SignTransfer builds and signs the transfer of amount base units of the token to `to` with
// nonce. It checks first that the token contracts are the configured tokens (Chain.CheckTokens:
// an amount in base units of another token's decimals is not sent), that the transfer would
// succeed (token balance, gas estimate) and
// that the wallet holds the gas at the fee cap, so that a signed transaction is one that can
// be mined; a shortfall is ErrInsufficientFunds with a message naming it. It broadcasts
// nothing.
func (w *Wallet) SignTransfer(ctx context.Context, to string, amount *big.Int, nonce uint64) (*Signed, error) {
	if !common.IsHexAddress(to) {
		return nil, fmt.Errorf("%q is not an EVM address", to)
	}
	if err := w.chain.CheckTokens(ctx); err != nil {
		return nil, err
	}
	data := make([]byte, 0, 68)
	data = append(data, transferSelector...)
	data = append(data, common.LeftPadBytes(common.HexToAddress(to).Bytes(), 32)...)
	data = append(data, common.LeftPadBytes(amount.Bytes(), 32)...)

	var tokenBal hexutil.Bytes
	var ethBal hexutil.Big
	var tip hexutil.Big
	var latest *Header
	balanceOf := append(crypto.Keccak256([]byte("balanceOf(address)"))[:4:4], common.LeftPadBytes(w.address.Bytes(), 32)...)
	calls := []rpc.BatchElem{
		{Method: "eth_call", Args: []any{map[string]any{"to": w.contract, "data": hexutil.Bytes(balanceOf)}, "latest"}, Result: &tokenBal},
		{Method: "eth_getBalance", Args: []any{w.address, "latest"}, Result: &ethBal},
		{Method: "eth_maxPriorityFeePerGas", Result: &tip},
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &latest},
	}
	if err := w.chain.Client.Batch(ctx, calls); err != nil {
		return nil, err
	}
	for _, c := range calls {
		if c.Error != nil {
			return nil, fmt.Errorf("%s: %w", c.Method, c.Error)
		}
	}
	if have := new(big.Int).SetBytes(tokenBal); have.Cmp(amount) < 0 {
		return nil, fmt.Errorf("%w: the refund wallet %s holds %s base units of %s, the refund needs %s", ErrInsufficientFunds, w.Address(), have, w.token, amount)
	}
	var gas hexutil.Uint64
	call := map[string]any{"from": w.address, "to": w.contract, "data": hexutil.Bytes(data)}
	if err := w.chain.Client.Call(ctx, &gas, "eth_estimateGas", call); err != nil {
		return nil, fmt.Errorf("eth_estimateGas of the refund transfer: %w", err)
	}
	if latest == nil || latest.BaseFee == nil {
		return nil, errors.New("the latest block has no base fee: only EIP-1559 chains are supported")
	}
	tipCap := tip.ToInt()
	feeCap := new(big.Int).Add(new(big.Int).Mul(latest.BaseFee.ToInt(), big.NewInt(2)), tipCap)
	gasLimit := uint64(gas) * 12 / 10
	if need := new(big.Int).Mul(feeCap, new(big.Int).SetUint64(gasLimit)); ethBal.ToInt().Cmp(need) < 0 {
		return nil, fmt.Errorf("%w: the refund wallet %s holds %s wei of gas money, the refund may need %s", ErrInsufficientFunds, w.Address(), ethBal.ToInt(), need)
	}
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: w.chain.Config.ChainIDBig(), Nonce: nonce, GasTipCap: tipCap, GasFeeCap: feeCap, Gas: gasLimit,
		To: &w.contract, Data: data,
	})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(w.chain.Config.ChainIDBig()), w.key)
	if err != nil {
		return nil, err
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &Signed{Raw: raw, Hash: signed.Hash()}, nil
}

// Broadcast sends raw signed bytes. A node that already has the transaction answers an error
// that means success; Broadcast returns nil for it.
func (w *Wallet) Broadcast(ctx context.Context, raw []byte) error {
	var hash common.Hash
	err := w.chain.Client.Call(ctx, &hash, "eth_sendRawTransaction", hexutil.Bytes(raw))
	if err != nil && IsNodeError(err) {
		msg := strings.ToLower(err.Error())
		if strings.Contains(msg, "already known") || strings.Contains(msg, "known transaction") || strings.Contains(msg, "already imported") {
			return nil
		}
		if strings.Contains(msg, "insufficient funds") {
			return fmt.Errorf("%w: %v", ErrInsufficientFunds, err)
		}
	}
	if err != nil {
		return fmt.Errorf("eth_sendRawTransaction: %w", err)
	}
	return nil
}

// Receipt reports the wallet's transaction hash as the chain sees it: found, reverted, its
// block and confirmations, and the confirmations it needs now to be at the network's depth
// (with depth finalized, those the finalized block has).
func (w *Wallet) Receipt(ctx context.Context, hash string) (*chain.TxObservation, error) {
	return w.chain.LookupTx(ctx, w.chain.Network, hash)
}

// DecodeRaw reads back a signed transaction (the refund controller checks a persisted one).
func DecodeRaw(raw []byte) (*types.Transaction, error) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, err
	}
	return tx, nil
}

// Sent is a transfer of the wallet's token the wallet made, as its log on chain shows it.
type Sent struct {
	TxHash   string
	LogIndex int64
	Block    int64
	Amount   *big.Int
}

// SentTo lists the transfers of the wallet's token from the wallet to `to` mined at or after
// the block of time since: a Transfer log query filtered on both indexed addresses, in ranges of
// the network's max block range. The refund controller reads it before it signs: a refund whose
// record was lost (an etcd restore) may have been sent already.
func (w *Wallet) SentTo(ctx context.Context, to string, since time.Time) ([]Sent, error) {
	if !common.IsHexAddress(to) {
		return nil, fmt.Errorf("%q is not an EVM address", to)
	}
	head, err := w.chain.HeadNumber(ctx)
	if err != nil {
		return nil, err
	}
	from, err := w.chain.BlockAt(ctx, since, head)
	if err != nil {
		return nil, err
	}
	step := max(w.chain.Config.MaxBlockRange, 1)
	topics := []any{TransferTopic, common.BytesToHash(w.address.Bytes()), common.BytesToHash(common.HexToAddress(to).Bytes())}
	var out []Sent
	for a := from; a <= head; a += step {
		b := min(a+step-1, head)
		var logs []Log
		filter := map[string]any{"fromBlock": hexutil.Uint64(a), "toBlock": hexutil.Uint64(b), "address": w.contract, "topics": topics}
		if err := w.chain.Client.Call(ctx, &logs, "eth_getLogs", filter); err != nil {
			return nil, fmt.Errorf("eth_getLogs(%d..%d): %w", a, b, err)
		}
		for i := range logs {
			l := &logs[i]
			_, _, amount, ok := l.transfer()
			if !ok || l.Removed {
				continue
			}
			out = append(out, Sent{TxHash: strings.ToLower(l.TxHash.Hex()), LogIndex: int64(l.LogIndex), Block: int64(l.BlockNumber), Amount: amount})
		}
	}
	return out, nil
}
