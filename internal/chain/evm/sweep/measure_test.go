package sweep_test

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/stablepay/payout-operator/internal/chain/evm/sweep"
)

// The gas each sweeping mechanism costs per deposit, and the native coins it leaves on deposit
// addresses, measured on anvil with one token (testdata/PermitToken.sol: OpenZeppelin 4.9.6's
// ERC20 with ERC20Permit, 6 decimals) for all of them, into a treasury whose balance is not
// zero (the steady state). The table of docs/benchmarks.md ("Sweeping: gas per deposit") is
// this test's log:
//
//	go test -count=1 -v -run TestGasPerDeposit ./internal/chain/evm/sweep/
//
// It asserts what the mechanisms promise: every deposit's tokens reach the treasury to the base
// unit, and the permit and EIP-7702 sweeps leave no native coin on a deposit address.
func TestGasPerDeposit(t *testing.T) {
	e := newEnv(t)
	e.token = e.deployPermitToken()
	e.mint(map[common.Address]int64{e.treasury: 1})

	var rows []string
	rows = append(rows, e.measureTopUp(10))
	rows = append(rows, e.measurePermit(10))
	for _, n := range []int{10, 50} {
		rows = append(rows, e.measurePermitBatch(n))
	}
	for _, n := range []int{1, 10, 50} {
		rows = append(rows, e.measure7702(n))
	}
	t.Logf("\n| mechanism | deposits | gas per deposit | native stranded per deposit (wei) |\n|---|---:|---:|---:|\n%s", strings.Join(rows, "\n"))
}

var permitToken = func() abi.ABI {
	j, err := os.ReadFile("testdata/PermitToken.abi")
	if err != nil {
		panic(err)
	}
	a, err := abi.JSON(strings.NewReader(string(j)))
	if err != nil {
		panic(err)
	}
	return a
}()

func pack(method string, args ...any) []byte {
	data, err := permitToken.Pack(method, args...)
	if err != nil {
		panic(err)
	}
	return data
}

func (e *env) deployPermitToken() common.Address {
	e.t.Helper()
	bin, err := os.ReadFile("testdata/PermitToken.bin")
	if err != nil {
		e.t.Fatal(err)
	}
	r := e.waitAll(e.sendAll(e.gasKey, []call{{data: common.FromHex(strings.TrimSpace(string(bin))), gas: 3_000_000}}))[0]
	if r.ContractAddress == (common.Address{}) {
		e.t.Fatal("the permit token was not deployed")
	}
	return r.ContractAddress
}

// mint mints each holder its amount of the permit token.
func (e *env) mint(amounts map[common.Address]int64) {
	e.t.Helper()
	var calls []call
	for a, n := range amounts {
		calls = append(calls, call{to: &e.token, data: pack("mint", a, big.NewInt(n)), gas: 100_000})
	}
	e.waitAll(e.sendAll(e.gasKey, calls))
}

type call struct {
	to    *common.Address // nil: a contract creation
	data  []byte
	value *big.Int
	gas   uint64
}

// sendAll signs and sends calls from key with consecutive nonces and the current fees.
func (e *env) sendAll(k *ecdsa.PrivateKey, calls []call) []common.Hash {
	e.t.Helper()
	nonce, err := e.c.Client.PendingNonceAt(e.ctx, crypto.PubkeyToAddress(k.PublicKey))
	if err != nil {
		e.t.Fatal(err)
	}
	f := e.fees()
	chainID := new(big.Int).SetUint64(e.c.ChainID)
	var hashes []common.Hash
	for i, c := range calls {
		tx, err := types.SignNewTx(k, types.NewPragueSigner(chainID), &types.DynamicFeeTx{
			ChainID: chainID, Nonce: nonce + uint64(i), GasTipCap: f.TipCap, GasFeeCap: f.FeeCap,
			Gas: c.gas, To: c.to, Value: c.value, Data: c.data,
		})
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.c.Client.SendTransaction(e.ctx, tx); err != nil {
			e.t.Fatal(err)
		}
		hashes = append(hashes, tx.Hash())
	}
	return hashes
}

// waitAll waits for every receipt and fails the test on a revert.
func (e *env) waitAll(hashes []common.Hash) []*types.Receipt {
	e.t.Helper()
	var rs []*types.Receipt
	for _, h := range hashes {
		r, err := e.c.WaitMined(e.ctx, h)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			e.t.Fatalf("transaction %s reverted", h.Hex())
		}
		rs = append(rs, r)
	}
	return rs
}

