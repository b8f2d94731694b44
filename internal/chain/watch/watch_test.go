package watch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	watchpkg "k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// These tests run the watcher against real anvil nodes (package devchain) and a real
// kube-apiserver and etcd (envtest, bin/k8s). Set WATCH_TEST_LOG=1 to see the operator's log.

var (
	env     *testenv.Env
	ctx     = context.Background()
	deriver *depositkey.Public
	testLog = logr.Discard()
)

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run()) // listing (make test-fuzz) needs no control plane
	}
	if testing.Short() {
		fmt.Println("-short: the watcher's tests run on the control plane (envtest) and dev chains (anvil); `make test-envtest` runs them")
		os.Exit(0)
	}
	var err error
	if os.Getenv("WATCH_TEST_LOG") != "" {
		testLog = zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	}
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, xpub, err := depositkey.Generate()
	if err == nil {
		deriver, err = depositkey.NewPublic(xpub)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

var nsSeq int

func namespace(t testing.TB) string {
	t.Helper()
	nsSeq++
	name := fmt.Sprintf("watch-test-%d-%d", time.Now().Unix()%100000, nsSeq)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// newID is a fresh random transfer id: every test (and every -count repetition) gets its own
// deposit addresses.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// transfer creates a v1 transfer on network with the deposit address derived from its id and
// returns the address.
func transfer(t *testing.T, ns, id string, network payoutv1.Network) common.Address {
	t.Helper()
	addr, path, err := deriver.DepositAddress(network, id)
	if err != nil {
		t.Fatal(err)
	}
	tr := testgen.Transfer(ns, id, func(tr *payoutv1.Transfer) {
		tr.Spec.SourceNetwork, tr.Spec.DepositAddress, tr.Spec.DepositPath = network, addr, path
		tr.Spec.CustomerUUID = fmt.Sprintf("7d0e1c55-8d0f-4d4e-9f59-%012x", time.Now().UnixNano()%(1<<40))
	})
	if err := env.Client.Create(ctx, tr); err != nil {
		t.Fatal(err)
	}
	return common.HexToAddress(addr)
}

// operator is a running manager with the chain watchers of cfg.
type operator struct {
	chains *Chains
	// client is the manager's (cached) client: what the watcher reads through
	client client.Client
	cancel context.CancelFunc
	done   chan error
}

// startOperator runs a manager with Setup(cfg) until stop (or the end of the test).
func startOperator(t *testing.T, cfg *config.Config) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		t.Fatal(err)
	}
	chains, err := Setup(mgr, cfg, Options{Log: testLog})
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	op := &operator{chains: chains, client: mgr.GetClient(), cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(c) }()
	t.Cleanup(op.stop)
	return op
}

func (o *operator) stop() {
	if o.cancel == nil {
		return
	}
	o.cancel()
	<-o.done
	o.cancel = nil
}

func configOf(c *devchain.Chain, depth int64) *config.Config {
	n := chaintest.Network(c, depth)
	return &config.Config{Networks: map[payoutv1.Network]*config.Network{payoutv1.Network(c.Network): &n}}
}

func deleteCursor(t testing.TB, network payoutv1.Network) {
	t.Helper()
	err := env.Client.Delete(ctx, &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(network)}})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

func cursor(t testing.TB, network payoutv1.Network) *payoutv1.ChainCursor {
	t.Helper()
	cc := &payoutv1.ChainCursor{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: string(network)}, cc); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return cc
}

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitScanned waits until the persisted cursor of network has scanned through block.
func waitScanned(t testing.TB, network payoutv1.Network, block int64) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("the %s cursor at block %d", network, block), func() bool {
		cc := cursor(t, network)
		return cc.Status.Block >= block && cc.Status.Synced
	})
}

func depositsOf(t *testing.T, ns string) []payoutv1.Deposit {
	t.Helper()
	list := &payoutv1.DepositList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i].Spec, list.Items[j].Spec
		return a.BlockNumber < b.BlockNumber || (a.BlockNumber == b.BlockNumber && a.LogIndex < b.LogIndex)
	})
	return list.Items
}

