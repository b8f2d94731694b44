package sweeper

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

var (
	env *testenv.Env
	ctx = context.Background()
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("-short: the sweeper's tests run on the control plane (envtest) and a dev chain (anvil)")
		os.Exit(0)
	}
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// rig is a Base dev chain (mined by hand), a deposit key, a treasury, a funded gas wallet and an
// account namespace.
type rig struct {
	t        *testing.T
	set      *devchain.Set
	c        *devchain.Chain
	ch       *evm.Chain
	keys     *depositkey.Private
	gasHex   string
	gasAt    common.Address
	treasury common.Address
	ns       string
	seq      int
}

var nsSeq int

func newRig(t *testing.T) *rig {
	t.Helper()
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	ch, err := evm.NewChain(payoutv1.NetworkBase, chaintest.Network(c, 2))
	if err != nil {
		t.Fatal(err)
	}
	xprv, _, err := depositkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := depositkey.NewPrivate(xprv)
	if err != nil {
		t.Fatal(err)
	}
	gas, _ := crypto.GenerateKey()
	treasury, _ := crypto.GenerateKey()
	r := &rig{t: t, set: set, c: c, ch: ch, keys: keys, gasHex: common.Bytes2Hex(crypto.FromECDSA(gas)),
		gasAt: crypto.PubkeyToAddress(gas.PublicKey), treasury: crypto.PubkeyToAddress(treasury.PublicKey)}
	if err := c.RPC.CallContext(ctx, nil, "anvil_setBalance", r.gasAt, hexutil.EncodeBig(big.NewInt(1e18))); err != nil {
		t.Fatal(err)
	}
	nsSeq++
	r.ns = fmt.Sprintf("sweeper-test-%d-%d", time.Now().Unix()%100000, nsSeq)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// sweeper is a fresh sweeper of the rig (as after a restart), its mover wrapped by wrap.
func (r *rig) sweeper(wrap func(Mover) Mover) *Sweeper {
	r.t.Helper()
	m, err := NewEVM(map[payoutv1.Network]*evm.Chain{payoutv1.NetworkBase: r.ch}, r.gasHex, r.keys)
	if err != nil {
		r.t.Fatal(err)
	}
	var mover Mover = m
	if wrap != nil {
		mover = wrap(m)
	}
	return &Sweeper{Client: env.Client, Reader: env.Client, Mover: mover,
		Treasury: map[payoutv1.Network]string{payoutv1.NetworkBase: strings.ToLower(r.treasury.Hex())}, Now: time.Now}
}

// fund sends units to the deposit address of a new transfer id and returns the id, the address,
// its key path, the transaction and its receipt (mined).
func (r *rig) fund(units int64) (id, addr, path string, tx *types.Transaction, rc *types.Receipt) {
	r.t.Helper()
	r.seq++
	id = fmt.Sprintf("%024x", time.Now().UnixNano()+int64(r.seq))
	pub, err := r.keys.Public()
	if err != nil {
		r.t.Fatal(err)
	}
	if addr, path, err = pub.DepositAddress(payoutv1.NetworkBase, id); err != nil {
		r.t.Fatal(err)
	}
	if tx, err = r.c.SendTransfer(ctx, r.set.FundedKey, devchain.USDC, common.HexToAddress(addr), big.NewInt(units)); err != nil {
		r.t.Fatal(err)
	}
	chaintest.Mine(r.t, r.c, 1)
	if rc, err = r.c.WaitMined(ctx, tx.Hash()); err != nil {
		r.t.Fatal(err)
	}
	return id, addr, path, tx, rc
}

// paidOut stores a completed v1 transfer whose deposit address received units on chain (one
// log, recorded as the watcher records it), and returns its Deposit.
func (r *rig) paidOut(units int64) *payoutv1.Deposit {
	r.t.Helper()
	id, addr, path, tx, rc := r.fund(units)
	t := testgen.Transfer(r.ns, id, func(t *payoutv1.Transfer) {
		t.Spec.DepositAddress, t.Spec.DepositPath, t.Spec.WalletAddress = addr, path, evm.Hex(crypto.PubkeyToAddress(r.set.FundedKey.PublicKey))
		usd := fmt.Sprintf("%d.%02d", units/1e6, units%1e6/1e4) // units are whole cents
		t.Spec.Amount, t.Spec.Quote.SourceAmount = payoutv1.USDAmount(usd), payoutv1.USDAmount(usd)
	})
	if err := env.Client.Create(ctx, t); err != nil {
		r.t.Fatal(err)
	}
	var logIndex int64
	for _, l := range rc.Logs {
		logIndex = int64(l.Index)
	}
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx.Hash().Hex(), logIndex),
			Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: evm.Hex(r.c.Tokens[devchain.USDC]),
			To: addr, From: t.Spec.WalletAddress, Amount: fmt.Sprint(units), TxHash: strings.ToLower(tx.Hash().Hex()), LogIndex: logIndex,
			BlockNumber: rc.BlockNumber.Int64(), BlockHash: strings.ToLower(rc.BlockHash.Hex()), BlockTime: metav1.Now(), Confirmations: 2},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		r.t.Fatal(err)
	}
	at := metav1.Now()
	t.Status.Deposit = &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: dep.Spec.TxHash, LogIndex: logIndex,
		From: dep.Spec.From, Amount: dep.Spec.Amount, BlockNumber: dep.Spec.BlockNumber, BlockHash: dep.Spec.BlockHash, Confirmations: 2, SeenAt: at, ConfirmedAt: &at}
	t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: at}
	t.Status.Phase = payoutv1.PhaseCompleted
	if err := env.Client.Status().Update(ctx, t); err != nil {
		r.t.Fatal(err)
	}
	return dep
}

