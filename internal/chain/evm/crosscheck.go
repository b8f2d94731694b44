package evm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/stablepay/payout-operator/internal/chain/rpcfailover"
)

// What credits money is not believed of one endpoint alone when a network has two or more: a
// node that drops a range's logs (an empty eth_getLogs answer) would move the cursor past a
// deposit, and one that invents a log or a receipt would credit money nobody sent. So, with
// more than one endpoint configured:
//
//   - every scanned range is asked once more of another endpoint (one request: the hash of the
//     range's last block and the range's token Transfer logs), and the two answers must be the
//     same (the same block at depth, the same logs) before any deposit of the range is recorded
//     or the cursor moves past it;
//   - a v2 transaction (or a refund) found at depth is asked once more of another endpoint (one
//     request: its receipt), which must answer the same block, status and logs.
//
// With one endpoint nothing more is asked. A disagreement credits nothing: the step (or the
// lookup) fails with ErrDisagreement, which names both endpoints and the first difference, and
// is asked again at the next poll; the watcher shows it in its ChainCursor and counts it. Which
// of two endpoints lies cannot be told from their answers: an operator removes the wrong one.
// When no other endpoint can be asked (every other one failing), the answer is believed alone,
// as with a single endpoint, and counted as unchecked.

// CrossCheck is the outcome of asking a second endpoint.
type CrossCheck string

const (
	// CrossAgreed: another endpoint answered the same.
	CrossAgreed CrossCheck = "agreed"
	// CrossDisagreed: another endpoint answered otherwise; nothing was credited.
	CrossDisagreed CrossCheck = "disagreed"
	// CrossUnchecked: more than one endpoint is configured but no other one could be asked (each
	// is failing or backing off): the answer was believed alone.
	CrossUnchecked CrossCheck = "unchecked"
)

// ErrDisagreement means two endpoints answered differently about blocks or a transaction at
// depth: nothing is credited from the answer, which is asked again at the next poll.
var ErrDisagreement = errors.New("the RPC endpoints disagree")

// ErrSecondBehind means the endpoint asked for a second opinion has not reached the scanned
// range yet: the step is taken again at the next poll (as after ErrChainMoved).
var ErrSecondBehind = errors.New("the endpoint asked for a second opinion has not reached the range yet")

func (c *Chain) crossChecked(r CrossCheck) {
	if c.CrossChecked != nil {
		c.CrossChecked(r)
	}
}

// crossCheckRange asks an endpoint other than first, which answered logs for a..b whose block
// b has hash last, for the same: nil when it agrees (or when no other endpoint can be asked).
func (c *Chain) crossCheckRange(ctx context.Context, first rpcfailover.Endpoint, a, b int64, last common.Hash, logs []Log) error {
	var h *Header
	var other []Log
	calls := []rpc.BatchElem{
		{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(b), false}, Result: &h},
		{Method: "eth_getLogs", Args: []any{c.logFilter(a, b)}, Result: &other},
	}
	second, err := c.Client.BatchOther(ctx, first, calls)
	if errors.Is(err, ErrNoEndpoint) {
		c.crossChecked(CrossUnchecked)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cross-checking blocks %d..%d: %w", a, b, err)
	}
	for _, call := range calls {
		if call.Error != nil {
			return fmt.Errorf("cross-checking blocks %d..%d on %s: %s: %w", a, b, second.Display(), call.Method, call.Error)
		}
	}
	if h == nil {
		return fmt.Errorf("%s has no block %d yet: %w", second.Display(), b, ErrSecondBehind)
	}
	if h.Hash != last {
		return c.disagree("at depth, block %d is %s on %s and %s on %s", b, short(last), first.Display(), short(h.Hash), second.Display())
	}
	mine, theirs := c.transferLogs(logs), c.transferLogs(other)
	if i := firstDifference(mine, theirs); i >= 0 {
		return c.disagree("blocks %d..%d hold %d token transfers on %s and %d on %s (the first difference: %s)",
			a, b, len(mine), first.Display(), len(theirs), second.Display(), describeDifference(mine, theirs, i))
	}
	c.crossChecked(CrossAgreed)
	return nil
}

