package gather_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
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

	address := common.BytesToAddress(crypto.Keccak256([]byte("a deposit address")))
	rc, err := c.Transfer(ctx, set.RefundKey, devchain.USDC, address, big.NewInt(5_000_000))
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payout-ledger"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	tx := rc.TxHash.Hex()
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0)},
		Spec: payoutv1.DepositSpec{Transfer: "0123456789abcdef01234567", Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
			Contract: "0x5FbDB2315678afecb367f032d93F642f64180aa3", To: evm.Hex(address), From: "0x1111111111111111111111111111111111111111",
			Amount: "5000000", TxHash: tx, BlockNumber: rc.BlockNumber.Int64(), BlockHash: rc.BlockHash.Hex(),
			BlockTime: metav1.NewTime(time.Now().Add(-time.Minute)), Confirmations: 1},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
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