// untilSwept runs passes of s, mining a block after each, until every deposit's sweep is
// Confirmed (or the deadline).
func (r *rig) untilSwept(s *Sweeper, deps ...*payoutv1.Deposit) {
	r.t.Helper()
	passUntil(r.t, s, func() { chaintest.Mine(r.t, r.c, 1) }, func(*payoutv1.Sweep) bool { return true }, deps...)
}

// passUntil runs passes of s, calling next (a block mined) after each, until every deposit's
// sweep is Confirmed and done says so of it, or 60 s have passed.
func passUntil(t testing.TB, s *Sweeper, next func(), done func(*payoutv1.Sweep) bool, deps ...*payoutv1.Deposit) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := s.Pass(ctx)
		all := true
		for _, d := range deps {
			sw := &payoutv1.Sweep{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), sw); err != nil || sw.Status.State != payoutv1.SweepConfirmed || !done(sw) {
				all = false
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not swept after 60 s; last pass: %v", err)
		}
		next()
	}
}

func (r *rig) tokens(a common.Address) int64 {
	r.t.Helper()
	b, err := r.c.BalanceOf(ctx, devchain.USDC, a)
	if err != nil {
		r.t.Fatal(err)
	}
	return b.Int64()
}

func (r *rig) native(a common.Address) *big.Int {
	r.t.Helper()
	b, err := r.c.Client.BalanceAt(ctx, a, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// gasNonce is the gas wallet's nonce at the latest block: the transactions it sent.
func (r *rig) gasNonce() uint64 {
	r.t.Helper()
	n, err := r.c.Client.NonceAt(ctx, r.gasAt, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// expectSwept checks that deps are in the treasury to the base unit, their addresses hold no
// token and no native gas, and their sweeps record the transaction and what it moved.
func (r *rig) expectSwept(deps ...*payoutv1.Deposit) *payoutv1.SweepBatch {
	r.t.Helper()
	var want int64
	var batch string
	for _, d := range deps {
		units, _ := new(big.Int).SetString(d.Spec.Amount, 10)
		want += units.Int64()
		at := common.HexToAddress(d.Spec.To)
		if got := r.tokens(at); got != 0 {
			r.t.Errorf("deposit address %s still holds %d base units", d.Spec.To, got)
		}
		if got := r.native(at); got.Sign() != 0 {
			r.t.Errorf("deposit address %s holds %s wei of native gas (stranded)", d.Spec.To, got)
		}
		sw := &payoutv1.Sweep{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), sw); err != nil {
			r.t.Fatal(err)
		}
		if sw.Status.Moved != d.Spec.Amount || sw.Status.TxHash == "" || sw.Status.ConfirmedAt == nil || sw.Spec.Reason != payoutv1.SweepPaidOut {
			r.t.Errorf("sweep %s: %+v", sw.Name, sw.Status)
		}
		batch = sw.Status.Batch
	}
	if got := r.tokens(r.treasury); got != want {
		r.t.Errorf("the treasury holds %d base units; the deposits were %d", got, want)
	}
	b := &payoutv1.SweepBatch{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: batch}, b); err != nil {
		r.t.Fatal(err)
	}
	return b
}

// TestSweepsPaidOutDepositsInOneTransaction: three completed transfers' deposits go to the
// treasury in one batch transaction, to the base unit, with nothing left at their addresses.
func TestSweepsPaidOutDepositsInOneTransaction(t *testing.T) {
	r := newRig(t)
	deps := []*payoutv1.Deposit{r.paidOut(25_000_000), r.paidOut(10_000), r.paidOut(7_650_000)}
	r.untilSwept(r.sweeper(nil), deps...)
	b := r.expectSwept(deps...)
	if len(b.Spec.Items) != 3 || b.Status.State != payoutv1.SweepBatchConfirmed || *b.Status.Nonce != 1 {
		t.Fatalf("batch %s: %d items, %s, nonce %d (the delegate's deployment is nonce 0)", b.Name, len(b.Spec.Items), b.Status.State, *b.Status.Nonce)
	}
	if n := r.gasNonce(); n != 2 {
		t.Fatalf("the gas wallet sent %d transactions: want the delegate's deployment and one batch", n)
	}
	// the ledger's swept line is what the treasury holds, to the base unit (gather.Sweeps is the
	// ledger's one reader of the sweeper's records)
	facts, err := gather.Sweeps(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	swept := new(big.Int)
	for _, f := range facts {
		swept.Add(swept, f.Units)
	}
	if len(facts) != 3 || swept.Int64() != r.tokens(r.treasury) {
		t.Errorf("the ledger reads %d sweeps of %s base units; the treasury holds %d", len(facts), swept, r.tokens(r.treasury))
	}
	// the next pass reads the balances the metrics show
	if _, err := r.sweeper(nil).Pass(ctx); err != nil {
		t.Fatal(err)
	}
	m := metricstest.MustGather(t)
	if got := m.Sum(metrics.TreasuryBalanceName, "network", "base", "token", "usdc"); got != float64(r.tokens(r.treasury)) || got != 32_660_000 {
		t.Errorf("%s = %v; the treasury holds %d", metrics.TreasuryBalanceName, got, r.tokens(r.treasury))
	}
	if got := m.Sum(metrics.SweeperGasBalanceName, "network", "base"); got != float64(r.native(r.gasAt).Int64()) {
		t.Errorf("%s = %v; the gas wallet holds %s wei", metrics.SweeperGasBalanceName, got, r.native(r.gasAt))
	}
	if got := m.Sum(metrics.SweeperGasBatchesName, "network", "base"); got < 1 {
		t.Errorf("%s = %v with a gas wallet of 1 ETH on a dev chain", metrics.SweeperGasBatchesName, got)
	}
}

// killAt wraps a mover so that the sweeper "dies" at one point of a batch: before the signed
// transaction reaches the node (between signing and broadcast), or after the node took it and
// before the status write that records it. A dead sweeper's pass returns an error and writes
// nothing more; the test then starts a fresh sweeper, as a restarted pod.
type killAt struct {
	Mover
	afterBroadcast bool
	killed         bool
}

var errKilled = errors.New("killed")

// Broadcast dies (panics with errKilled, which pass recovers): the pass ends there, with no
// write after it, as a killed process's.
func (k *killAt) Broadcast(ctx context.Context, network payoutv1.Network, raw []byte) error {
	if k.killed {
		panic(errKilled)
	}
	k.killed = true
	if k.afterBroadcast {
		if err := k.Mover.Broadcast(ctx, network, raw); err != nil {
			return err
		}
	}
	panic(errKilled)
}

func (k *killAt) Receipt(ctx context.Context, network payoutv1.Network, hash string) (*chain.TxObservation, error) {
	if k.killed {
		panic(errKilled)
	}
	return k.Mover.Receipt(ctx, network, hash)
}

// pass runs one pass of s; a kill ends it where it happened and answers errKilled.
func pass(s *Sweeper) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errKilled {
				panic(r)
			}
			err = errKilled
		}
	}()
	_, err = s.Pass(ctx)
	return err
}

