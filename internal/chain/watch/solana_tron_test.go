package watch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	kptr "k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/tron"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The Tron and Solana watchers against chaintest's Tron and Solana RPC test servers (which
// answer in the nodes' documented JSON-RPC shapes: neither node can be installed here) and a
// real API server (envtest).

var tronSender = common.HexToAddress("0x2222222222222222222222222222222222222222")

func tronNetwork(url string, depth config.Depth) *config.Network {
	n := &config.Network{
		Kind: config.KindTron, RPC: []string{url}, ChainID: chaintest.TronMainnetChainID, Confirmations: depth,
		Tokens: map[payoutv1.Token]*config.Token{payoutv1.TokenUSDT: {Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"}},
	}
	n.PollInterval.Duration = 100 * time.Millisecond
	n.HeartbeatInterval.Duration = time.Second
	return n
}

func solanaNetwork(url string) *config.Network {
	n := &config.Network{
		Kind: config.KindSolana, RPC: []string{url}, GenesisHash: chaintest.SolanaMainnetGenesis,
		Tokens: map[payoutv1.Token]*config.Token{payoutv1.TokenUSDC: {
			Contract: chaintest.SolanaUSDCMint, PlatformAddress: chaintest.SolanaAddress("platform"),
		}},
	}
	n.PollInterval.Duration = 100 * time.Millisecond
	n.HeartbeatInterval.Duration = time.Second
	return n
}

func configWith(networks map[payoutv1.Network]*config.Network) *config.Config {
	c := &config.Config{Networks: networks}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return c
}

// tronTransfer creates a v1 USDT transfer on tron with its deposit address (Base58Check, from
// the deposit key) and returns the address's 20 bytes and its Tron spelling.
func tronTransfer(t *testing.T, ns, id string) (common.Address, string) {
	t.Helper()
	addr, path, err := deriver.DepositAddress(payoutv1.NetworkTron, id)
	if err != nil {
		t.Fatal(err)
	}
	tr := testgen.Transfer(ns, id, func(tr *payoutv1.Transfer) {
		tr.Spec.SourceNetwork, tr.Spec.SourceToken, tr.Spec.DepositAddress, tr.Spec.DepositPath = payoutv1.NetworkTron, payoutv1.TokenUSDT, addr, path
		tr.Spec.CustomerUUID = fmt.Sprintf("7d0e1c55-8d0f-4d4e-9f59-%012x", time.Now().UnixNano()%(1<<40))
	})
	if err := env.Client.Create(ctx, tr); err != nil {
		t.Fatal(err)
	}
	id20, err := chain.TronAddressBytes(addr)
	if err != nil {
		t.Fatal(err)
	}
	return common.Address(id20), addr
}

// TestTronDepositCreditedAtDepthAndTheCursorPersists: a TRC-20 Transfer to a transfer's Tron
// deposit address is recorded at exactly the configured depth, spelled the Tron way; a watcher
// restarted later resumes from its persisted cursor, finds a deposit made while it was stopped
// and records none twice.
func TestTronDepositCreditedAtDepthAndTheCursorPersists(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 30)
	deleteCursor(t, payoutv1.NetworkTron)
	ns := namespace(t)
	id := newID()
	addr, tronAddr := tronTransfer(t, ns, id)
	cfg := configWith(map[payoutv1.Network]*config.Network{payoutv1.NetworkTron: tronNetwork(srv.URL, 3)})
	op := startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkTron, srv.Head()-2)

	tx := srv.Transfer(chaintest.TronUSDT, tronSender, addr, 25_000_000)
	srv.Mine(1)
	block := srv.Head()
	srv.Mine(1) // two confirmations
	waitScanned(t, payoutv1.NetworkTron, block-1)
	time.Sleep(500 * time.Millisecond) // a few more polls
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a deposit with 2 of 3 confirmations was credited: %+v", got[0].Spec)
	}
	srv.Mine(1) // three: at depth
	eventually(t, 10*time.Second, "the deposit", func() bool { return len(depositsOf(t, ns)) == 1 })
	d := depositsOf(t, ns)[0]
	want := payoutv1.DepositSpec{
		Transfer: id, Network: payoutv1.NetworkTron, Token: payoutv1.TokenUSDT, Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		To: tronAddr, From: chain.TronAddress(tronSender), Amount: "25000000", TxHash: tron.TxID(tx), LogIndex: 0,
		BlockNumber: block, BlockHash: tron.TxID(srv.BlockHash(block)), BlockTime: d.Spec.BlockTime, Confirmations: 3,
	}
	if d.Spec != want {
		t.Fatalf("deposit\n got %+v\nwant %+v", d.Spec, want)
	}
	if d.Spec.BlockTime.Unix() != 1_700_000_000+3*block || d.Name != payoutv1.DepositName(payoutv1.NetworkTron, tron.TxID(tx), 0) {
		t.Fatalf("deposit %s at %s", d.Name, d.Spec.BlockTime)
	}
	cc := cursor(t, payoutv1.NetworkTron)
	if cc.Status.ChainID != chaintest.TronMainnetChainID || cc.Status.GenesisHash != strings.ToLower(srv.BlockHash(0).Hex()) ||
		cc.Status.Endpoint != config.Redact(srv.URL) || !cc.Status.Synced || len(cc.Status.Recent) == 0 {
		t.Fatalf("cursor status %+v", cc.Status)
	}

	op.stop()
	stoppedAt := cursor(t, payoutv1.NetworkTron).Status.Block
	later := srv.Transfer(chaintest.TronUSDT, tronSender, addr, 1_000_000)
	srv.Mine(1)
	laterBlock := srv.Head()
	srv.Mine(10)
	startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkTron, srv.Head()-2)
	got := depositsOf(t, ns)
	if len(got) != 2 || got[1].Spec.TxHash != tron.TxID(later) || got[1].Spec.BlockNumber != laterBlock {
		t.Fatalf("after the restart (cursor was at %d): %d deposits %+v", stoppedAt, len(got), got)
	}
}

