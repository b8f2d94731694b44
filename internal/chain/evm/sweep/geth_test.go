package sweep_test

import (
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/state"
	"github.com/ethereum/go-ethereum/core/tracing"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/core/vm"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/holiman/uint256"

	"github.com/stablepay/payout-operator/internal/chain/evm/sweep"
)

// create2DeployerCode is the runtime code at sweep.Create2Deployer (anvil has it from genesis).
const create2DeployerCode = "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3"

// gethChain applies transactions one by one with go-ethereum's own state transition
// (core.ApplyMessage) under Ethereum mainnet's rules of 2026 (after Osaka and BPO2).
type gethChain struct {
	t      *testing.T
	config *params.ChainConfig
	state  *state.StateDB
	block  vm.BlockContext
	signer types.Signer
	n      int
}

func newGethChain(t *testing.T) *gethChain {
	t.Helper()
	db, err := state.New(types.EmptyRootHash, state.NewDatabaseForTesting())
	if err != nil {
		t.Fatal(err)
	}
	config := params.MainnetChainConfig
	random := common.Hash{1}
	g := &gethChain{t: t, config: config, state: db, signer: types.NewPragueSigner(config.ChainID), block: vm.BlockContext{
		CanTransfer: core.CanTransfer, Transfer: core.Transfer,
		GetHash:  func(uint64) common.Hash { return common.Hash{} },
		GasLimit: 60_000_000, BlockNumber: big.NewInt(24_000_000), Time: *config.BPO2Time + 1,
		Difficulty: new(big.Int), BaseFee: big.NewInt(params.GWei), BlobBaseFee: big.NewInt(1), Random: &random,
	}}
	db.SetCode(sweep.Create2Deployer, common.FromHex(create2DeployerCode), tracing.CodeChangeUnspecified)
	return g
}

// apply runs a signed transaction and returns its receipt's status, gas used and logs.
func (g *gethChain) apply(tx *types.Transaction) *types.Receipt {
	g.t.Helper()
	msg, err := core.TransactionToMessage(tx, g.signer, g.block.BaseFee)
	if err != nil {
		g.t.Fatal(err)
	}
	g.state.SetTxContext(tx.Hash(), g.n, 0)
	g.n++
	evm := vm.NewEVM(g.block, g.state, g.config, vm.Config{})
	res, err := core.ApplyMessage(evm, msg, core.NewGasPool(g.block.GasLimit))
	if err != nil {
		g.t.Fatal(err)
	}
	if res.Failed() {
		g.t.Fatalf("transaction %s reverted: %v", tx.Hash().Hex(), res.Err)
	}
	g.state.Finalise(g.config.Rules(g.block.BlockNumber, true, g.block.Time))
	r := &types.Receipt{Status: types.ReceiptStatusSuccessful, GasUsed: res.UsedGas, TxHash: tx.Hash(),
		Logs: g.state.GetLogs(tx.Hash(), g.block.BlockNumber.Uint64(), common.Hash{}, g.block.Time)}
	if tx.To() == nil {
		r.ContractAddress = crypto.CreateAddress(msg.From, tx.Nonce())
	}
	return r
}

// The EIP-7702 batch's gas per deposit on go-ethereum's EVM, the execution client of Ethereum
// and the base of Base's, Arbitrum's and Polygon's. anvil (revm) gives each authorization the
// 12,500-gas refund EIP-7702 keeps for an authority that exists in the state also when the
// deposit address never held ether; go-ethereum (core/state_transition.go) gives it only to an
// existing account, so this is the figure to expect there. No anvil needed:
//
//	go test -count=1 -v -run TestGasPerDepositGeth ./internal/chain/evm/sweep/
func TestGasPerDepositGeth(t *testing.T) {
	g := newGethChain(t)
	gasKey, treasury := newKey(t), crypto.PubkeyToAddress(newKey(t).PublicKey)
	gasWallet := crypto.PubkeyToAddress(gasKey.PublicKey)
	g.state.SetBalance(gasWallet, uint256.NewInt(params.Ether), tracing.BalanceChangeUnspecified)
	fees := sweep.Fees{TipCap: big.NewInt(params.GWei), FeeCap: big.NewInt(3 * params.GWei)}
	nonce := uint64(0)
	call := func(to *common.Address, data []byte, gas uint64) *types.Receipt {
		t.Helper()
		tx, err := types.SignNewTx(gasKey, g.signer, &types.DynamicFeeTx{
			ChainID: g.config.ChainID, Nonce: nonce, GasTipCap: fees.TipCap, GasFeeCap: fees.FeeCap, Gas: gas, To: to, Data: data,
		})
		if err != nil {
			t.Fatal(err)
		}
		nonce++
		return g.apply(tx)
	}
	applyRaw := func(s *sweep.Signed) *types.Receipt {
		t.Helper()
		tx := new(types.Transaction)
		if err := tx.UnmarshalBinary(s.Raw); err != nil {
			t.Fatal(err)
		}
		nonce++
		return g.apply(tx)
	}

	s, err := sweep.SignDeploy(g.config.ChainID, treasury, gasKey, nonce, fees)
	if err != nil {
		t.Fatal(err)
	}
	applyRaw(s)
	if len(g.state.GetCode(sweep.DelegateAddress(treasury))) == 0 {
		t.Fatal("the delegate is not deployed")
	}
	bin, err := os.ReadFile("testdata/PermitToken.bin")
	if err != nil {
		t.Fatal(err)
	}
	token := call(nil, common.FromHex(strings.TrimSpace(string(bin))), 3_000_000).ContractAddress
	call(&token, pack("mint", treasury, big.NewInt(1)), 100_000)

	var rows []string
	for _, n := range []int{1, 10, 50} {
		ds := make([]sweep.Deposit, n)
		sum := new(big.Int)
		for i := range ds {
			ds[i].Key = newKey(t) // fresh: it never held ether, so it is not in the state
			a := big.NewInt(int64(1_000_000*(i+1) + i))
			sum.Add(sum, a)
			call(&token, pack("mint", ds[i].Address(), a), 100_000)
			if g.state.Exist(ds[i].Address()) {
				t.Fatalf("deposit %s exists in the state before its sweep", ds[i].Address().Hex())
			}
		}
		s, err := sweep.Sign(sweep.Batch{ChainID: g.config.ChainID, Token: token, Treasury: treasury, Deposits: ds, GasKey: gasKey, GasNonce: nonce, Fees: fees})
		if err != nil {
			t.Fatal(err)
		}
		r := applyRaw(s)
		moved, err := sweep.Swept(r, token, treasury)
		if err != nil {
			t.Fatal(err)
		}
		total := new(big.Int)
		for _, v := range moved {
			total.Add(total, v)
		}
		if len(moved) != n || total.Cmp(sum) != 0 {
			t.Errorf("batch of %d: Swept found %d deposits and %s base units, want %d and %s", n, len(moved), total, n, sum)
		}
		if r.GasUsed > sweep.GasLimit(n) {
			t.Errorf("batch of %d used %d gas, above its limit %d", n, r.GasUsed, sweep.GasLimit(n))
		}
		for _, d := range ds {
			if b := g.state.GetBalance(d.Address()); b.Sign() != 0 {
				t.Errorf("deposit %s holds %s wei", d.Address().Hex(), b)
			}
		}
		rows = append(rows, fmt.Sprintf("| c. EIP-7702 batch (sweep.Sign), go-ethereum's EVM | %d | %d | 0 |", n, r.GasUsed/uint64(n)))
	}
	t.Logf("\n%s", strings.Join(rows, "\n"))
}