func TestDepositCreditedAtExactlyTheConfirmationDepth(t *testing.T) {
	set, c, ns, id, addr := baseWithTransfer(t)
	startOperator(t, configOf(c, 3))
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-3)

	tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 25_000_000)
	chaintest.Mine(t, c, 1) // two confirmations
	waitScanned(t, payoutv1.NetworkBase, block-1)
	// the watcher has polled a head with the deposit at 2 confirmations; give it a few more polls
	time.Sleep(500 * time.Millisecond)
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a deposit with 2 of 3 confirmations was credited: %+v", got[0].Spec)
	}
	chaintest.Mine(t, c, 1) // three: at depth
	eventually(t, 10*time.Second, "the deposit", func() bool { return len(depositsOf(t, ns)) == 1 })
	d := depositsOf(t, ns)[0]
	want := payoutv1.DepositSpec{
		Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: strings.ToLower(c.Tokens[devchain.USDC].Hex()),
		To: strings.ToLower(addr.Hex()), From: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", Amount: "25000000",
		TxHash: strings.ToLower(tx.Hash().Hex()), LogIndex: d.Spec.LogIndex, BlockNumber: block, BlockHash: d.Spec.BlockHash,
		BlockTime: d.Spec.BlockTime, Confirmations: 3,
	}
	if d.Spec != want {
		t.Fatalf("deposit\n got %+v\nwant %+v", d.Spec, want)
	}
	if d.Name != payoutv1.DepositName(payoutv1.NetworkBase, tx.Hash().Hex(), d.Spec.LogIndex) || d.Labels[payoutv1.DepositTransferLabel] != id {
		t.Fatalf("deposit name %s labels %v", d.Name, d.Labels)
	}
	hdr, err := c.Client.HeaderByNumber(ctx, big.NewInt(block))
	if err != nil || strings.ToLower(hdr.Hash().Hex()) != d.Spec.BlockHash || d.Spec.BlockTime.Unix() != int64(hdr.Time) {
		t.Fatalf("block facts of the deposit do not match the chain (%v)", err)
	}
	cc := cursor(t, payoutv1.NetworkBase)
	if cc.Status.ChainID != int64(c.ChainID) || cc.Status.GenesisHash != strings.ToLower(c.GenesisHash.Hex()) || cc.Status.HeartbeatAt == nil ||
		cc.Status.Endpoint != config.Redact(c.RPCURL) || len(cc.Status.Recent) == 0 {
		t.Fatalf("cursor status %+v", cc.Status)
	}
}

func TestDepositReorgedOutBeforeDepthIsNeverCredited(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	addr := transfer(t, ns, newID(), payoutv1.NetworkBase)
	startOperator(t, configOf(c, 3))
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-3)

	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 25_000_000)
	chaintest.Mine(t, c, 1)
	waitScanned(t, payoutv1.NetworkBase, block-1)
	if err := c.ReorgFrom(ctx, uint64(block)); err != nil {
		t.Fatal(err)
	}
	chaintest.Mine(t, c, 5)
	waitScanned(t, payoutv1.NetworkBase, block+3)
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a deposit removed by a reorg was credited: %+v", got[0].Spec)
	}
}

func TestRestartNeitherMissesNorDoubleCredits(t *testing.T) {
	set, c, ns, id1, a1 := baseWithTransfer(t)
	a2 := transfer(t, ns, newID(), payoutv1.NetworkBase)
	cfg := configOf(c, 2)
	first := startOperator(t, cfg)
	start := chaintest.Head(t, c)
	waitScanned(t, payoutv1.NetworkBase, start-1)

	_, b1 := chaintest.Send(t, c, set.FundedKey, devchain.USDC, a1, 25_000_000)
	chaintest.Send(t, c, set.FundedKey, devchain.USDC, a2, 25_000_000)
	chaintest.Mine(t, c, 1)
	eventually(t, 10*time.Second, "two deposits", func() bool { return len(depositsOf(t, ns)) == 2 })
	first.stop()

	// while no watcher runs: a short deposit (10 of 25 USD) and blocks past its depth
	short, b3 := chaintest.Send(t, c, set.FundedKey, devchain.USDC, a1, 10_000_000)
	chaintest.Mine(t, c, 3)
	// the persisted cursor lags behind the first deposits (as after a crash before a write):
	// the new watcher scans them again
	cc := cursor(t, payoutv1.NetworkBase)
	back, err := c.Client.HeaderByNumber(ctx, big.NewInt(b1-1))
	if err != nil {
		t.Fatal(err)
	}
	cc.Status.Block, cc.Status.BlockHash = b1-1, strings.ToLower(back.Hash().Hex())
	cc.Status.Recent = []payoutv1.RecentBlock{{Number: b1 - 1, Hash: cc.Status.BlockHash}}
	if err := env.Client.Status().Update(ctx, cc); err != nil {
		t.Fatal(err)
	}

	startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkBase, b3+1)
	got := depositsOf(t, ns)
	if len(got) != 3 {
		t.Fatalf("%d deposits after the restart, want 3 (two before, one while stopped)", len(got))
	}
	last := got[2].Spec
	if last.TxHash != strings.ToLower(short.Hash().Hex()) || last.Amount != "10000000" || last.Transfer != id1 {
		t.Fatalf("the short deposit was recorded as %+v", last)
	}
	seen := map[string]bool{}
	for _, d := range got {
		key := d.Spec.TxHash + "/" + fmt.Sprint(d.Spec.LogIndex)
		if seen[key] {
			t.Fatalf("log %s credited twice", key)
		}
		seen[key] = true
	}
}