// TestTronReorgBehindTheCursor: blocks the watcher scanned are replaced; it rewinds (a Reorg
// warning on the cursor), and the transfer the replaced blocks held, never at depth, is never
// recorded.
func TestTronReorgBehindTheCursor(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 10)
	deleteCursor(t, payoutv1.NetworkTron)
	ns := namespace(t)
	addr, _ := tronTransfer(t, ns, newID())
	startOperator(t, configWith(map[payoutv1.Network]*config.Network{payoutv1.NetworkTron: tronNetwork(srv.URL, 2)}))
	waitScanned(t, payoutv1.NetworkTron, srv.Head()-1)
	srv.Transfer(chaintest.TronUSDT, tronSender, addr, 25_000_000)
	srv.Mine(1) // the transfer's block has one confirmation of two
	waitScanned(t, payoutv1.NetworkTron, srv.Head()-1)
	scanned := cursor(t, payoutv1.NetworkTron).Status
	srv.Reorg(3) // replaces the transfer's block and two scanned blocks before it
	srv.Mine(3)
	waitEvent(t, "tron", CursorReorgReason)
	waitScanned(t, payoutv1.NetworkTron, srv.Head()-1)
	after := cursor(t, payoutv1.NetworkTron).Status
	if after.BlockHash != strings.ToLower(srv.BlockHash(after.Block).Hex()) {
		t.Fatalf("the cursor holds block %d %s, not the canonical %s", after.Block, after.BlockHash, srv.BlockHash(after.Block).Hex())
	}
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a transfer reorganised away was credited (cursor had been at %d): %+v", scanned.Block, got[0].Spec)
	}
}

