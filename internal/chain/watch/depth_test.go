package watch

import (
	"math/big"
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// anvil 1.7.1 answers eth_getBlockByNumber("finalized") with the block 64 below the head.
const anvilFinality = 64

// TestStalledEndpointIsFailedOverAndScanningGoesOn: of two endpoints of one chain, the first
// stops advancing (it keeps answering, with a frozen head); the watcher reads the second's head
// once the first has stayed still for the stall window, fails over, and records a deposit made
// after the stall. While the first endpoint was healthy the second never served a head read,
// only the cross-check of each scanned range (one request per range, evm.Scanner.StepTo).
func TestStalledEndpointIsFailedOverAndScanningGoesOn(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base) // a block every second
	c := set.Chains[devchain.Base]
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	id := newID()
	addr := transfer(t, ns, id, payoutv1.NetworkBase)
	first, second := chaintest.NewRPCProxy(t, c.RPCURL), chaintest.NewRPCProxy(t, c.RPCURL)
	cfg := configOf(c, 2)
	n := cfg.Networks[payoutv1.NetworkBase]
	n.RPC = []string{first.URL, second.URL}
	n.StallAfter.Duration = 3 * time.Second
	startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-1)
	start := chaintest.Head(t, c)
	waitScanned(t, payoutv1.NetworkBase, start+3) // a few blocks, tens of polls
	total, heads := second.Requests("eth_blockNumber")
	_, ranges := first.Requests("eth_getLogs")
	if heads != 0 || total > ranges+1 { // +1: its verification (eth_chainId)
		t.Fatalf("the second endpoint served %d requests (%d head reads) for %d ranges while the first was healthy", total, heads, ranges)
	}

	stalled := chaintest.Head(t, c)
	first.Stall(uint64(stalled))
	r, err := c.Transfer(ctx, set.FundedKey, devchain.USDC, addr, big.NewInt(7_000_000))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the deposit made after the first endpoint stalled", func() bool { return len(depositsOf(t, ns)) == 1 })
	if d := depositsOf(t, ns)[0].Spec; d.BlockNumber != r.BlockNumber.Int64() || d.BlockNumber <= stalled || d.Transfer != id {
		t.Fatalf("deposit %+v, mined in block %d after the stall at %d", d, r.BlockNumber, stalled)
	}
	// the cursor's status is written after the deposit it scanned: read it until it shows that
	// pass
	eventually(t, 10*time.Second, "the cursor on the second endpoint past the stalled head", func() bool {
		cc := cursor(t, payoutv1.NetworkBase)
		return cc.Status.Endpoint == config.Redact(second.URL) && cc.Status.Head > stalled
	})
	// the stalled endpoint is looked at again only after its backoff, not on every poll
	before, _ := first.Requests("eth_blockNumber")
	time.Sleep(2 * time.Second) // 20 polls
	if after, _ := first.Requests("eth_blockNumber"); after-before > 3 {
		t.Fatalf("the stalled endpoint was read %d times in 2 s", after-before)
	}
}

// TestFinalizedDepthAndTheCursorsBlockTime: with depth finalized a deposit is credited exactly
// when its block becomes the node's finalized block, and the cursor records the time of its
// block, which ChainCursor.ScannedPast reads.
func TestFinalizedDepthAndTheCursorsBlockTime(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	chaintest.Mine(t, c, anvilFinality+1)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	addr := transfer(t, ns, newID(), payoutv1.NetworkBase)
	cfg := configOf(c, 1)
	cfg.Networks[payoutv1.NetworkBase].Confirmations = config.Finalized
	startOperator(t, cfg)
	eventually(t, 20*time.Second, "the watcher in sync", func() bool { return cursor(t, payoutv1.NetworkBase).Status.Synced })

	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 25_000_000)
	chaintest.Mine(t, c, anvilFinality-1) // the finalized block is block-1
	waitScanned(t, payoutv1.NetworkBase, block-1)
	time.Sleep(500 * time.Millisecond) // a few more polls
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a deposit above the finalized block was credited: %+v", got[0].Spec)
	}
	chaintest.Mine(t, c, 1)
	eventually(t, 10*time.Second, "the deposit", func() bool { return len(depositsOf(t, ns)) == 1 })
	if d := depositsOf(t, ns)[0].Spec; d.BlockNumber != block || d.Confirmations != anvilFinality+1 {
		t.Fatalf("deposit %+v", d)
	}

	waitScanned(t, payoutv1.NetworkBase, block)
	cc := cursor(t, payoutv1.NetworkBase)
	hdr, err := c.Client.HeaderByNumber(ctx, big.NewInt(cc.Status.Block))
	if err != nil || cc.Status.BlockTime == nil || cc.Status.BlockTime.Unix() != int64(hdr.Time) {
		t.Fatalf("cursor at block %d with block time %v, the block's is %d (%v)", cc.Status.Block, cc.Status.BlockTime, hdr.Time, err)
	}
	at := time.Unix(int64(hdr.Time), 0)
	if !cc.ScannedPast(at.Add(-time.Second)) || cc.ScannedPast(at) {
		t.Fatalf("ScannedPast around the cursor's block time %s is wrong", at)
	}
	if cc.Status.Head < block+anvilFinality || cc.Status.Head > chaintest.Head(t, c) {
		t.Fatalf("status.head %d: the network's head is %d", cc.Status.Head, chaintest.Head(t, c))
	}
}