// TestCursorOfAnotherChainIsReset: a cursor taken on another chain (another genesis, or another
// chain id) is not resumed; the watcher restarts from the block of the oldest transfer it
// watches, not from the head, so a deposit made before it started is recorded (before, the
// reset started at the head and skipped it); the blocks scanned again are the cursor's gap
// until they are scanned.
func TestCursorOfAnotherChainIsReset(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Polygon)
	c := set.Chains[devchain.Polygon]
	chaintest.ManualMining(t, c)
	ns := namespace(t)
	for _, old := range []payoutv1.ChainCursorStatus{
		{ChainID: int64(c.ChainID), GenesisHash: "0x" + strings.Repeat("de", 32), Block: 987654, BlockHash: "0x" + strings.Repeat("ad", 32)},
		{ChainID: 1, GenesisHash: strings.ToLower(c.GenesisHash.Hex()), Block: 987654, BlockHash: "0x" + strings.Repeat("ad", 32)},
	} {
		deleteCursor(t, payoutv1.NetworkPolygon)
		cc := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "polygon"}, Spec: payoutv1.ChainCursorSpec{Network: payoutv1.NetworkPolygon}}
		if err := env.Client.Create(ctx, cc); err != nil {
			t.Fatal(err)
		}
		cc.Status = old
		if err := env.Client.Status().Update(ctx, cc); err != nil {
			t.Fatal(err)
		}
		id := newID()
		addr := transfer(t, ns, id, payoutv1.NetworkPolygon)
		tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 3_000_000)
		chaintest.Mine(t, c, 3)
		// the first endpoint is dead: the watcher fails over to the second
		cfg := configOf(c, 2)
		cfg.Networks[payoutv1.NetworkPolygon].RPC = []string{"http://127.0.0.1:1", c.RPCURL}
		op := startOperator(t, cfg)
		eventually(t, 20*time.Second, "the cursor reset", func() bool {
			cc := cursor(t, payoutv1.NetworkPolygon)
			return cc.Status.GenesisHash == strings.ToLower(c.GenesisHash.Hex()) && cc.Status.ChainID == int64(c.ChainID) && cc.Status.Block < 987654 && cc.Status.Synced
		})
		if ep := cursor(t, payoutv1.NetworkPolygon).Status.Endpoint; ep != config.Redact(c.RPCURL) {
			t.Fatalf("endpoint in use %s, want the second one %s", ep, config.Redact(c.RPCURL))
		}
		waitEvent(t, "polygon", CursorResetReason)
		eventually(t, 10*time.Second, "the deposit made before the reset", func() bool {
			for _, d := range depositsOf(t, ns) {
				if d.Spec.Transfer == id && d.Spec.BlockNumber == block && strings.EqualFold(d.Spec.TxHash, tx.Hash().Hex()) {
					return true
				}
			}
			return false
		})
		waitGapScanned(t, payoutv1.NetworkPolygon)
		op.stop()
	}
}