// TestSolanaCursorFollowsTheNode: the Solana watcher writes the cursor of solana from the node:
// the genesis, the finalized slot and its blockhash, the processed slot; it reports the node
// unhealthy, stuck or down as not synced, and synced again once it recovers.
func TestSolanaCursorFollowsTheNode(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	deleteCursor(t, payoutv1.NetworkSolana)
	startWith(t, configWith(map[payoutv1.Network]*config.Network{payoutv1.NetworkSolana: solanaNetwork(srv.URL)}), Options{SolanaStallAfter: 2 * time.Second}, false)
	_, _, finalized := srv.Slots()
	eventually(t, 10*time.Second, "the solana cursor in sync", func() bool {
		st := cursor(t, payoutv1.NetworkSolana).Status
		return st.Synced && st.Block == int64(finalized)
	})
	st := cursor(t, payoutv1.NetworkSolana).Status
	if st.GenesisHash != chaintest.SolanaMainnetGenesis || st.BlockHash != srv.Blockhash(finalized) || st.Head != 1000 ||
		st.Endpoint != config.Redact(srv.URL) || st.HeartbeatAt == nil || st.ChainID != 0 {
		t.Fatalf("cursor %+v", st)
	}
	srv.Advance(5)
	eventually(t, 10*time.Second, "the slot to follow", func() bool {
		return cursor(t, payoutv1.NetworkSolana).Status.Block == int64(finalized)+5
	})

	srv.SetBehind(150)
	eventually(t, 10*time.Second, "an unhealthy node reported", func() bool {
		st := cursor(t, payoutv1.NetworkSolana).Status
		return !st.Synced && strings.Contains(st.Message, "Node is behind by 150 slots")
	})
	srv.SetBehind(0)
	srv.Advance(1) // caught up: its slot moved on
	eventually(t, 10*time.Second, "synced again", func() bool { return cursor(t, payoutv1.NetworkSolana).Status.Synced })

	// the slot stands still (a stuck node behind a healthy-looking endpoint)
	eventually(t, 10*time.Second, "a stuck node reported", func() bool {
		st := cursor(t, payoutv1.NetworkSolana).Status
		return !st.Synced && strings.Contains(st.Message, "the node is stuck")
	})
	srv.Advance(1)
	eventually(t, 10*time.Second, "synced again", func() bool { return cursor(t, payoutv1.NetworkSolana).Status.Synced })

	srv.SetDown(true)
	eventually(t, 10*time.Second, "a node down reported", func() bool {
		st := cursor(t, payoutv1.NetworkSolana).Status
		return !st.Synced && strings.Contains(st.Message, "503")
	})
	if got := cursor(t, payoutv1.NetworkSolana).Status.Block; got != int64(finalized)+7 {
		t.Fatalf("the cursor's slot changed to %d while the node was down", got)
	}
}

// TestSolanaLookupThroughChains: Chains.LookupTx sends solana signatures to the Solana lookup.
func TestSolanaLookupThroughChains(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	deleteCursor(t, payoutv1.NetworkSolana)
	op := startOperator(t, configWith(map[payoutv1.Network]*config.Network{payoutv1.NetworkSolana: solanaNetwork(srv.URL)}))
	platform := chaintest.SolanaAddress("platform")
	_, _, finalized := srv.Slots()
	sig := srv.AddTx(chaintest.SolanaTestTx{Slot: finalized, Transfers: []chaintest.SolanaTokenTransfer{
		{From: chaintest.SolanaAddress("payer"), To: platform, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000},
	}})
	obs, err := op.chains.LookupTx(ctx, payoutv1.NetworkSolana, sig)
	if err != nil || !obs.AtDepth() || len(obs.Transfers) != 1 || obs.Transfers[0].To != platform {
		t.Fatalf("LookupTx = %+v, %v", obs, err)
	}
	if a, ok := op.chains.PlatformAddress(payoutv1.NetworkSolana, payoutv1.TokenUSDC); !ok || a != platform {
		t.Fatalf("PlatformAddress = %s, %v", a, ok)
	}
	if _, err := op.chains.LookupTx(ctx, payoutv1.NetworkTron, strings.Repeat("ab", 32)); err == nil {
		t.Fatal("a lookup on tron, which is not configured here, was answered")
	}
}

