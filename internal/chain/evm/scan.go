package evm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/rpcfailover"
)

// MaxRecent is how many scanned blocks a cursor remembers to find the common ancestor after a
// reorg (the ChainCursor status keeps at most 128).
const MaxRecent = 128

// BlockRef is a block by number and hash.
type BlockRef struct {
	Number int64
	Hash   common.Hash
}

// Cursor is how far a network has been scanned: every block up to and including Block has been
// scanned at depth and its deposits recorded. Time is Block's timestamp (zero when not known: a
// cursor resumed from a status written before it was kept). Recent holds the last scanned
// blocks (the ends of the scanned ranges), newest last, ending with Block itself.
type Cursor struct {
	Block  int64
	Hash   common.Hash
	Time   time.Time
	Recent []BlockRef
}

// at is the cursor moved to b, whose header is h, remembering recent (which ends with b).
func at(b BlockRef, h *Header, recent []BlockRef) Cursor {
	return Cursor{Block: b.Number, Hash: b.Hash, Time: blockTime(h), Recent: recent}
}

// blockTime is a header's timestamp.
func blockTime(h *Header) time.Time { return time.Unix(int64(h.Time), 0).UTC() }

// advance is the cursor after scanning through b, whose header is h.
func (c Cursor) advance(b BlockRef, h *Header) Cursor {
	recent := make([]BlockRef, 0, min(len(c.Recent)+1, MaxRecent))
	if drop := len(c.Recent) + 1 - MaxRecent; drop > 0 {
		recent = append(recent, c.Recent[drop:]...)
	} else {
		recent = append(recent, c.Recent...)
	}
	return at(b, h, append(recent, b))
}

// Reorg describes a rewind of the cursor: the stored hash of the cursor's block is no longer
// the canonical one.
type Reorg struct {
	// From is the cursor block that left the canonical chain, To the block rewound to.
	From, To BlockRef
	// Deep is set when no remembered block is still canonical: the cursor went back to just
	// before the oldest remembered one, and blocks before it were not checked.
	Deep bool
}

func (r *Reorg) String() string {
	s := fmt.Sprintf("block %d (%s) left the canonical chain; rescanning from block %d", r.From.Number, short(r.From.Hash), r.To.Number+1)
	if r.Deep {
		s += "; no remembered block is still canonical, so the reorg is deeper than the cursor's memory and blocks before it were not rechecked"
	}
	return s
}

// Step is the outcome of one scan step.
type Step struct {
	// From and To bound the range scanned, inclusive; To < From when nothing was scanned.
	From, To int64
	// Head the step worked against, and Target the newest block at depth then.
	Head, Target int64
	// Deposits to watched addresses in the range, in block and log order. They must be
	// recorded before Cursor is persisted.
	Deposits []chain.DepositObserved
	// Logs is how many token Transfer logs the range held (matched or not).
	Logs int
	// Cursor is where the scan stands after this step.
	Cursor Cursor
	// Reorg is set when the step rewound the cursor instead of scanning.
	Reorg *Reorg
}

// CaughtUp reports whether the cursor has reached the newest block at depth.
func (s *Step) CaughtUp() bool { return s.Reorg == nil && s.Cursor.Block >= s.Target }

// Scanner finds deposits to watched addresses in the blocks of one network that reached depth.
type Scanner struct {
	Chain *Chain
	Book  chain.AddressBook
	// AfterLogs, when set, runs between the log query and the header check (tests use it to
	// reorganise the chain at the worst moment).
	AfterLogs func()

	maxRange int64
	// behindSince is when the endpoint asked for a second opinion was first found short of the
	// range being scanned (zero while it is not).
	behindSince time.Time
}

// InitCursor is the cursor of a fresh start: just before the configured start block, or
// before the head block when none is configured (the head is then the first block scanned).
func (s *Scanner) InitCursor(ctx context.Context, head int64) (Cursor, error) {
	first := head
	if sb := s.Chain.Config.StartBlock; sb != nil {
		first = *sb
	}
	return s.CursorBefore(ctx, first)
}

// CursorBefore is the cursor of a scan whose first block is first: at the block before it (or
// block 0).
func (s *Scanner) CursorBefore(ctx context.Context, first int64) (Cursor, error) {
	n := max(first-1, 0)
	hs, err := s.Chain.headers(ctx, n)
	if err != nil {
		return Cursor{}, err
	}
	ref := BlockRef{Number: n, Hash: hs[n].Hash}
	return at(ref, hs[n], []BlockRef{ref}), nil
}