// TestCrashBetweenSigningAndBroadcast and TestCrashAfterBroadcastBeforeTheStatusWrite: a
// sweeper killed at either point, and started again, sends the transaction it persisted (the
// same hash, one gas wallet nonce): no token is sent twice and nothing is lost.
func TestCrashBetweenSigningAndBroadcast(t *testing.T) { crashAndResume(t, false) }

func TestCrashAfterBroadcastBeforeTheStatusWrite(t *testing.T) { crashAndResume(t, true) }

func crashAndResume(t *testing.T, afterBroadcast bool) {
	r := newRig(t)
	deps := []*payoutv1.Deposit{r.paidOut(3_000_000), r.paidOut(4_000_000)}
	dying := &killAt{afterBroadcast: afterBroadcast}
	s := r.sweeper(func(m Mover) Mover { dying.Mover = m; return dying })
	for i := 0; !dying.killed && i < 20; i++ {
		if err := pass(s); err != nil && !errors.Is(err, errKilled) {
			t.Fatal(err)
		}
		chaintest.Mine(t, r.c, 1) // the delegate's deployment
	}
	if !dying.killed {
		t.Fatal("the sweeper never reached the broadcast")
	}
	var batches payoutv1.SweepBatchList
	if err := env.Client.List(ctx, &batches); err != nil {
		t.Fatal(err)
	}
	var signed *payoutv1.SweepBatch
	for i := range batches.Items {
		if b := &batches.Items[i]; b.Spec.To == strings.ToLower(r.treasury.Hex()) {
			signed = b
		}
	}
	if signed == nil || signed.Status.State != payoutv1.SweepBatchSigned || signed.Status.SignedTx == "" {
		t.Fatalf("at the kill the batch is %+v: its transaction must be persisted before any broadcast", signed)
	}
	// the restarted sweeper
	r.untilSwept(r.sweeper(nil), deps...)
	b := r.expectSwept(deps...)
	if b.Name != signed.Name || b.Status.TxHash != signed.Status.TxHash || b.Status.SignedTx != signed.Status.SignedTx {
		t.Fatalf("after the restart batch %s sent %s; before it %s had signed %s", b.Name, b.Status.TxHash, signed.Name, signed.Status.TxHash)
	}
	if n := r.gasNonce(); n != 2 {
		t.Fatalf("the gas wallet sent %d transactions: want the delegate's deployment and one batch", n)
	}
}

