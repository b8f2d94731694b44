package gather_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/ledger"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testenv"
)

// TestCheckerReadsTheChain: on anvil and a real API server, the deposit address holds what its
// Deposit object says and the ledger balances; one base unit more sent to it on chain, that no
// deposit records, fails ChainAgrees, naming the address, and its metric counts it.
func TestCheckerReadsTheChain(t *testing.T) {
	lr := newRig(t)
	ctx, env, set, c, ch := lr.ctx, lr.env, lr.set, lr.c, lr.ch
	address := common.BytesToAddress(crypto.Keccak256([]byte("a deposit address")))
	lr.record(address, 5_000_000)
	checker := &gather.Checker{Client: env.Client, Balances: gather.EVMBalances(map[payoutv1.Network]*evm.Chain{payoutv1.NetworkBase: ch}),
		Interval: time.Minute, Clock: clock.RealClock{}, Log: logr.Discard()}

	r, err := checker.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Balanced() || len(r.Tokens) != 1 || r.Tokens[0].OnChain.Int64() != 5_000_000 || r.Tokens[0].Closing.Int64() != 5_000_000 {
		t.Fatalf("a deposit the chain holds: %+v, failures %+v", r.Tokens, r.Failures)
	}
	if got := metricstest.MustGather(t).Sum(metrics.LedgerFailuresName, "invariant", string(ledger.ChainAgrees)); got != 0 {
		t.Errorf("ChainAgrees failures %v, want 0", got)
	}

	if _, err := c.Transfer(ctx, set.RefundKey, devchain.USDC, address, big.NewInt(1)); err != nil {
		t.Fatal(err)
	}
	if r, err = checker.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) != 1 || r.Failures[0].Invariant != ledger.ChainAgrees || !strings.EqualFold(r.Failures[0].Subject, evm.Hex(address)) {
		t.Fatalf("failures %+v, want ChainAgrees of %s", r.Failures, evm.Hex(address))
	}
	if got := metricstest.MustGather(t).Sum(metrics.LedgerFailuresName, "invariant", string(ledger.ChainAgrees)); got != 1 {
		t.Errorf("ChainAgrees failures %v, want 1", got)
	}
}

// TestMetricsKnowEveryInvariant: each invariant of the ledger has its series.
func TestMetricsKnowEveryInvariant(t *testing.T) {
	if len(ledger.Invariants) != len(metrics.LedgerInvariants) {
		t.Fatalf("ledger %v, metrics %v", ledger.Invariants, metrics.LedgerInvariants)
	}
	for i, inv := range ledger.Invariants {
		if string(inv) != metrics.LedgerInvariants[i] {
			t.Errorf("ledger %v, metrics %v", ledger.Invariants, metrics.LedgerInvariants)
		}
	}
}