// fund derives n fresh deposit keys and mints each a different amount of the permit token; it
// returns them and the sum.
func (e *env) fund(n int) ([]sweep.Deposit, *big.Int) {
	e.t.Helper()
	ds := make([]sweep.Deposit, n)
	amounts := map[common.Address]int64{}
	sum := new(big.Int)
	for i := range ds {
		e.next++
		k, err := e.deposits.Key(fmt.Sprintf("0/0/1/%d", e.next))
		if err != nil {
			e.t.Fatal(err)
		}
		ds[i].Key = k
		a := int64(1_000_000*(i+1) + i) // different amounts, some not whole tokens
		amounts[ds[i].Address()] = a
		sum.Add(sum, big.NewInt(a))
	}
	e.mint(amounts)
	return e.withNonces(ds), sum
}

func (e *env) tokenOf(a common.Address) *big.Int {
	e.t.Helper()
	var out hexutil.Bytes
	if err := e.c.RPC.CallContext(e.ctx, &out, "eth_call", map[string]any{"to": e.token, "data": hexutil.Bytes(pack("balanceOf", a))}, "latest"); err != nil {
		e.t.Fatal(err)
	}
	return new(big.Int).SetBytes(out)
}

// check asserts that the treasury gained sum and every deposit holds no token, and returns the
// native coins left on the deposits.
func (e *env) check(name string, ds []sweep.Deposit, before, sum *big.Int) *big.Int {
	e.t.Helper()
	if got := new(big.Int).Sub(e.tokenOf(e.treasury), before); got.Cmp(sum) != 0 {
		e.t.Errorf("%s: the treasury gained %s base units, want %s", name, got, sum)
	}
	stranded := new(big.Int)
	for _, d := range ds {
		if b := e.tokenOf(d.Address()); b.Sign() != 0 {
			e.t.Errorf("%s: deposit %s still holds %s base units", name, d.Address().Hex(), b)
		}
		stranded.Add(stranded, e.nativeBalance(d.Address()))
	}
	return stranded
}

func row(name string, n int, gas uint64, stranded *big.Int) string {
	per := new(big.Int).Div(stranded, big.NewInt(int64(n)))
	return fmt.Sprintf("| %s | %d | %d | %s |", name, n, gas/uint64(n), per)
}

func gasOf(rs []*types.Receipt) uint64 {
	var g uint64
	for _, r := range rs {
		g += r.GasUsed
	}
	return g
}

// measureTopUp: the gas wallet sends each deposit address the gas its token transfer may cost
// (the estimate × the fee cap, what a node requires the sender to hold), then each deposit key
// sends its balance to the treasury.
func (e *env) measureTopUp(n int) string {
	e.t.Helper()
	ds, sum := e.fund(n)
	before := e.tokenOf(e.treasury)
	f := e.fees()
	var topUps []call
	limits := make([]uint64, n)
	amounts := make([]*big.Int, n)
	for i, d := range ds {
		amounts[i] = e.tokenOf(d.Address())
		var est hexutil.Uint64
		if err := e.c.RPC.CallContext(e.ctx, &est, "eth_estimateGas", map[string]any{
			"from": d.Address(), "to": e.token, "data": hexutil.Bytes(pack("transfer", e.treasury, amounts[i])),
		}); err != nil {
			e.t.Fatal(err)
		}
		limits[i] = uint64(est)
		to := d.Address()
		topUps = append(topUps, call{to: &to, value: new(big.Int).Mul(f.FeeCap, new(big.Int).SetUint64(limits[i])), gas: params.TxGas})
	}
	rs := e.waitAll(e.sendAll(e.gasKey, topUps))
	var hashes []common.Hash
	for i, d := range ds {
		hashes = append(hashes, e.sendAll(d.Key, []call{{to: &e.token, data: pack("transfer", e.treasury, amounts[i]), gas: limits[i]}})...)
	}
	rs = append(rs, e.waitAll(hashes)...)
	stranded := e.check("top-up", ds, before, sum)
	toppedUp := new(big.Int)
	for _, c := range topUps {
		toppedUp.Add(toppedUp, c.value)
	}
	e.t.Logf("top-up: %s wei sent to %d deposit addresses (fee cap %s wei per gas), %s wei left on them", toppedUp, n, f.FeeCap, stranded)
	return row("a. gas top-up, then a transfer by the deposit key", n, gasOf(rs), stranded)
}