// waitEvent waits for a Warning event with reason on the ChainCursor of network.
func waitEvent(t *testing.T, network, reason string) {
	t.Helper()
	eventually(t, 10*time.Second, "a "+reason+" warning", func() bool {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ChainCursor" && e.Regarding.Name == network && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	})
}

func TestReorgBehindTheCursorIsRewoundAndRescanned(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	addr := transfer(t, ns, newID(), payoutv1.NetworkBase)
	startOperator(t, configOf(c, 1))
	chaintest.Mine(t, c, 3)
	head := chaintest.Head(t, c)
	waitScanned(t, payoutv1.NetworkBase, head)
	// a reorg deeper than the depth: the two scanned blocks on top are replaced, and a deposit
	// lands in the new second one
	tx, err := c.NewTransfer(ctx, set.FundedKey, devchain.USDC, addr, big.NewInt(4_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reorg(ctx, 2, devchain.ReorgTx{Tx: tx, BlockOffset: 1}); err != nil {
		t.Fatal(err)
	}
	chaintest.Mine(t, c, 1)
	waitEvent(t, "base", CursorReorgReason)
	eventually(t, 10*time.Second, "the deposit of the new chain", func() bool { return len(depositsOf(t, ns)) == 1 })
	d := depositsOf(t, ns)[0]
	hdr, err := c.Client.HeaderByNumber(ctx, big.NewInt(d.Spec.BlockNumber))
	if err != nil || d.Spec.BlockNumber != head || strings.ToLower(hdr.Hash().Hex()) != d.Spec.BlockHash || d.Spec.TxHash != strings.ToLower(tx.Hash().Hex()) {
		t.Fatalf("deposit %+v is not the canonical one (%v)", d.Spec, err)
	}
}

func TestDeletedTransferLeavesTheBook(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	keptID, goneID := newID(), newID()
	kept := transfer(t, ns, keptID, payoutv1.NetworkBase)
	gone := transfer(t, ns, goneID, payoutv1.NetworkBase)
	other := transfer(t, ns, newID(), payoutv1.NetworkPolygon)
	op := startOperator(t, configOf(c, 1))
	eventually(t, 10*time.Second, "the book", func() bool { return op.chains.Book.Len() >= 3 })
	if _, ok := op.chains.Book.TransferFor(payoutv1.NetworkBase, strings.ToUpper(gone.Hex()[2:])); ok {
		t.Error("an address without 0x matched")
	}
	if tr, ok := op.chains.Book.TransferFor(payoutv1.NetworkBase, gone.Hex()); !ok || tr.Name != goneID {
		t.Fatalf("the book does not know %s", gone.Hex())
	}
	// one key, one address on every EVM network: a deposit on base to a polygon transfer's
	// address is that transfer's (a stray, on the wrong network)
	if tr, ok := op.chains.Book.TransferFor(payoutv1.NetworkBase, other.Hex()); !ok || tr.Namespace != ns {
		t.Error("a polygon transfer's address is not answered on base")
	}
	if _, ok := op.chains.Book.TransferFor(payoutv1.NetworkTron, other.Hex()); ok {
		t.Error("an EVM transfer's address matched on tron")
	}
	if err := env.Client.Delete(ctx, &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: goneID}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted transfer to leave the book", func() bool {
		_, ok := op.chains.Book.TransferFor(payoutv1.NetworkBase, gone.Hex())
		return !ok
	})
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c))
	chaintest.Send(t, c, set.FundedKey, devchain.USDC, gone, 1_000_000)
	_, b := chaintest.Send(t, c, set.FundedKey, devchain.USDC, kept, 2_000_000)
	waitScanned(t, payoutv1.NetworkBase, b)
	got := depositsOf(t, ns)
	if len(got) != 1 || got[0].Spec.Transfer != keptID {
		t.Fatalf("deposits %+v", got)
	}
}

func TestNodeDownAtStartKeepsTheCursor(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	addr := transfer(t, ns, newID(), payoutv1.NetworkBase)
	good := configOf(c, 2)
	op := startOperator(t, good)
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-1)
	op.stop()
	before := cursor(t, payoutv1.NetworkBase).Status

	// a deposit while the watcher runs without a reachable node
	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 5_000_000)
	chaintest.Mine(t, c, 2)
	down := configOf(c, 2)
	down.Networks[payoutv1.NetworkBase].RPC = []string{"http://127.0.0.1:1"}
	op = startOperator(t, down)
	eventually(t, 20*time.Second, "the watcher to report the dead node", func() bool {
		st := cursor(t, payoutv1.NetworkBase).Status
		return !st.Synced && strings.Contains(st.Message, "127.0.0.1:1")
	})
	after := cursor(t, payoutv1.NetworkBase).Status
	if after.Block != before.Block || after.BlockHash != before.BlockHash || after.GenesisHash != before.GenesisHash || after.ChainID != before.ChainID {
		t.Fatalf("the cursor changed while the node was unreachable: %+v → %+v", before, after)
	}
	op.stop()

	startOperator(t, good)
	waitScanned(t, payoutv1.NetworkBase, block)
	if got := depositsOf(t, ns); len(got) != 1 || got[0].Spec.BlockNumber != block {
		t.Fatalf("deposits after the node came back: %+v", got)
	}
}

