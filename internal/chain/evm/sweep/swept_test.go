package sweep_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/stablepay/payout-operator/internal/chain/evm/sweep"
)

func transferLog(token, from, to common.Address, amount int64) *types.Log {
	return &types.Log{
		Address: token,
		Topics:  []common.Hash{crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)")), common.BytesToHash(from.Bytes()), common.BytesToHash(to.Bytes())},
		Data:    common.LeftPadBytes(big.NewInt(amount).Bytes(), 32),
	}
}

// Swept counts only the token's Transfer events to the treasury, adds up an address's events,
// and counts nothing of a reverted transaction.
func TestSweptCountsOnlyTheTokensTransfersToTheTreasury(t *testing.T) {
	token, other := common.HexToAddress("0x01"), common.HexToAddress("0x02")
	treasury, stranger := common.HexToAddress("0x0a"), common.HexToAddress("0x0b")
	d1, d2 := common.HexToAddress("0xd1"), common.HexToAddress("0xd2")
	r := &types.Receipt{Status: types.ReceiptStatusSuccessful, Logs: []*types.Log{
		transferLog(token, d1, treasury, 25_000_000),
		transferLog(token, d2, treasury, 7),
		transferLog(token, d1, treasury, 1),          // a second event of the same address
		transferLog(other, d2, treasury, 1_000_000),  // another contract's event
		transferLog(token, d2, stranger, 5_000_000),  // not to the treasury
		{Address: token, Topics: []common.Hash{{1}}}, // not a Transfer
	}}
	got, err := sweep.Swept(r, token, treasury)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[d1].Cmp(big.NewInt(25_000_001)) != 0 || got[d2].Cmp(big.NewInt(7)) != 0 {
		t.Errorf("Swept = %v, want d1: 25000001, d2: 7", got)
	}
	r.Status = types.ReceiptStatusFailed
	if got, err := sweep.Swept(r, token, treasury); err != nil || len(got) != 0 {
		t.Errorf("a reverted sweep: Swept = %v, %v; want nothing moved", got, err)
	}
	r.Status = types.ReceiptStatusSuccessful
	r.Logs = []*types.Log{{Address: token, Topics: transferLog(token, d1, treasury, 1).Topics, Data: []byte{1}}}
	if _, err := sweep.Swept(r, token, treasury); err == nil {
		t.Error("a Transfer event with 1 byte of data was counted")
	}
}

// Two treasuries have two delegates: a deposit key authorizes the delegate of its treasury only.
func TestDelegateAddressIsTheTreasurys(t *testing.T) {
	a, b := common.HexToAddress("0x0a"), common.HexToAddress("0x0b")
	if sweep.DelegateAddress(a) == sweep.DelegateAddress(b) {
		t.Errorf("DelegateAddress(a) = %s, DelegateAddress(b) = %s", sweep.DelegateAddress(a).Hex(), sweep.DelegateAddress(b).Hex())
	}
}
