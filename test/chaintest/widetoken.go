package chaintest

import (
	"context"
	"crypto/ecdsa"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/stablepay/payout-operator/internal/dev/devchain"
)

// WideTokenAddress is where WideToken puts its contract.
var WideTokenAddress = common.HexToAddress("0x00000000000000000000000000000000000e1818")

// wideTokenCode is the runtime code of WideToken's contract, hand-assembled:
//
//	if calldata[0:4] == decimals():  return uint256(18)
//	else (transfer(to, amount)):     LOG3(amount; Transfer, caller, to); return true
var wideTokenCode = append(append(common.FromHex(
	"600035"+ // CALLDATALOAD(0)
		"60e01c"+ // >> 224: the selector
		"63313ce567"+ // decimals()
		"14"+"604957"+ // EQ, JUMPI to 0x49
		"602435"+"600052"+ // MSTORE(0, CALLDATALOAD(36)): the amount
		"600435"+ // CALLDATALOAD(4): to, topic 2
		"33"+ // CALLER: from, topic 1
		"7f"), // PUSH32 topic 0
	crypto.Keccak256([]byte("Transfer(address,address,uint256)"))...),
	common.FromHex(
		"60206000a3"+ // LOG3(0, 32, ...)
			"600160005260206000f3"+ // return true
			"5b"+ // 0x49: JUMPDEST
			"601260005260206000f3")...) // return 18

// WideToken puts on c, at WideTokenAddress (anvil_setCode), a contract that answers decimals()
// with 18 and emits an ERC-20 Transfer(caller, to, amount) for any transfer(to, amount), with
// no balances behind it: an 18-decimal token configured by mistake as a 6-decimal one, whose
// transfer of 25,000,000 base units (25 USD at 6 decimals) moves 25 millionths of a millionth
// of a token.
func WideToken(tb T, c *devchain.Chain) common.Address {
	tb.Helper()
	if err := c.RPC.CallContext(context.Background(), nil, "anvil_setCode", WideTokenAddress, hexutil.Bytes(wideTokenCode)); err != nil {
		tb.Fatal(err)
	}
	return WideTokenAddress
}

// SendWide calls transfer(to, amount) on the WideToken of c from key and mines it into one new
// block (under ManualMining); it returns the transaction and the block number.
func SendWide(tb T, c *devchain.Chain, key *ecdsa.PrivateKey, to common.Address, amount int64) (*ethtypes.Transaction, int64) {
	tb.Helper()
	ctx := context.Background()
	nonce, err := c.Client.PendingNonceAt(ctx, crypto.PubkeyToAddress(key.PublicKey))
	if err != nil {
		tb.Fatal(err)
	}
	data := append(common.FromHex("a9059cbb"), common.LeftPadBytes(to.Bytes(), 32)...) // transfer(address,uint256)
	data = append(data, common.LeftPadBytes(big.NewInt(amount).Bytes(), 32)...)
	chainID := new(big.Int).SetUint64(c.ChainID)
	addr := WideTokenAddress
	tx, err := ethtypes.SignTx(ethtypes.NewTx(&ethtypes.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9), Gas: 100_000, To: &addr, Data: data,
	}), ethtypes.LatestSignerForChainID(chainID), key)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Client.SendTransaction(ctx, tx); err != nil {
		tb.Fatal(err)
	}
	Mine(tb, c, 1)
	r, err := c.WaitMined(ctx, tx.Hash())
	if err != nil {
		tb.Fatal(err)
	}
	if r.Status != ethtypes.ReceiptStatusSuccessful || len(r.Logs) != 1 {
		tb.Fatalf("the wide token's transfer %s: status %d, %d logs", tx.Hash(), r.Status, len(r.Logs))
	}
	return tx, r.BlockNumber.Int64()
}
