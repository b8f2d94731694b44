package sweeper

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/tron"
	"github.com/stablepay/payout-operator/internal/chain/tron/trontx"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// tronRig is a Tron test node (no java-tron installs here), a deposit key, a treasury, an energy
// wallet staking TRX for energy and bandwidth, and an account namespace.
type tronRig struct {
	t        *testing.T
	srv      *chaintest.TronRPCTestServer
	keys     *depositkey.Private
	energy   *ecdsaKey
	treasury common.Address
	ns       string
	seq      int
}

type ecdsaKey struct {
	hex string
	at  common.Address
}

// The energy wallet's TRX and stakes (sun): 10 TRX to pay for activations, 100,000 TRX staked
// for energy (1,000,000 energy on the test node), 10,000 for bandwidth.
const (
	tronWalletTRX    = 10_000_000
	tronStakedEnergy = 100_000_000_000
	tronStakedNet    = 10_000_000_000
)

func newTronRig(t *testing.T) *tronRig {
	t.Helper()
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 30)
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
	r := &tronRig{t: t, srv: srv, keys: keys, energy: &ecdsaKey{hex: common.Bytes2Hex(crypto.FromECDSA(gas)), at: crypto.PubkeyToAddress(gas.PublicKey)},
		treasury: crypto.PubkeyToAddress(treasury.PublicKey)}
	srv.SetAccount(r.energy.at, tronWalletTRX, tronStakedEnergy, tronStakedNet)
	nsSeq++
	r.ns = fmt.Sprintf("sweeper-tron-%d-%d", time.Now().Unix()%100000, nsSeq)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *tronRig) treasuryAddress() string { return chain.TronAddress(r.treasury) }

// mover is a fresh Tron mover (as after a restart); the test node's chain keeps its own clock,
// which the mover reads as now.
func (r *tronRig) mover() *Tron {
	r.t.Helper()
	m, err := NewTron(payoutv1.NetworkTron, &tron.Node{URL: r.srv.HTTPURL}, map[payoutv1.Token]string{payoutv1.TokenUSDT: chain.TronAddress(chaintest.TronUSDT)},
		r.treasuryAddress(), r.energy.hex, r.keys, 2)
	if err != nil {
		r.t.Fatal(err)
	}
	m.now = func() time.Time { return time.Unix(r.srv.HeadTime(), 0) }
	return m
}

func (r *tronRig) sweeper(wrap func(Mover) Mover) *Sweeper {
	var m Mover = ByNetwork{payoutv1.NetworkTron: r.mover()}
	if wrap != nil {
		m = wrap(m)
	}
	return &Sweeper{Client: env.Client, Reader: env.Client, Mover: m,
		Treasury: map[payoutv1.Network]string{payoutv1.NetworkTron: strings.ToLower(r.treasuryAddress())}, Now: time.Now}
}