// orphan records a deposit of units at the address of transfer id as the watcher records one that
// arrived after the transfer's account was deleted: in OrphanNamespace, with no transfer.
func (r *rig) orphan(units int64) *payoutv1.Deposit {
	r.t.Helper()
	id, addr, _, tx, rc := r.fund(units)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.OrphanNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		r.t.Fatal(err)
	}
	logIndex := int64(rc.Logs[len(rc.Logs)-1].Index)
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.OrphanNamespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx.Hash().Hex(), logIndex),
			Labels: map[string]string{payoutv1.DepositTransferLabel: id, payoutv1.AccountLabel: "gone"}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: evm.Hex(r.c.Tokens[devchain.USDC]),
			To: addr, From: evm.Hex(crypto.PubkeyToAddress(r.set.FundedKey.PublicKey)), Amount: fmt.Sprint(units), TxHash: strings.ToLower(tx.Hash().Hex()),
			LogIndex: logIndex, BlockNumber: rc.BlockNumber.Int64(), BlockHash: strings.ToLower(rc.BlockHash.Hex()), BlockTime: metav1.Now(), Confirmations: 2},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		r.t.Fatal(err)
	}
	return dep
}

// TestSweepsOrphansOnceRefundedOrWrittenOff: deposits recorded after their account was deleted
// are owed to their senders and stay where they are; once one is written off and another's
// refund is confirmed, both go to the treasury, under the key their transfer ids give.
func TestSweepsOrphansOnceRefundedOrWrittenOff(t *testing.T) {
	r := newRig(t)
	off, refunded := r.orphan(4_000_000), r.orphan(1_500_000)
	s := r.sweeper(nil)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*payoutv1.Deposit{off, refunded} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), &payoutv1.Sweep{}); !apierrors.IsNotFound(err) {
			t.Fatalf("orphan %s owed to its sender has a sweep (%v)", d.Name, err)
		}
	}

	if _, _, err := admin.WriteOff(ctx, env.Client, off.Name, "operator", "the sender asked us to keep it"); err != nil {
		t.Fatal(err)
	}
	ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: refunded.Spec.TxHash, LogIndex: refunded.Spec.LogIndex}
	rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.OrphanNamespace, Name: payoutv1.StrayRefundName(refunded.Spec.Transfer, ref),
		Labels: map[string]string{payoutv1.RefundTransferLabel: refunded.Spec.Transfer}}, Spec: payoutv1.RefundSpec{Transfer: refunded.Spec.Transfer, Deposit: &ref}}
	if err := env.Client.Create(ctx, rf); err != nil {
		t.Fatal(err)
	}
	// in flight: it holds its deposit
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(refunded), &payoutv1.Sweep{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an orphan whose refund is in flight has a sweep (%v)", err)
	}
	nonce, at := int64(0), metav1.Now()
	for _, st := range []payoutv1.RefundStatus{
		{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: refunded.Spec.From, Amount: refunded.Spec.Amount},
		{State: payoutv1.RefundSigned, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, To: refunded.Spec.From, Amount: refunded.Spec.Amount,
			From: "0x3333333333333333333333333333333333333333", Nonce: &nonce, SignedTx: "0x02f8", TxHash: "0x" + strings.Repeat("5a", 32)},
	} {
		rf.Status = st
		if err := env.Client.Status().Update(ctx, rf); err != nil {
			t.Fatal(err)
		}
	}
	rf.Status.State, rf.Status.ConfirmedAt = payoutv1.RefundConfirmed, &at
	if err := env.Client.Status().Update(ctx, rf); err != nil {
		t.Fatal(err)
	}

	r.untilSwept(s, off, refunded)
	for d, reason := range map[*payoutv1.Deposit]payoutv1.SweepReason{off: payoutv1.SweepWrittenOff, refunded: payoutv1.SweepRefunded} {
		sw := &payoutv1.Sweep{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), sw); err != nil {
			t.Fatal(err)
		}
		if sw.Spec.Reason != reason || sw.Status.Moved != d.Spec.Amount {
			t.Errorf("sweep of orphan %s: reason %s, moved %s; want %s, %s", d.Name, sw.Spec.Reason, sw.Status.Moved, reason, d.Spec.Amount)
		}
		if got := r.tokens(common.HexToAddress(d.Spec.To)); got != 0 {
			t.Errorf("orphan address %s still holds %d base units", d.Spec.To, got)
		}
	}
	if got := r.tokens(r.treasury); got != 5_500_000 {
		t.Errorf("the treasury holds %d base units; the orphans were 5500000", got)
	}
}
