package evm

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// anvil 1.7.1 answers eth_getBlockByNumber("finalized") with the block 64 below the head (two
// epochs of 32 slots, as on Ethereum), and block 0 while the chain is shorter (measured).
const anvilFinality = 64

// TestFinalizedDepth: with depth finalized a deposit is reported, and a v2 transaction is at
// depth, exactly when its block is at or below the node's finalized block; the cursor carries
// the time of its block.
func TestFinalizedDepth(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	n := chaintest.Network(c, 1)
	n.Confirmations = config.Finalized
	ch, err := NewChain(payoutv1.NetworkBase, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Client.Close)
	book := &chaintest.Book{}
	book.Add(ch.Network, depositAddr.Hex(), transferRef)
	s := &Scanner{Chain: ch, Book: book}
	chaintest.Mine(t, c, anvilFinality+1) // past anvil's genesis answer
	cur := initCursor(t, s)

	tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 25_000_000)
	chaintest.Mine(t, c, anvilFinality-1) // the finalized block is block-1
	scan := func() (Tip, []Step) {
		t.Helper()
		tip, err := ch.Tip(ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps, next := scanToHead(t, s, cur)
		cur = next
		return tip, steps
	}
	tip, steps := scan()
	if tip.Target != block-1 || tip.Head != block+anvilFinality-1 || deposits(steps) != 0 || cur.Block != block-1 {
		t.Fatalf("one block before finality: tip %+v, cursor %d, %d deposits", tip, cur.Block, deposits(steps))
	}
	obs, err := ch.LookupTx(ctx, payoutv1.NetworkBase, tx.Hash().Hex())
	if err != nil || obs.AtDepth() || obs.Confirmations != anvilFinality || obs.Required != anvilFinality+1 {
		t.Fatalf("lookup one block before finality: %+v (%v)", obs, err)
	}

	chaintest.Mine(t, c, 1)
	tip, steps = scan()
	if tip.Target != block || deposits(steps) != 1 || cur.Block != block {
		t.Fatalf("at finality: tip %+v, cursor %d, %d deposits", tip, cur.Block, deposits(steps))
	}
	obs, err = ch.LookupTx(ctx, payoutv1.NetworkBase, tx.Hash().Hex())
	if err != nil || !obs.AtDepth() || obs.Confirmations != anvilFinality+1 {
		t.Fatalf("lookup at finality: %+v (%v)", obs, err)
	}
	hdr, err := c.Client.HeaderByNumber(ctx, big.NewInt(block))
	if err != nil || cur.Time.Unix() != int64(hdr.Time) {
		t.Fatalf("cursor time %s, block %d's %d (%v)", cur.Time, block, hdr.Time, err)
	}
	if _, err := s.Step(ctx, cur, tip.Head); err == nil {
		t.Fatal("Step with depth finalized guessed a target from the head")
	}
}

// TestNoFinalizedBlockCreditsNothing: a node that answers no finalized block (null: still
// syncing, or a Polygon node without a milestone yet) or does not know the tag gives no tip and
// no transaction at depth, with an error that says why, rather than a count to fall back on.
func TestNoFinalizedBlockCreditsNothing(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	tx, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 1_000_000)
	chaintest.Mine(t, c, 2*anvilFinality)
	for _, unsupported := range []bool{false, true} {
		proxy := chaintest.NewRPCProxy(t, c.RPCURL)
		proxy.NoFinalized(unsupported)
		n := chaintest.Network(c, 1)
		n.RPC, n.Confirmations = []string{proxy.URL}, config.Finalized
		ch, err := NewChain(payoutv1.NetworkBase, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ch.Client.Close)
		want := "answered null): deposits on base wait for one"
		if unsupported {
			want = "the node does not serve the finalized tag: set base's confirmations to a number"
		}
		if tip, err := ch.Tip(ctx); err == nil || !strings.Contains(err.Error(), want) || errors.Is(err, ErrNoFinalized) == unsupported {
			t.Fatalf("tip %+v, error %v: want one saying %q", tip, err, want)
		}
		if obs, err := ch.LookupTx(ctx, payoutv1.NetworkBase, tx.Hash().Hex()); err == nil || obs.AtDepth() || !strings.Contains(err.Error(), want) {
			t.Fatalf("lookup %+v, error %v", obs, err)
		}
	}
}
