package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// TestDeletedCursorRestartsFromTheOldestTransfer: the ChainCursor is deleted by hand while no
// watcher runs and a deposit arrives meanwhile. The new watcher restarts from the block of the
// oldest transfer it watches (before, from the head: the deposit was never seen); the blocks it
// scans again are the cursor's status.gap and payout_chain_gap_blocks, which stay while the node
// cannot serve them, with a Gap event, and go once they are scanned.
func TestDeletedCursorRestartsFromTheOldestTransfer(t *testing.T) {
	set, c, ns, id, addr := baseWithTransfer(t)
	node := chaintest.NewRPCProxy(t, c.RPCURL)
	cfg := configOf(c, 2)
	cfg.Networks[payoutv1.NetworkBase].RPC = []string{node.URL}
	op := startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-1)
	op.stop()

	tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 25_000_000)
	chaintest.Mine(t, c, 3)
	head := chaintest.Head(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	node.FailLogs(true)
	startOperator(t, cfg)
	eventually(t, 20*time.Second, "the gap over the deposit's block", func() bool {
		from, to, ok := gapOf(t, payoutv1.NetworkBase)
		return ok && from <= block && to == head-1 && gapMetric(t, payoutv1.NetworkBase) > 0 // depth 2
	})
	waitEvent(t, "base", CursorGapReason)
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("deposits recorded while the node served no logs: %+v", got)
	}

	node.FailLogs(false)
	eventually(t, 30*time.Second, "the deposit made while the cursor was gone", func() bool {
		got := depositsOf(t, ns)
		return len(got) == 1 && got[0].Spec.Transfer == id && strings.EqualFold(got[0].Spec.TxHash, tx.Hash().Hex())
	})
	waitGapScanned(t, payoutv1.NetworkBase)
}

// TestDroppedLogsAreNotBelievedWithTwoEndpoints: of two endpoints, the first answers the logs of
// the block holding a deposit without it. The watcher cross-checks the range on the second,
// credits nothing from it and does not move past it (before, the empty answer moved the cursor
// past the deposit for good), reports the disagreement (cursor message, EndpointsDisagree event,
// payout_chain_crosschecks_total{result="disagreed"}), and records the deposit once both agree.
func TestDroppedLogsAreNotBelievedWithTwoEndpoints(t *testing.T) {
	set, c, ns, _, addr := baseWithTransfer(t)
	first, second := chaintest.NewRPCProxy(t, c.RPCURL), chaintest.NewRPCProxy(t, c.RPCURL)
	cfg := configOf(c, 2)
	cfg.Networks[payoutv1.NetworkBase].RPC = []string{first.URL, second.URL}
	startOperator(t, cfg)
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c)-1)
	disagreed := crossChecks(t, payoutv1.NetworkBase, "disagreed")

	next := uint64(chaintest.Head(t, c) + 1)
	first.DropLogs(next, next)
	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, addr, 25_000_000)
	chaintest.Mine(t, c, 1) // at depth 2
	eventually(t, 20*time.Second, "the disagreement in the cursor", func() bool {
		st := cursor(t, payoutv1.NetworkBase).Status
		return !st.Synced && strings.Contains(st.Message, "the RPC endpoints disagree") && st.Block < block
	})
	waitEvent(t, "base", CursorDisagreementReason)
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("deposits recorded from a range the endpoints disagree on: %+v", got)
	}
	if d := crossChecks(t, payoutv1.NetworkBase, "disagreed") - disagreed; d < 1 {
		t.Fatalf("disagreements counted: %v", d)
	}

	first.KeepLogs()
	eventually(t, 40*time.Second, "the deposit once the endpoints agree", func() bool { return len(depositsOf(t, ns)) == 1 })
	waitScanned(t, payoutv1.NetworkBase, block)
}

// TestTokenOf18DecimalsCreditsNothing: a contract whose decimals() answers 18 is configured as
// base's USDC. The watcher scans nothing and says why in its cursor; a transfer of 25,000,000 base
// units of it to a deposit address (25 millionths of a millionth of a token) is not credited
// (before, it was recorded as 25 USD).
func TestTokenOf18DecimalsCreditsNothing(t *testing.T) {
	set, c, ns, _, addr := baseWithTransfer(t)
	wide := chaintest.WideToken(t, c)
	cfg := configOf(c, 1)
	cfg.Networks[payoutv1.NetworkBase].Tokens[payoutv1.TokenUSDC].Contract = wide.Hex()
	startOperator(t, cfg)
	refused := func() bool {
		return strings.Contains(cursor(t, payoutv1.NetworkBase).Status.Message, "token usdc ("+strings.ToLower(wide.Hex())+"): decimals() answers 18")
	}
	eventually(t, 20*time.Second, "the watcher to refuse the token, or to scan", func() bool {
		return refused() || cursor(t, payoutv1.NetworkBase).Status.Synced
	})
	chaintest.SendWide(t, c, set.FundedKey, addr, 25_000_000)
	chaintest.Mine(t, c, 1)
	eventually(t, 20*time.Second, "the refusal in the cursor, or a deposit", func() bool {
		return refused() || len(depositsOf(t, ns)) > 0
	})
	if got := depositsOf(t, ns); len(got) != 0 {
		t.Fatalf("a transfer of an 18-decimal token was credited as %s base units of USDC", got[0].Spec.Amount)
	}
	time.Sleep(time.Second) // ten polls: still nothing
	st := cursor(t, payoutv1.NetworkBase).Status
	if got := depositsOf(t, ns); len(got) != 0 || st.Synced || st.BlockHash != "" {
		t.Fatalf("after a second: %d deposits, cursor %+v", len(got), st)
	}
}

// baseWithTransfer starts a base dev chain mined by hand (ManualMining), deletes base's cursor,
// and creates a v1 transfer in a fresh namespace; it returns the chains, base, the namespace,
// the transfer's id and its deposit address.
func baseWithTransfer(t *testing.T) (*devchain.Set, *devchain.Chain, string, string, common.Address) {
	t.Helper()
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	ns := namespace(t)
	id := newID()
	return set, c, ns, id, transfer(t, ns, id, payoutv1.NetworkBase)
}