// measurePermit: each deposit key signs an EIP-2612 permit for the gas wallet; the gas wallet
// sends permit and then transferFrom to the treasury (two transactions per deposit).
func (e *env) measurePermit(n int) string {
	e.t.Helper()
	ds, sum := e.fund(n)
	before := e.tokenOf(e.treasury)
	gasWallet := crypto.PubkeyToAddress(e.gasKey.PublicKey)
	var sep hexutil.Bytes
	if err := e.c.RPC.CallContext(e.ctx, &sep, "eth_call", map[string]any{"to": e.token, "data": hexutil.Bytes(pack("DOMAIN_SEPARATOR"))}, "latest"); err != nil {
		e.t.Fatal(err)
	}
	typeHash := crypto.Keccak256([]byte("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"))
	deadline := new(big.Int).Lsh(big.NewInt(1), 255)
	var calls []call
	for _, d := range ds {
		owner, value := d.Address(), e.tokenOf(d.Address())
		structHash := crypto.Keccak256(typeHash, common.LeftPadBytes(owner.Bytes(), 32), common.LeftPadBytes(gasWallet.Bytes(), 32),
			common.LeftPadBytes(value.Bytes(), 32), make([]byte, 32), common.LeftPadBytes(deadline.Bytes(), 32))
		digest := crypto.Keccak256([]byte("\x19\x01"), sep, structHash)
		sig, err := crypto.Sign(digest, d.Key)
		if err != nil {
			e.t.Fatal(err)
		}
		var r, s [32]byte
		copy(r[:], sig[:32])
		copy(s[:], sig[32:64])
		calls = append(calls,
			call{to: &e.token, data: pack("permit", owner, gasWallet, value, deadline, sig[64]+27, r, s), gas: 150_000},
			call{to: &e.token, data: pack("transferFrom", owner, e.treasury, value), gas: 100_000})
	}
	rs := e.waitAll(e.sendAll(e.gasKey, calls))
	stranded := e.check("permit", ds, before, sum)
	if stranded.Sign() != 0 {
		e.t.Errorf("permit sweeps left %s wei on deposit addresses", stranded)
	}
	return row("b. EIP-2612 permit, then transferFrom by the gas wallet", n, gasOf(rs), stranded)
}

// measure7702: one batch of n deposits signed by sweep.Sign, each address delegating for the
// first time.
func (e *env) measure7702(n int) string {
	e.t.Helper()
	return e.measureBatch("c. EIP-7702 batch (sweep.Sign)", n, sweep.GasLimit, func(ds []sweep.Deposit) (*sweep.Signed, error) {
		return sweep.Sign(e.batch(ds))
	})
}

// measureBatch funds n fresh deposits, sweeps them in one transaction signed by sign, and
// checks that the treasury gained their sum, that Swept finds every deposit, that the gas used
// is within limit(n) and that no deposit holds a native coin.
func (e *env) measureBatch(name string, n int, limit func(int) uint64, sign func([]sweep.Deposit) (*sweep.Signed, error)) string {
	e.t.Helper()
	ds, sum := e.fund(n)
	before := e.tokenOf(e.treasury)
	s, err := sign(ds)
	if err != nil {
		e.t.Fatal(err)
	}
	r := e.waitAll([]common.Hash{e.broadcastHash(s)})
	if moved, err := sweep.Swept(r[0], e.token, e.treasury); err != nil || len(moved) != n {
		e.t.Errorf("%s of %d: Swept found %d deposits (%v)", name, n, len(moved), err)
	}
	if r[0].GasUsed > limit(n) {
		e.t.Errorf("%s of %d used %d gas, above its limit %d", name, n, r[0].GasUsed, limit(n))
	}
	stranded := e.check(name, ds, before, sum)
	if stranded.Sign() != 0 {
		e.t.Errorf("%s of %d left %s wei on deposit addresses", name, n, stranded)
	}
	return row(name, n, gasOf(r), stranded)
}

func (e *env) broadcastHash(s *sweep.Signed) common.Hash {
	e.t.Helper()
	if err := e.broadcast(s.Raw); err != nil {
		e.t.Fatal(err)
	}
	return s.Hash
}

// permitBatch reads the token's permit data for ds and signs a permit batch of their balances.
func (e *env) permitBatch(ds []sweep.Deposit) sweep.PermitBatch {
	e.t.Helper()
	owners := make([]common.Address, len(ds))
	for i, d := range ds {
		owners[i] = d.Address()
	}
	sep, nonces, balances, err := sweep.ReadPermits(e.ctx, e.c.Client, e.token, owners)
	if err != nil {
		e.t.Fatal(err)
	}
	pds := make([]sweep.PermitDeposit, len(ds))
	for i, d := range ds {
		pds[i] = sweep.PermitDeposit{Key: d.Key, Nonce: nonces[i], Value: balances[i], Deadline: big.NewInt(1 << 40)}
	}
	return sweep.PermitBatch{
		ChainID: new(big.Int).SetUint64(e.c.ChainID), Token: e.token, DomainSeparator: sep, Treasury: e.treasury,
		Deposits: pds, GasKey: e.gasKey, GasNonce: e.gasNonce(), Fees: e.fees(),
	}
}

// measurePermitBatch: one transaction per batch from the gas wallet to the delegate's
// sweepPermits (sweep.SignPermits), the fallback for a network without EIP-7702.
func (e *env) measurePermitBatch(n int) string {
	e.t.Helper()
	return e.measureBatch("b. EIP-2612 permits in one batch (sweep.SignPermits)", n, sweep.PermitGasLimit, func(ds []sweep.Deposit) (*sweep.Signed, error) {
		return sweep.SignPermits(e.permitBatch(ds))
	})
}