// TestDepositOnAnotherEVMNetworkIsRecorded: a v1 deposit address is the same on every EVM
// network, so USDC sent on polygon to a base transfer's address is recorded, under polygon, for
// that transfer (which keeps it as a stray, refundable on polygon); a zero-value transfer to the
// address, which anyone can emit, is no deposit.
func TestDepositOnAnotherEVMNetworkIsRecorded(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base, devchain.Polygon)
	base, poly := set.Chains[devchain.Base], set.Chains[devchain.Polygon]
	for _, c := range []*devchain.Chain{base, poly} {
		chaintest.ManualMining(t, c)
	}
	deleteCursor(t, payoutv1.NetworkBase)
	deleteCursor(t, payoutv1.NetworkPolygon)
	ns := namespace(t)
	id := newID()
	addr := transfer(t, ns, id, payoutv1.NetworkBase)
	cfg := configOf(base, 1)
	polyNet := chaintest.Network(poly, 1)
	cfg.Networks[payoutv1.NetworkPolygon] = &polyNet
	startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkPolygon, chaintest.Head(t, poly))

	zero, _ := chaintest.Send(t, poly, set.FundedKey, devchain.USDC, addr, 0)
	tx, block := chaintest.Send(t, poly, set.FundedKey, devchain.USDC, addr, 7_000_000)
	waitScanned(t, payoutv1.NetworkPolygon, block)
	eventually(t, 10*time.Second, "the polygon deposit", func() bool { return len(depositsOf(t, ns)) >= 1 })
	time.Sleep(300 * time.Millisecond) // a few more polls: nothing else may come
	got := depositsOf(t, ns)
	if len(got) != 1 {
		t.Fatalf("want the one polygon deposit, got %d: %+v", len(got), got)
	}
	d := got[0]
	if d.Spec.Network != payoutv1.NetworkPolygon || d.Spec.Transfer != id || d.Labels[payoutv1.DepositTransferLabel] != id ||
		!strings.EqualFold(d.Spec.TxHash, tx.Hash().Hex()) || d.Spec.Amount != "7000000" {
		t.Fatalf("deposit %+v", d.Spec)
	}
	if strings.EqualFold(d.Spec.TxHash, zero.Hash().Hex()) {
		t.Fatal("a zero-value transfer was recorded as a deposit")
	}
}

// TestRestartOnASyncedCursorStaysInSync: a watcher that takes over a cursor in sync a moment ago
// (payoutd restarted, as in a rolling update) never writes it out of sync: a "starting" state
// made the network's deposit options unavailable, and refused transfers, until its first poll.
// A cursor whose heartbeat is old is not taken as in sync.
func TestRestartOnASyncedCursorStaysInSync(t *testing.T) {
	_, c, _, _, _ := baseWithTransfer(t)
	cfg := configOf(c, 2)
	first := startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-1)
	first.stop()

	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	history := func() <-chan watchpkg.Event {
		t.Helper()
		w, err := wc.Watch(ctx, &payoutv1.ChainCursorList{}, client.MatchingFields{"metadata.name": string(payoutv1.NetworkBase)},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: cursor(t, payoutv1.NetworkBase).ResourceVersion}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w.ResultChan()
	}
	// the versions written after restarted, until one has a heartbeat past a poll after it
	versions := func(events <-chan watchpkg.Event, restarted time.Time) []*payoutv1.ChainCursor {
		t.Helper()
		var out []*payoutv1.ChainCursor
		timeout := time.After(20 * time.Second)
		for {
			select {
			case ev := <-events:
				cc, ok := ev.Object.(*payoutv1.ChainCursor)
				if !ok {
					continue
				}
				out = append(out, cc)
				if hb := cc.Status.HeartbeatAt; hb != nil && hb.After(restarted.Add(2*time.Second)) {
					return out
				}
			case <-timeout:
				t.Fatalf("no heartbeat 2 s past the restart; versions written: %d", len(out))
			}
		}
	}

	events := history()
	restarted := time.Now()
	second := startOperator(t, cfg)
	for _, cc := range versions(events, restarted) {
		if !cc.Status.Synced {
			t.Fatalf("a restart on a cursor in sync wrote it out of sync: %q", cc.Status.Message)
		}
	}
	second.stop()

	// a heartbeat older than stallAfter: the watcher starts out of sync, as before
	cc := cursor(t, payoutv1.NetworkBase)
	old := metav1.NewTime(time.Now().Add(-cfg.Networks[payoutv1.NetworkBase].StallAfter.Duration - time.Second))
	cc.Status.HeartbeatAt = &old
	if err := env.Client.Status().Update(ctx, cc); err != nil {
		t.Fatal(err)
	}
	events = history()
	restarted = time.Now()
	startOperator(t, cfg)
	starting := false
	for _, cc := range versions(events, restarted) {
		starting = starting || (!cc.Status.Synced && strings.HasPrefix(cc.Status.Message, "starting"))
	}
	if !starting {
		t.Fatal("a cursor with an old heartbeat was taken over as in sync")
	}
}