// paidOut stores a completed v1 transfer whose Tron deposit address received units of USDT (one
// log, recorded as the watcher records it), and returns its Deposit.
func (r *tronRig) paidOut(units int64) *payoutv1.Deposit {
	r.t.Helper()
	r.seq++
	id := fmt.Sprintf("%024x", time.Now().UnixNano()+int64(r.seq))
	pub, err := r.keys.Public()
	if err != nil {
		r.t.Fatal(err)
	}
	addr, path, err := pub.DepositAddress(payoutv1.NetworkTron, id)
	if err != nil {
		r.t.Fatal(err)
	}
	at, _ := chain.TronAddressBytes(addr)
	sender, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(sender.PublicKey)
	txID := r.srv.Transfer(chaintest.TronUSDT, from, at, units)
	r.srv.Mine(1)
	block := r.srv.Head()
	t := testgen.Transfer(r.ns, id, func(t *payoutv1.Transfer) {
		t.Spec.SourceNetwork, t.Spec.SourceToken = payoutv1.NetworkTron, payoutv1.TokenUSDT
		t.Spec.DepositAddress, t.Spec.DepositPath, t.Spec.WalletAddress = addr, path, strings.ToLower(from.Hex())
		usd := fmt.Sprintf("%d.%02d", units/1e6, units%1e6/1e4)
		t.Spec.Amount, t.Spec.Quote.SourceAmount = payoutv1.USDAmount(usd), payoutv1.USDAmount(usd)
	})
	if err := env.Client.Create(ctx, t); err != nil {
		r.t.Fatal(err)
	}
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: payoutv1.DepositName(payoutv1.NetworkTron, tron.TxID(txID), 0),
			Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkTron, Token: payoutv1.TokenUSDT, Contract: chain.TronAddress(chaintest.TronUSDT),
			To: addr, From: chain.TronAddress(from), Amount: fmt.Sprint(units), TxHash: tron.TxID(txID), LogIndex: 0,
			BlockNumber: block, BlockHash: tron.TxID(r.srv.BlockHash(block)), BlockTime: metav1.Now(), Confirmations: 20},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		r.t.Fatal(err)
	}
	now := metav1.Now()
	t.Status.Deposit = &payoutv1.DepositFacts{Network: payoutv1.NetworkTron, Token: payoutv1.TokenUSDT, TxHash: dep.Spec.TxHash, LogIndex: 0,
		From: dep.Spec.From, Amount: dep.Spec.Amount, BlockNumber: block, BlockHash: dep.Spec.BlockHash, Confirmations: 20, SeenAt: now, ConfirmedAt: &now}
	t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: now}
	t.Status.Phase = payoutv1.PhaseCompleted
	if err := env.Client.Status().Update(ctx, t); err != nil {
		r.t.Fatal(err)
	}
	return dep
}

func (r *tronRig) at(d *payoutv1.Deposit) common.Address {
	id, err := chain.TronAddressBytes(d.Spec.To)
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

// untilSwept runs passes of s, mining a block after each, until every deposit's sweep is
// Confirmed and its batch finished (the energy taken back), or the deadline.
func (r *tronRig) untilSwept(s *Sweeper, deps ...*payoutv1.Deposit) {
	r.t.Helper()
	passUntil(r.t, s, func() { r.srv.Mine(1) }, func(sw *payoutv1.Sweep) bool {
		b := &payoutv1.SweepBatch{}
		return env.Client.Get(ctx, client.ObjectKey{Name: sw.Status.Batch}, b) == nil && len(b.Finalizers) == 0
	}, deps...)
}

// expectSwept checks that deps are in the treasury to the base unit, each by one transfer its
// key signed, their addresses hold no USDT, no TRX and no delegated resources, and their sweeps
// record what moved.
func (r *tronRig) expectSwept(deps ...*payoutv1.Deposit) {
	r.t.Helper()
	var want int64
	for _, d := range deps {
		units, _ := new(big.Int).SetString(d.Spec.Amount, 10)
		want += units.Int64()
		at := r.at(d)
		if got := r.srv.TokenBalance(chaintest.TronUSDT, at); got.Sign() != 0 {
			r.t.Errorf("deposit address %s still holds %s USDT base units", d.Spec.To, got)
		}
		if got := r.srv.TRX(at); got != 0 {
			r.t.Errorf("deposit address %s holds %d sun of TRX (stranded)", d.Spec.To, got)
		}
		if n := r.srv.Included(at, trontx.TriggerSmartContract); n != 1 {
			r.t.Errorf("deposit address %s sent %d transfers; want one", d.Spec.To, n)
		}
		if got := r.srv.DelegatedTo(r.energy.at, at); got != [2]int64{} {
			r.t.Errorf("the energy wallet still delegates %v sun of stake to %s", got, d.Spec.To)
		}
		sw := &payoutv1.Sweep{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), sw); err != nil {
			r.t.Fatal(err)
		}
		if sw.Status.Moved != d.Spec.Amount || sw.Status.TxHash == "" || sw.Status.ConfirmedAt == nil {
			r.t.Errorf("sweep %s: %+v", sw.Name, sw.Status)
		}
	}
	if got := r.srv.TokenBalance(chaintest.TronUSDT, r.treasury); got.Int64() != want {
		r.t.Errorf("the treasury holds %s base units; the deposits were %d", got, want)
	}
}