// TestDepositOptionsOfSolanaAndTron: with the deposit-option controller running beside the
// watchers, usdc-solana and usdt-tron read available only while an endpoint is configured and
// its watcher is in sync: not configured, no watcher (NoChainEndpoint); configured and in sync,
// available; the node unhealthy or down, ChainNotSynced.
func TestDepositOptionsOfSolanaAndTron(t *testing.T) {
	deleteCursor(t, payoutv1.NetworkSolana)
	deleteCursor(t, payoutv1.NetworkTron)
	if err := controllers.EnsureDepositOptions(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	reasonOf := func(name string) string {
		o := &payoutv1.DepositOption{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, o); err != nil {
			t.Fatal(err)
		}
		for _, c := range o.Status.Conditions {
			if c.Type == payoutv1.ReadyCondition {
				if o.Status.Available != (c.Reason == payoutv1.DepositOptionAvailableReason) {
					t.Fatalf("%s: available %v with reason %s", name, o.Status.Available, c.Reason)
				}
				return c.Reason
			}
		}
		return ""
	}
	waitReason := func(name, reason string) {
		t.Helper()
		eventually(t, 15*time.Second, name+" "+reason, func() bool { return reasonOf(name) == reason })
	}

	// nothing configured for solana and tron: the options are unavailable
	first := startWith(t, configWith(nil), Options{}, true)
	waitReason("usdc-solana", payoutv1.DepositOptionNoChainEndpointReason)
	waitReason("usdt-tron", payoutv1.DepositOptionNoChainEndpointReason)

	sol := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	trn := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 30)
	first.stop()
	startWith(t, configWith(map[payoutv1.Network]*config.Network{
		payoutv1.NetworkSolana: solanaNetwork(sol.URL),
		payoutv1.NetworkTron:   tronNetwork(trn.URL, 3),
	}), Options{}, true)
	waitReason("usdc-solana", payoutv1.DepositOptionAvailableReason)
	waitReason("usdt-tron", payoutv1.DepositOptionAvailableReason)

	sol.SetBehind(500)
	trn.SetDown(true)
	waitReason("usdc-solana", payoutv1.DepositOptionChainNotSyncedReason)
	waitReason("usdt-tron", payoutv1.DepositOptionChainNotSyncedReason)
	sol.SetBehind(0)
	trn.SetDown(false)
	waitReason("usdc-solana", payoutv1.DepositOptionAvailableReason)
	waitReason("usdt-tron", payoutv1.DepositOptionAvailableReason)
}

// startWith runs a manager with Setup(cfg, o), and the deposit-option controller when options
// is set, until stop or the end of the test.
func startWith(t *testing.T, cfg *config.Config, o Options, options bool) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		// each manager of the test process registers the deposit-option controller again
		Controller: ctrlconfig.Controller{SkipNameValidation: kptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Log = testLog
	chains, err := Setup(mgr, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if options {
		r := &controllers.DepositOptionReconciler{Client: mgr.GetClient(), Clock: clock.RealClock{}, MaxHeartbeatAge: 5 * time.Second}
		if err := r.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	c, cancel := context.WithCancel(ctx)
	op := &operator{chains: chains, cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(c) }()
	t.Cleanup(op.stop)
	return op
}

// TestSolanaCursorOfAnotherCluster: a cursor taken on another cluster (a test validator
// restarted from scratch, or a devnet endpoint swapped for mainnet) is taken over with a
// ChainReset warning.
func TestSolanaCursorOfAnotherCluster(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	deleteCursor(t, payoutv1.NetworkSolana)
	old := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "solana"}, Spec: payoutv1.ChainCursorSpec{Network: payoutv1.NetworkSolana}}
	if err := env.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	old.Status.GenesisHash, old.Status.Block, old.Status.BlockHash = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG", 5, chaintest.SolanaAddress("a devnet block")
	if err := env.Client.Status().Update(ctx, old); err != nil {
		t.Fatal(err)
	}
	startWith(t, configWith(map[payoutv1.Network]*config.Network{payoutv1.NetworkSolana: solanaNetwork(srv.URL)}), Options{}, false)
	waitEvent(t, "solana", CursorResetReason)
	_, _, finalized := srv.Slots()
	eventually(t, 10*time.Second, "the cursor on mainnet", func() bool {
		st := cursor(t, payoutv1.NetworkSolana).Status
		return st.Synced && st.GenesisHash == chaintest.SolanaMainnetGenesis && st.Block == int64(finalized)
	})
}