// Step is StepTo with a count depth: the target is head - depth + 1. With depth finalized the
// target is the node's, read by Chain.Tip: use StepTo.
func (s *Scanner) Step(ctx context.Context, cur Cursor, head int64) (Step, error) {
	d := s.Chain.Config.Confirmations
	if d.IsFinalized() {
		return Step{}, errors.New("Step needs a count depth; with depth finalized use StepTo with Chain.Tip")
	}
	return s.StepTo(ctx, cur, Tip{Head: head, Target: head - d.Blocks() + 1})
}

// StepTo scans the next range of at most the network's max block range after cur, up to the
// tip's target (the newest block at depth). Before scanning it checks that the range continues the cursor's chain (the parent hash
// of its first block is the cursor's hash); when it does not, it rewinds the cursor to the
// newest remembered block that is still canonical and scans nothing. Every log it reports is
// in a block whose hash is the canonical one after the log query, and the range's first and
// last blocks did not change during the query; otherwise it returns ErrChainMoved and nothing.
//
// With more than one endpoint configured, the range is asked once more of another endpoint
// before anything of it counts (crosscheck.go): a disagreement fails the step with
// ErrDisagreement, an endpoint short of the range delays it with ErrSecondBehind.
//
// Requests per step: two header batches (2 headers before the query, 2 plus one per block
// with a matched log after it) and one eth_getLogs for all token contracts; none per watched
// address. With more than one endpoint, one more to another endpoint (a batch of the last
// block's header and the range's logs).
func (s *Scanner) StepTo(ctx context.Context, cur Cursor, tip Tip) (Step, error) {
	cfg := s.Chain.Config
	head, target := tip.Head, tip.Target
	st := Step{From: cur.Block + 1, To: cur.Block, Head: head, Target: target, Cursor: cur}
	if cur.Block >= target {
		return st, nil
	}
	if s.maxRange <= 0 {
		s.maxRange = cfg.MaxBlockRange
	}
	a, b := cur.Block+1, min(target, cur.Block+s.maxRange)
	pre, err := s.Chain.headers(ctx, a, b)
	if err != nil {
		return st, err
	}
	if pre[a].ParentHash != cur.Hash {
		return s.rewind(ctx, cur, head, target)
	}
	logs, answered, err := s.logs(ctx, a, b)
	if err != nil {
		return st, s.rangeFailed(a, b, err)
	}
	if s.AfterLogs != nil {
		s.AfterLogs()
	}

	type match struct {
		log *Log
		dep chain.DepositObserved
	}
	var matched []match
	need := []int64{a, b}
	for i := range logs {
		l := &logs[i]
		tok, watched := s.Chain.tokens[l.Address]
		if !watched || l.Removed {
			continue
		}
		from, to, amount, ok := l.transfer()
		if !ok || amount.Sign() == 0 {
			// a zero-value Transfer (a transferFrom of nothing) moves no funds: anyone can emit
			// one to any address, so it is not a deposit
			continue
		}
		st.Logs++
		spell := s.Chain.spell
		toAddr := spell.Address(to)
		tr, ok := s.Book.TransferFor(s.Chain.Network, toAddr)
		if !ok {
			continue
		}
		n := int64(l.BlockNumber)
		if n < a || n > b {
			return st, fmt.Errorf("eth_getLogs(%d..%d) answered a log of block %d", a, b, n)
		}
		matched = append(matched, match{log: l, dep: chain.DepositObserved{
			Network: s.Chain.Network, Token: tok, Contract: spell.Address(l.Address), To: toAddr, From: spell.Address(from), Amount: amount,
			TxHash: spell.Hash(l.TxHash), LogIndex: int64(l.LogIndex), BlockNumber: n,
			BlockHash: spell.Hash(l.BlockHash), Confirmations: Confirmations(n, head), Transfer: tr,
		}})
		need = append(need, n)
	}
	post, err := s.Chain.headers(ctx, need...)
	if err != nil {
		return st, err
	}
	if post[a].Hash != pre[a].Hash || post[b].Hash != pre[b].Hash {
		return st, fmt.Errorf("blocks %d..%d: %w", a, b, ErrChainMoved)
	}
	if s.Chain.Client.Endpoints() > 1 {
		if err := s.crossCheck(ctx, answered, a, b, post[b].Hash, logs); err != nil {
			return st, err
		}
	}
	for _, m := range matched {
		h := post[m.dep.BlockNumber]
		if h.Hash != m.log.BlockHash {
			// the log's block left the canonical chain between the query and now
			return st, fmt.Errorf("log %d of %s in block %d: %w", m.log.LogIndex, m.log.TxHash.Hex(), m.dep.BlockNumber, ErrChainMoved)
		}
		d := m.dep
		d.BlockTime = blockTime(h)
		st.Deposits = append(st.Deposits, d)
	}
	sort.SliceStable(st.Deposits, func(i, j int) bool {
		if st.Deposits[i].BlockNumber != st.Deposits[j].BlockNumber {
			return st.Deposits[i].BlockNumber < st.Deposits[j].BlockNumber
		}
		return st.Deposits[i].LogIndex < st.Deposits[j].LogIndex
	})
	st.From, st.To = a, b
	st.Cursor = cur.advance(BlockRef{Number: b, Hash: post[b].Hash}, post[b])
	if s.maxRange < cfg.MaxBlockRange {
		s.maxRange = min(cfg.MaxBlockRange, s.maxRange*2)
	}
	return st, nil
}