// TestSecondCheckReadsFewerAddresses: the first check reads every deposit address; the next
// reads only those the ledger says hold tokens, or with a deposit or sweep since: an address
// swept empty is not read again until a new deposit arrives there.
func TestSecondCheckReadsFewerAddresses(t *testing.T) {
	lr := newRig(t)
	ctx, env, c, ch, record := lr.ctx, lr.env, lr.c, lr.ch, lr.record
	held := common.BytesToAddress(crypto.Keccak256([]byte("an address that holds its deposit")))
	swept := common.BytesToAddress(crypto.Keccak256([]byte("an address swept empty")))
	record(held, 5_000_000)
	dep := record(swept, 2_000_000)
	// the sweeper moved it: on chain (anvil impersonates the deposit address) and in its Sweep
	if err := c.RPC.CallContext(ctx, nil, "anvil_impersonateAccount", swept); err != nil {
		t.Fatal(err)
	}
	if err := c.RPC.CallContext(ctx, nil, "anvil_setBalance", swept, "0x16345785D8A0000"); err != nil {
		t.Fatal(err)
	}
	treasury := common.BytesToAddress(crypto.Keccak256([]byte("the treasury")))
	data := append(crypto.Keccak256([]byte("transfer(address,uint256)"))[:4], append(common.LeftPadBytes(treasury.Bytes(), 32), common.LeftPadBytes(big.NewInt(2_000_000).Bytes(), 32)...)...)
	var sent common.Hash
	if err := c.RPC.CallContext(ctx, &sent, "eth_sendTransaction", map[string]any{"from": swept, "to": c.Tokens[devchain.USDC], "data": hexutil.Bytes(data)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitMined(ctx, sent); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	sw := &payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name},
		Spec: payoutv1.SweepSpec{Transfer: dep.Spec.Transfer, Network: dep.Spec.Network, Token: dep.Spec.Token, Address: strings.ToLower(dep.Spec.To),
			Path: "1/2/3/4", Amount: dep.Spec.Amount, DepositTxHash: dep.Spec.TxHash, Reason: payoutv1.SweepPaidOut}}
	if err := env.Client.Create(ctx, sw); err != nil {
		t.Fatal(err)
	}
	for _, st := range []payoutv1.SweepStatus{{State: payoutv1.SweepPending}, {State: payoutv1.SweepBatched, Batch: "b"},
		{State: payoutv1.SweepConfirmed, Batch: "b", TxHash: strings.ToLower(sent.Hex()), Moved: dep.Spec.Amount, ConfirmedAt: &now}} {
		sw.Status = st
		if err := env.Client.Status().Update(ctx, sw); err != nil {
			t.Fatal(err)
		}
	}
	var read [][]ledger.Address
	chain := gather.EVMBalances(map[payoutv1.Network]*evm.Chain{payoutv1.NetworkBase: ch})
	checker := &gather.Checker{Client: env.Client, Interval: time.Minute, Clock: clock.RealClock{}, Log: logr.Discard(),
		Balances: func(ctx context.Context, addrs []ledger.Address) (map[ledger.Address]*big.Int, map[string]bool, error) {
			read = append(read, addrs)
			return chain(ctx, addrs)
		}}
	check := func() {
		t.Helper()
		r, err := checker.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Balanced() {
			t.Fatalf("check %d: failures %+v", len(read), r.Failures)
		}
	}
	check()
	check()
	if len(read[0]) != 2 || len(read[1]) != 1 || !strings.EqualFold(read[1][0].Address, evm.Hex(held)) {
		t.Fatalf("the checks read %v then %v: want both addresses, then only %s", read[0], read[1], evm.Hex(held))
	}
	// a new deposit at the swept address: read again, and what it holds agrees
	record(swept, 7)
	check()
	if len(read[2]) != 2 {
		t.Fatalf("after a deposit at %s the check read %v", evm.Hex(swept), read[2])
	}
}

// rig is a real API server with the namespace payout-ledger, and anvil's base chain read as the
// checker reads it.
type rig struct {
	t   *testing.T
	ctx context.Context
	env *testenv.Env
	set *devchain.Set
	c   *devchain.Chain
	ch  *evm.Chain
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts anvil and an API server")
	}
	ctx := context.Background()
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	ch, err := evm.NewChain(payoutv1.NetworkBase, chaintest.Network(c, 1))
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payout-ledger"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, ctx: ctx, env: env, set: set, c: c, ch: ch}
}

// record sends units to address on chain and stores its Deposit, as the watcher does.
func (r *rig) record(address common.Address, units int64) *payoutv1.Deposit {
	r.t.Helper()
	rc, err := r.c.Transfer(r.ctx, r.set.RefundKey, devchain.USDC, address, big.NewInt(units))
	if err != nil {
		r.t.Fatal(err)
	}
	tx := rc.TxHash.Hex()
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: "payout-ledger", Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0)},
		Spec: payoutv1.DepositSpec{Transfer: "0123456789abcdef01234567", Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
			Contract: "0x5FbDB2315678afecb367f032d93F642f64180aa3", To: evm.Hex(address), From: "0x1111111111111111111111111111111111111111",
			Amount: fmt.Sprint(units), TxHash: tx, BlockNumber: rc.BlockNumber.Int64(), BlockHash: rc.BlockHash.Hex(),
			BlockTime: metav1.NewTime(time.Now().Add(-time.Minute)), Confirmations: 1},
	}
	if err := r.env.Client.Create(r.ctx, dep); err != nil {
		r.t.Fatal(err)
	}
	return dep
}