// TestTronSweepsWithDelegatedEnergy: two completed transfers' Tron deposits go to the treasury,
// one transfer each signed by its deposit key, paid with energy the energy wallet delegated
// (taken back after): the addresses end with 0 USDT and 0 TRX, and the ledger's swept is the
// treasury's balance to the base unit.
func TestTronSweepsWithDelegatedEnergy(t *testing.T) {
	r := newTronRig(t)
	deps := []*payoutv1.Deposit{r.paidOut(25_000_000), r.paidOut(7_650_000)}
	r.untilSwept(r.sweeper(nil), deps...)
	r.expectSwept(deps...)
	// the energy wallet paid the two activations and nothing else: no TRX burnt for energy
	if got := r.srv.TRX(r.energy.at); got != tronWalletTRX-2*chaintest.TronCreateAccountFee {
		t.Errorf("the energy wallet holds %d sun; want %d (two activations)", got, tronWalletTRX-2*chaintest.TronCreateAccountFee)
	}
	facts, err := gather.Sweeps(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	swept := new(big.Int)
	n := 0
	for _, f := range facts {
		if f.Network == string(payoutv1.NetworkTron) {
			swept.Add(swept, f.Units)
			n++
		}
	}
	if treasury := r.srv.TokenBalance(chaintest.TronUSDT, r.treasury); n != 2 || swept.Cmp(treasury) != 0 {
		t.Errorf("the ledger reads %d Tron sweeps of %s base units; the treasury holds %s", n, swept, treasury)
	}
}

// TestTronRefusesATransactionTheNodeChanged: a node that builds the transfer to another
// recipient, or of another amount, gets nothing signed; the same deposit is swept once the
// node builds what was asked.
func TestTronRefusesATransactionTheNodeChanged(t *testing.T) {
	r := newTronRig(t)
	dep := r.paidOut(3_000_000)
	thief := common.HexToAddress("0x00000000000000000000000000000000000bad01")
	for _, tc := range []struct {
		name  string
		to    *common.Address
		extra int64
	}{{"another recipient", &thief, 0}, {"another amount", nil, 1}} {
		r.srv.TamperTransfers(tc.to, tc.extra)
		s := r.sweeper(nil)
		var last error
		for i := 0; i < 10; i++ {
			if _, err := s.Pass(ctx); err != nil {
				last = err
			}
			r.srv.Mine(1)
		}
		if last == nil || !strings.Contains(last.Error(), "refused the node's transaction") {
			t.Fatalf("%s: the last pass said %v; want a refusal", tc.name, last)
		}
		sw := &payoutv1.Sweep{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), sw); err != nil {
			t.Fatal(err)
		}
		b := &payoutv1.SweepBatch{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: sw.Status.Batch}, b); err != nil {
			t.Fatal(err)
		}
		if b.Status.SignedTx != "" || r.srv.Included(r.at(dep), trontx.TriggerSmartContract) != 0 {
			t.Fatalf("%s: batch %s is %s with a signed transaction", tc.name, b.Name, b.Status.State)
		}
	}
	if got := r.srv.TokenBalance(chaintest.TronUSDT, thief); got.Sign() != 0 {
		t.Fatalf("the other recipient got %s", got)
	}
	r.srv.TamperTransfers(nil, 0)
	r.untilSwept(r.sweeper(nil), dep)
	r.expectSwept(dep)
}

// TestTronCrashBetweenSigningAndBroadcast and TestTronCrashAfterBroadcastBeforeTheStatusWrite: a
// sweeper killed at either point, and started again, sends the transfer it persisted (same
// txID, same bytes): the deposit address sends one transfer.
func TestTronCrashBetweenSigningAndBroadcast(t *testing.T) { tronCrashAndResume(t, false) }

func TestTronCrashAfterBroadcastBeforeTheStatusWrite(t *testing.T) { tronCrashAndResume(t, true) }