// crossCheckReceipt asks an endpoint other than first, which answered r at depth, for the same
// receipt: nil when it agrees (or when no other endpoint can be asked).
func (c *Chain) crossCheckReceipt(ctx context.Context, first rpcfailover.Endpoint, r *receiptJSON) error {
	var o *receiptJSON
	calls := []rpc.BatchElem{{Method: "eth_getTransactionReceipt", Args: []any{r.TxHash}, Result: &o}}
	second, err := c.Client.BatchOther(ctx, first, calls)
	if errors.Is(err, ErrNoEndpoint) {
		c.crossChecked(CrossUnchecked)
		return nil
	}
	if err == nil {
		err = calls[0].Error
	}
	if err != nil {
		return fmt.Errorf("cross-checking the receipt of %s: %w", r.TxHash.Hex(), err)
	}
	switch {
	case o == nil:
		return c.disagree("%s answers the receipt of %s in block %d at depth, %s knows none", first.Display(), r.TxHash.Hex(), r.BlockNumber, second.Display())
	case o.TxHash != r.TxHash || o.BlockHash != r.BlockHash || o.BlockNumber != r.BlockNumber:
		return c.disagree("the receipt of %s is in block %d (%s) on %s and in block %d (%s) on %s",
			r.TxHash.Hex(), r.BlockNumber, short(r.BlockHash), first.Display(), o.BlockNumber, short(o.BlockHash), second.Display())
	case o.Status != r.Status:
		return c.disagree("the receipt of %s has status %d on %s and %d on %s", r.TxHash.Hex(), r.Status, first.Display(), o.Status, second.Display())
	}
	mine, theirs := c.transferLogs(r.Logs), c.transferLogs(o.Logs)
	if i := firstDifference(mine, theirs); i >= 0 {
		return c.disagree("the receipt of %s holds %d token transfers on %s and %d on %s (the first difference: %s)",
			r.TxHash.Hex(), len(mine), first.Display(), len(theirs), second.Display(), describeDifference(mine, theirs, i))
	}
	c.crossChecked(CrossAgreed)
	return nil
}

func (c *Chain) disagree(format string, args ...any) error {
	c.crossChecked(CrossDisagreed)
	return fmt.Errorf("%w: %s: nothing is credited from it until they agree", ErrDisagreement, fmt.Sprintf(format, args...))
}

// transferLogs is the Transfer logs of the configured tokens among logs, each as one comparable
// line, in block and log order.
func (c *Chain) transferLogs(logs []Log) []string {
	var out []string
	for i := range logs {
		l := &logs[i]
		if _, watched := c.tokens[l.Address]; !watched || l.Removed || len(l.Topics) == 0 || l.Topics[0] != TransferTopic {
			continue
		}
		what := fmt.Sprintf("%x %x", l.Topics[1:], []byte(l.Data))
		if from, to, amount, ok := l.transfer(); ok {
			what = fmt.Sprintf("%s base units from %s to %s", amount, c.spell.Address(from), c.spell.Address(to))
		}
		out = append(out, fmt.Sprintf("log %d of %s in block %d (%s): %s of %s",
			uint64(l.LogIndex), l.TxHash.Hex(), uint64(l.BlockNumber), short(l.BlockHash), what, c.spell.Address(l.Address)))
	}
	slices.SortFunc(out, func(x, y string) int { return strings.Compare(x, y) })
	return out
}

// firstDifference is the index of the first line where a and b differ, -1 when they are equal.
func firstDifference(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func describeDifference(a, b []string, i int) string {
	switch {
	case i >= len(a):
		return b[i] + ", which only the second answered"
	case i >= len(b):
		return a[i] + ", which only the first answered"
	}
	return a[i] + " against " + b[i]
}
