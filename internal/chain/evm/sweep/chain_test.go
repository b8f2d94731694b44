package sweep_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/evm/sweep"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
)

// env is one dev chain with a gas wallet, a treasury and the delegate deployed for it.
type env struct {
	t        *testing.T
	ctx      context.Context
	set      *devchain.Set
	c        *devchain.Chain
	token    common.Address
	gasKey   *ecdsa.PrivateKey
	treasury common.Address
	deposits *depositkey.Private
	next     int // the next deposit path's last level
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	xprv, _, err := depositkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := depositkey.NewPrivate(xprv)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, set: set, c: c, token: c.Tokens[devchain.USDC], gasKey: newKey(t), treasury: crypto.PubkeyToAddress(newKey(t).PublicKey), deposits: priv}
	e.fundGas(crypto.PubkeyToAddress(e.gasKey.PublicKey), big.NewInt(params.Ether))
	deployed, err := sweep.Deployed(ctx, c.Client, e.treasury)
	if err != nil || deployed {
		t.Fatalf("the delegate of a fresh treasury is there before its deployment (%v, %v)", deployed, err)
	}
	s, err := sweep.SignDeploy(new(big.Int).SetUint64(c.ChainID), e.treasury, e.gasKey, e.gasNonce(), e.fees())
	if err != nil {
		t.Fatal(err)
	}
	if r := e.mined(s); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the delegate's deployment reverted (gas used %d)", r.GasUsed)
	}
	if deployed, err := sweep.Deployed(ctx, c.Client, e.treasury); err != nil || !deployed {
		t.Fatalf("the delegate is not at %s after its deployment (%v)", sweep.DelegateAddress(e.treasury).Hex(), err)
	}
	return e
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (e *env) fundGas(a common.Address, wei *big.Int) {
	e.t.Helper()
	if err := e.c.RPC.CallContext(e.ctx, nil, "anvil_setBalance", a, (*hexutil.Big)(wei)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) gasNonce() uint64 {
	e.t.Helper()
	n, err := e.c.Client.PendingNonceAt(e.ctx, crypto.PubkeyToAddress(e.gasKey.PublicKey))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// fees are the sweeper's: twice the latest base fee plus a 1 gwei tip.
func (e *env) fees() sweep.Fees {
	e.t.Helper()
	head, err := e.c.Client.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	tip := big.NewInt(params.GWei)
	return sweep.Fees{TipCap: tip, FeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)}
}

// broadcast sends raw signed bytes; the node's error, if any, is returned.
func (e *env) broadcast(raw []byte) error {
	return e.c.RPC.CallContext(e.ctx, nil, "eth_sendRawTransaction", hexutil.Bytes(raw))
}

// mined broadcasts s and waits for its receipt.
func (e *env) mined(s *sweep.Signed) *types.Receipt {
	e.t.Helper()
	if err := e.broadcast(s.Raw); err != nil {
		e.t.Fatal(err)
	}
	r, err := e.c.WaitMined(e.ctx, s.Hash)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// newDeposits derives n fresh deposit keys and sends each its amount of USDC from the funded
// key, waiting for the last transfer.
func (e *env) newDeposits(amounts ...int64) []sweep.Deposit {
	e.t.Helper()
	var out []sweep.Deposit
	var last common.Hash
	for _, a := range amounts {
		e.next++
		k, err := e.deposits.Key(fmt.Sprintf("0/0/0/%d", e.next))
		if err != nil {
			e.t.Fatal(err)
		}
		tx, err := e.c.SendTransfer(e.ctx, e.set.FundedKey, devchain.USDC, crypto.PubkeyToAddress(k.PublicKey), big.NewInt(a))
		if err != nil {
			e.t.Fatal(err)
		}
		last = tx.Hash()
		out = append(out, sweep.Deposit{Key: k})
	}
	if _, err := e.c.WaitMined(e.ctx, last); err != nil {
		e.t.Fatal(err)
	}
	return e.withNonces(out)
}

// withNonces sets each deposit's authorization nonce from the chain.
func (e *env) withNonces(ds []sweep.Deposit) []sweep.Deposit {
	e.t.Helper()
	addrs := make([]common.Address, len(ds))
	for i, d := range ds {
		addrs[i] = d.Address()
	}
	nonces, err := sweep.Nonces(e.ctx, e.c.Client, addrs)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := range ds {
		ds[i].Nonce = nonces[i]
	}
	return ds
}

func (e *env) batch(ds []sweep.Deposit) sweep.Batch {
	e.t.Helper()
	return sweep.Batch{
		ChainID: new(big.Int).SetUint64(e.c.ChainID), Token: e.token, Treasury: e.treasury,
		Deposits: ds, GasKey: e.gasKey, GasNonce: e.gasNonce(), Fees: e.fees(),
	}
}

func (e *env) sign(b sweep.Batch) *sweep.Signed {
	e.t.Helper()
	s, err := sweep.Sign(b)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) tokenBalance(a common.Address) *big.Int {
	e.t.Helper()
	b, err := e.c.BalanceOf(e.ctx, devchain.USDC, a)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) nativeBalance(a common.Address) *big.Int {
	e.t.Helper()
	b, err := e.c.Client.BalanceAt(e.ctx, a, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) swept(r *types.Receipt) map[common.Address]*big.Int {
	e.t.Helper()
	m, err := sweep.Swept(r, e.token, e.treasury)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// A batch of deposits of different amounts is swept in one transaction: the treasury gains
// their sum to the base unit, each deposit address keeps no token and no native coin, and
// Swept reads from the receipt exactly what each address sent. The same signed bytes broadcast
// again move nothing more, and neither does a batch signed again after a crash (a new gas
// nonce, as a sweeper that lost its stored bytes would sign).
func TestBatchSweepsEveryDepositOnce(t *testing.T) {
	e := newEnv(t)
	amounts := []int64{25_000_000, 1, 999_999, 100_000_000_000, 3_141_592, 7, 50_000_001}
	ds := e.newDeposits(amounts...)
	want := new(big.Int)
	for _, a := range amounts {
		want.Add(want, big.NewInt(a))
	}
	before := e.tokenBalance(e.treasury)

	s := e.sign(e.batch(ds))
	r := e.mined(s)
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the sweep reverted (gas used %d)", r.GasUsed)
	}
	if got := new(big.Int).Sub(e.tokenBalance(e.treasury), before); got.Cmp(want) != 0 {
		t.Fatalf("the treasury gained %s base units, want %s", got, want)
	}
	moved := e.swept(r)
	if len(moved) != len(ds) {
		t.Fatalf("Swept found %d deposits in the receipt, want %d: %v", len(moved), len(ds), moved)
	}
	for i, d := range ds {
		a := d.Address()
		if got := moved[a]; got == nil || got.Cmp(big.NewInt(amounts[i])) != 0 {
			t.Errorf("Swept says %s moved %v, want %d", a.Hex(), got, amounts[i])
		}
		if b := e.tokenBalance(a); b.Sign() != 0 {
			t.Errorf("deposit %s still holds %s base units", a.Hex(), b)
		}
		if b := e.nativeBalance(a); b.Sign() != 0 {
			t.Errorf("deposit %s holds %s wei of native gas", a.Hex(), b)
		}
	}
	after := e.tokenBalance(e.treasury)

	// the same bytes again: the node refuses them (known, or nonce too low) or they are the
	// transaction already mined; either way nothing moves
	if err := e.broadcast(s.Raw); err == nil {
		t.Logf("the node accepted the same bytes again")
	}
	// a batch signed again for the same deposits with the gas wallet's next nonce is mined and
	// moves nothing: no amount is signed, each sweep sends the balance it finds (0)
	again := e.sign(e.batch(e.withNonces(ds)))
	r2 := e.mined(again)
	if r2.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the second sweep reverted")
	}
	if m := e.swept(r2); len(m) != 0 {
		t.Errorf("a second sweep of swept addresses moved %v", m)
	}
	if got := e.tokenBalance(e.treasury); got.Cmp(after) != 0 {
		t.Errorf("the treasury holds %s after the second sweep, %s before it", got, after)
	}
	// the first bytes once more, now long mined: the node refuses them
	if err := e.broadcast(s.Raw); err == nil {
		t.Errorf("the node accepted a mined transaction's bytes again")
	}
	if got := e.tokenBalance(e.treasury); got.Cmp(after) != 0 {
		t.Errorf("the treasury holds %s after a rebroadcast, %s before it", got, after)
	}
}

// A delegated deposit address can be swept by anyone, and only to the treasury: a stranger
// calling sweep on it, or sweepBatch on the delegate, sends the address's new tokens to the
// treasury and gets nothing.
func TestStrangerSweepsOnlyToTreasury(t *testing.T) {
	e := newEnv(t)
	ds := e.newDeposits(5_000_000)
	if r := e.mined(e.sign(e.batch(ds))); r.Status != types.ReceiptStatusSuccessful {
		t.Fatal("the sweep reverted")
	}
	a := ds[0].Address()
	code, err := e.c.Client.CodeAt(e.ctx, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := types.ParseDelegation(code); !ok || got != sweep.DelegateAddress(e.treasury) {
		t.Fatalf("deposit %s's code is %x, not a delegation to the delegate", a.Hex(), code)
	}

	stranger := newKey(t)
	strangerAddr := crypto.PubkeyToAddress(stranger.PublicKey)
	e.fundGas(strangerAddr, big.NewInt(params.Ether))
	for _, call := range []struct {
		name string
		to   common.Address
		data []byte
	}{
		{"sweep on the deposit address", a, sweep.PackSweep(e.token)},
		{"sweepBatch on the delegate", sweep.DelegateAddress(e.treasury), sweep.PackSweepBatch(e.token, []common.Address{a})},
	} {
		if _, err := e.c.Transfer(e.ctx, e.set.FundedKey, devchain.USDC, a, big.NewInt(2_500_000)); err != nil {
			t.Fatal(err)
		}
		before := e.tokenBalance(e.treasury)
		nonce, err := e.c.Client.PendingNonceAt(e.ctx, strangerAddr)
		if err != nil {
			t.Fatal(err)
		}
		f := e.fees()
		tx, err := types.SignNewTx(stranger, types.NewPragueSigner(new(big.Int).SetUint64(e.c.ChainID)), &types.DynamicFeeTx{
			ChainID: new(big.Int).SetUint64(e.c.ChainID), Nonce: nonce, GasTipCap: f.TipCap, GasFeeCap: f.FeeCap,
			Gas: 200_000, To: &call.to, Data: call.data,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.c.Client.SendTransaction(e.ctx, tx); err != nil {
			t.Fatal(err)
		}
		r, err := e.c.WaitMined(e.ctx, tx.Hash())
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("%s: reverted", call.name)
		}
		if got := new(big.Int).Sub(e.tokenBalance(e.treasury), before); got.Cmp(big.NewInt(2_500_000)) != 0 {
			t.Errorf("%s: the treasury gained %s, want 2500000", call.name, got)
		}
		if b := e.tokenBalance(a); b.Sign() != 0 {
			t.Errorf("%s: the deposit still holds %s", call.name, b)
		}
		if b := e.tokenBalance(strangerAddr); b.Sign() != 0 {
			t.Errorf("%s: the stranger got %s", call.name, b)
		}
	}
}

// An authorization that does not apply (signed for a stale nonce) leaves its address out of
// the batch: the others are swept, it keeps its tokens, and Swept says it moved nothing.
func TestStaleAuthorizationSkipsOnlyItsDeposit(t *testing.T) {
	e := newEnv(t)
	ds := e.newDeposits(1_000_000, 2_000_000, 3_000_000)
	ds[1].Nonce++ // not the account's nonce: the authorization is skipped
	before := e.tokenBalance(e.treasury)
	r := e.mined(e.sign(e.batch(ds)))
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatal("the batch reverted")
	}
	moved := e.swept(r)
	if _, ok := moved[ds[1].Address()]; ok || len(moved) != 2 {
		t.Fatalf("Swept: %v, want the first and the last deposit only", moved)
	}
	if got := new(big.Int).Sub(e.tokenBalance(e.treasury), before); got.Cmp(big.NewInt(4_000_000)) != 0 {
		t.Errorf("the treasury gained %s, want 4000000", got)
	}
	if b := e.tokenBalance(ds[1].Address()); b.Cmp(big.NewInt(2_000_000)) != 0 {
		t.Errorf("the skipped deposit holds %s, want 2000000", b)
	}
}

// Sign refuses what would make an unsafe or unminable transaction.
func TestSignRefuses(t *testing.T) {
	k, gas := newKey(t), newKey(t)
	ok := sweep.Batch{
		ChainID: big.NewInt(31337_008453), Token: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3"),
		Treasury: common.HexToAddress("0x1111111111111111111111111111111111111111"),
		Deposits: []sweep.Deposit{{Key: k}}, GasKey: gas,
		Fees: sweep.Fees{TipCap: big.NewInt(1), FeeCap: big.NewInt(2)},
	}
	if _, err := sweep.Sign(ok); err != nil {
		t.Fatalf("a valid batch: %v", err)
	}
	for name, mutate := range map[string]func(b *sweep.Batch){
		"chain id 0":          func(b *sweep.Batch) { b.ChainID = big.NewInt(0) },
		"no treasury":         func(b *sweep.Batch) { b.Treasury = common.Address{} },
		"no deposits":         func(b *sweep.Batch) { b.Deposits = nil },
		"a deposit twice":     func(b *sweep.Batch) { b.Deposits = append(b.Deposits, b.Deposits[0]) },
		"the gas wallet":      func(b *sweep.Batch) { b.Deposits = []sweep.Deposit{{Key: gas}} },
		"fee cap below tip":   func(b *sweep.Batch) { b.Fees = sweep.Fees{TipCap: big.NewInt(3), FeeCap: big.NewInt(2)} },
		"too many deposits":   func(b *sweep.Batch) { b.Deposits = manyDeposits(t, sweep.MaxBatch+1) },
		"no gas wallet key":   func(b *sweep.Batch) { b.GasKey = nil },
		"a deposit's key nil": func(b *sweep.Batch) { b.Deposits = []sweep.Deposit{{}} },
	} {
		b := ok
		mutate(&b)
		if _, err := sweep.Sign(b); err == nil || !strings.HasPrefix(err.Error(), "sweep: ") {
			t.Errorf("%s: Sign answered %v, want a refusal", name, err)
		}
	}
}

func manyDeposits(t *testing.T, n int) []sweep.Deposit {
	out := make([]sweep.Deposit, n)
	for i := range out {
		out[i].Key = newKey(t)
	}
	return out
}

// A sweeper that lost its stored bytes signs the batch again with the same gas-wallet nonce and
// a higher fee, and broadcasts both: one of the two is mined, the other never, and the treasury
// gains the deposits' sum once.
func TestResignWithTheSameNonceIsMinedOnce(t *testing.T) {
	e := newEnv(t)
	amounts := []int64{4_000_000, 123_456}
	ds := e.newDeposits(amounts...)
	before := e.tokenBalance(e.treasury)
	b := e.batch(ds)
	first := e.sign(b)
	b.Fees = sweep.Fees{TipCap: new(big.Int).Mul(b.Fees.TipCap, big.NewInt(2)), FeeCap: new(big.Int).Mul(b.Fees.FeeCap, big.NewInt(2))}
	second := e.sign(b)
	if first.Hash == second.Hash {
		t.Fatal("the two signatures are one transaction")
	}
	if err := e.broadcast(first.Raw); err != nil {
		t.Fatal(err)
	}
	_ = e.broadcast(second.Raw) // replaces the first in the pool, or is refused once the first is mined

	var mined, other common.Hash
	for mined == (common.Hash{}) {
		for _, s := range []*sweep.Signed{first, second} {
			if _, err := e.c.Client.TransactionReceipt(e.ctx, s.Hash); err == nil {
				mined = s.Hash
			}
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("neither signature was mined")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if mined == first.Hash {
		other = second.Hash
	} else {
		other = first.Hash
	}
	if err := e.c.Mine(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Client.TransactionReceipt(e.ctx, other); err == nil {
		t.Fatalf("both %s and %s were mined", first.Hash.Hex(), second.Hash.Hex())
	}
	want := big.NewInt(amounts[0] + amounts[1])
	if got := new(big.Int).Sub(e.tokenBalance(e.treasury), before); got.Cmp(want) != 0 {
		t.Errorf("the treasury gained %s, want %s", got, want)
	}
	t.Logf("mined: %s (first %s, second %s)", mined.Hex(), first.Hash.Hex(), second.Hash.Hex())
}

// On a network without EIP-7702 the delegate pulls deposits with their permits: a batch moves
// each deposit's balance to the treasury to the base unit and leaves no native coin; the same
// permits signed into a second batch move nothing (their nonces are spent), and a stranger who
// replays them on the delegate moves nothing either.
func TestPermitBatchSweepsEveryDepositOnce(t *testing.T) {
	e := newEnv(t)
	e.token = e.deployPermitToken()
	ds, sum := e.fund(4)
	before := e.tokenOf(e.treasury)
	b := e.permitBatch(ds)
	s, err := sweep.SignPermits(b)
	if err != nil {
		t.Fatal(err)
	}
	r := e.mined(s)
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatal("the permit batch reverted")
	}
	moved := e.swept(r)
	for _, d := range b.Deposits {
		if got := moved[d.Address()]; got == nil || got.Cmp(d.Value) != 0 {
			t.Errorf("Swept says %s moved %v, want %s", d.Address().Hex(), got, d.Value)
		}
	}
	if got := e.check("permit batch", ds, before, sum); got.Sign() != 0 {
		t.Errorf("the deposits hold %s wei", got)
	}
	after := e.tokenOf(e.treasury)

	// the same permits again, for deposits that received more since: nothing moves
	e.mint(map[common.Address]int64{ds[0].Address(): 9_000_000})
	b.GasNonce, b.Fees = e.gasNonce(), e.fees()
	again, err := sweep.SignPermits(b)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.mined(again); r.Status != types.ReceiptStatusSuccessful || len(e.swept(r)) != 0 {
		t.Errorf("the same permits signed again moved %v", e.swept(r))
	}
	if got := e.tokenOf(e.treasury); got.Cmp(after) != 0 {
		t.Errorf("the treasury holds %s after the second batch, %s before it", got, after)
	}
	if got := e.tokenOf(ds[0].Address()); got.Cmp(big.NewInt(9_000_000)) != 0 {
		t.Errorf("the deposit that received more holds %s, want 9000000", got)
	}
}