// logs queries the Transfer logs of every token contract in a..b, and says which endpoint
// answered.
func (s *Scanner) logs(ctx context.Context, a, b int64) ([]Log, rpcfailover.Endpoint, error) {
	var logs []Log
	ep, err := s.Chain.Client.CallAt(ctx, nil, &logs, "eth_getLogs", s.Chain.logFilter(a, b))
	if err != nil {
		return nil, ep, fmt.Errorf("eth_getLogs(%d..%d): %w", a, b, err)
	}
	return logs, ep, nil
}

// logFilter is the eth_getLogs filter of the Transfer logs of every token contract in a..b.
func (c *Chain) logFilter(a, b int64) map[string]any {
	return map[string]any{
		"fromBlock": hexutil.Uint64(a),
		"toBlock":   hexutil.Uint64(b),
		"address":   c.contracts,
		"topics":    []any{TransferTopic},
	}
}

// rangeFailed is the error of a failed log query of a..b: a node's answer (a provider's range or
// result limit) halves the range of the next steps.
func (s *Scanner) rangeFailed(a, b int64, err error) error {
	if IsNodeError(err) && b > a {
		s.maxRange = max(1, (b-a+1)/2)
	}
	return err
}

// crossCheck asks another endpoint than first for the range a..b (crosscheck.go). An endpoint
// that has not reached block b yet delays the range (ErrSecondBehind: asked again at the next
// poll) for up to the network's stall window; then the step fails with an error that is not
// ErrSecondBehind, so that a second endpoint that stays behind shows in the cursor instead of
// holding the deposits back unseen.
func (s *Scanner) crossCheck(ctx context.Context, first rpcfailover.Endpoint, a, b int64, last common.Hash, logs []Log) error {
	err := s.Chain.crossCheckRange(ctx, first, a, b, last, logs)
	if !errors.Is(err, ErrSecondBehind) {
		s.behindSince = time.Time{}
		if err != nil {
			return s.rangeFailed(a, b, err)
		}
		return nil
	}
	now := time.Now()
	if s.behindSince.IsZero() {
		s.behindSince = now
	}
	behind := now.Sub(s.behindSince)
	if behind < s.Chain.Config.StallAfter.Duration {
		return err
	}
	return fmt.Errorf("cross-checking blocks %d..%d for %s: %v: nothing is credited from them until it has them", a, b, behind.Round(time.Second), err)
}

// rewind finds the newest remembered block that is still canonical and moves the cursor there.
func (s *Scanner) rewind(ctx context.Context, cur Cursor, head, target int64) (Step, error) {
	st := Step{From: cur.Block + 1, To: cur.Block, Head: head, Target: target}
	recent := cur.Recent
	if len(recent) == 0 || recent[len(recent)-1].Number != cur.Block {
		recent = append(append([]BlockRef(nil), recent...), BlockRef{Number: cur.Block, Hash: cur.Hash})
	}
	numbers := make([]int64, len(recent))
	for i, r := range recent {
		numbers[i] = r.Number
	}
	canon, err := s.Chain.headers(ctx, numbers...)
	if err != nil {
		return st, err
	}
	from := BlockRef{Number: cur.Block, Hash: cur.Hash}
	for i := len(recent) - 1; i >= 0; i-- {
		if h := canon[recent[i].Number]; h.Hash == recent[i].Hash {
			st.Cursor = at(recent[i], h, append([]BlockRef(nil), recent[:i+1]...))
			st.Reorg = &Reorg{From: from, To: recent[i]}
			return st, nil
		}
	}
	n := max(recent[0].Number-1, 0)
	hs, err := s.Chain.headers(ctx, n)
	if err != nil {
		return st, err
	}
	to := BlockRef{Number: n, Hash: hs[n].Hash}
	st.Cursor = at(to, hs[n], []BlockRef{to})
	st.Reorg = &Reorg{From: from, To: to, Deep: true}
	return st, nil
}

func short(h common.Hash) string { return h.Hex()[:10] }