func tronCrashAndResume(t *testing.T, afterBroadcast bool) {
	r := newTronRig(t)
	dep := r.paidOut(4_000_000)
	dying := &killAt{afterBroadcast: afterBroadcast}
	s := r.sweeper(func(m Mover) Mover { dying.Mover = m; return dying })
	for i := 0; !dying.killed && i < 20; i++ {
		if err := pass(s); err != nil && !errors.Is(err, errKilled) {
			t.Fatal(err)
		}
		r.srv.Mine(1) // the activation and delegations
	}
	if !dying.killed {
		t.Fatal("the sweeper never reached the broadcast")
	}
	sw := &payoutv1.Sweep{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), sw); err != nil {
		t.Fatal(err)
	}
	signed := &payoutv1.SweepBatch{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: sw.Status.Batch}, signed); err != nil {
		t.Fatal(err)
	}
	if signed.Status.State != payoutv1.SweepBatchSigned || signed.Status.SignedTx == "" {
		t.Fatalf("at the kill the batch is %+v: its transaction must be persisted before any broadcast", signed.Status)
	}
	r.untilSwept(r.sweeper(nil), dep)
	r.expectSwept(dep)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), sw); err != nil {
		t.Fatal(err)
	}
	if sw.Status.Batch != signed.Name || sw.Status.TxHash != signed.Status.TxHash {
		t.Fatalf("after the restart batch %s sent %s; before it %s had signed %s", sw.Status.Batch, sw.Status.TxHash, signed.Name, signed.Status.TxHash)
	}
}

// TestTronExpiredTransferIsSignedAgain: a transfer the node accepted and lost is broadcast
// again until the solidified chain is past its expiration without it; only then is the batch
// Expired and the deposit signed anew, and it is swept once.
func TestTronExpiredTransferIsSignedAgain(t *testing.T) {
	r := newTronRig(t)
	dep := r.paidOut(5_000_000)
	r.srv.DropTransfers(true)
	s := r.sweeper(nil)
	var first *payoutv1.SweepBatch
	for i := 0; i < 80 && (first == nil || first.Status.State != payoutv1.SweepBatchExpired); i++ {
		if _, err := s.Pass(ctx); err != nil {
			t.Logf("pass: %v", err)
		}
		sw := &payoutv1.Sweep{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), sw); err != nil {
			t.Fatal(err)
		}
		b := &payoutv1.SweepBatch{}
		name := sw.Status.Batch
		if first != nil {
			name = first.Name
		}
		if name != "" && env.Client.Get(ctx, client.ObjectKey{Name: name}, b) == nil && b.Status.SignedTx != "" {
			if first != nil && first.Status.State == payoutv1.SweepBatchBroadcast && b.Status.State == payoutv1.SweepBatchExpired {
				// it expired only once the solidified block is past its expiration
				raw, _, _ := trontx.RawOf(common.FromHex(b.Status.SignedTx))
				tx, _ := trontx.Decode(raw)
				if solidTime := r.srv.HeadTime() - 3*19; solidTime*1000 <= tx.Expiration.UnixMilli() {
					t.Fatalf("expired with the solidified block at %d s, the transaction expiring at %d ms", solidTime, tx.Expiration.UnixMilli())
				}
			}
			first = b
		}
		r.srv.Mine(1)
	}
	if first == nil || first.Status.State != payoutv1.SweepBatchExpired {
		t.Fatalf("the lost transfer's batch is %+v; want Expired", first)
	}
	r.srv.DropTransfers(false)
	r.untilSwept(r.sweeper(nil), dep)
	r.expectSwept(dep)
	sw := &payoutv1.Sweep{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), sw); err != nil {
		t.Fatal(err)
	}
	if sw.Status.Batch == first.Name || len(sw.Status.ReleasedBatches) != 1 || sw.Status.ReleasedBatches[0] != first.Name {
		t.Fatalf("the sweep went in batch %s after %v; the expired one was %s", sw.Status.Batch, sw.Status.ReleasedBatches, first.Name)
	}
}
