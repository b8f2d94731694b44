package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/rpcfailover"
)

// TransferTopic is topic 0 of the ERC-20 event Transfer(address indexed from, address indexed
// to, uint256 value).
var TransferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// ErrChainMoved means the chain changed under a read (a reorg between two calls); the read is
// repeated, nothing is recorded from it.
var ErrChainMoved = errors.New("the chain reorganised during the read")

// Chain is one network read over Ethereum's JSON-RPC (an EVM network, or Tron through its
// Ethereum-compatible JSON-RPC): its client, tokens, depth and spelling.
type Chain struct {
	Network payoutv1.Network
	Config  config.Network
	Client  *Client
	// tokens by contract; contracts lists them for log queries.
	tokens    map[common.Address]payoutv1.Token
	contracts []common.Address
	spell     Spelling
	// tokensChecked: CheckTokens has passed.
	tokensChecked atomic.Bool
	// CrossChecked, when set, hears the outcome of every cross-check (crosscheck.go): the
	// watcher's metrics.
	CrossChecked func(CrossCheck)
}

// Spelling is how a chain writes addresses and hashes outside its JSON-RPC, where the service
// stores and compares them (observations, the address book, Deposit objects). Inside the
// JSON-RPC every chain read here uses 20-byte 0x addresses and 32-byte 0x hashes.
type Spelling struct {
	// Address spells an account or contract address.
	Address func(common.Address) string
	// Hash spells a transaction or block hash.
	Hash func(common.Hash) string
	// ParseAddress reads a configured token contract.
	ParseAddress func(string) (common.Address, error)
	// ParseTxHash reads a transaction hash given to LookupTx.
	ParseTxHash func(string) (common.Hash, error)
}

// EVMSpelling is lower-case 0x hex for addresses and hashes.
var EVMSpelling = Spelling{
	Address: Hex,
	Hash:    func(h common.Hash) string { return strings.ToLower(h.Hex()) },
	ParseAddress: func(s string) (common.Address, error) {
		if !common.IsHexAddress(s) {
			return common.Address{}, fmt.Errorf("%q is not an EVM address", s)
		}
		return common.HexToAddress(s), nil
	},
	ParseTxHash: func(s string) (common.Hash, error) {
		if !chain.IsEVMTxHash(s) {
			return common.Hash{}, fmt.Errorf("%q is not an EVM transaction hash", s)
		}
		return common.HexToHash(s), nil
	},
}

// NewChain prepares an EVM network from its configuration (with defaults applied).
func NewChain(network payoutv1.Network, n config.Network) (*Chain, error) {
	n = n.WithDefaultsOf(network)
	if n.Kind != config.KindEVM {
		return nil, fmt.Errorf("%s is a %s network, not evm", network, n.Kind)
	}
	return NewChainSpelled(network, n, EVMSpelling)
}

// NewChainSpelled prepares a network that speaks Ethereum's JSON-RPC but spells addresses and
// hashes its own way (Tron: package tron).
func NewChainSpelled(network payoutv1.Network, n config.Network, spell Spelling) (*Chain, error) {
	n = n.WithDefaultsOf(network)
	if n.Kind == config.KindSolana {
		return nil, fmt.Errorf("%s is a solana network: it does not speak Ethereum's JSON-RPC", network)
	}
	c, err := NewClient(n.ChainID, n.RPC)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	c.SetStallAfter(n.StallAfter.Duration)
	ch := &Chain{Network: network, Config: n, Client: c, tokens: map[common.Address]payoutv1.Token{}, spell: spell}
	for _, tok := range sortedTokens(n.Tokens) {
		addr, err := spell.ParseAddress(n.Tokens[tok].Contract)
		if err != nil {
			return nil, fmt.Errorf("%s: token %s: %w", network, tok, err)
		}
		ch.tokens[addr] = tok
		ch.contracts = append(ch.contracts, addr)
	}
	return ch, nil
}

// Spelling is how the chain writes addresses and hashes in what it reports.
func (c *Chain) Spelling() Spelling { return c.spell }

func sortedTokens(m map[payoutv1.Token]*config.Token) []payoutv1.Token {
	out := make([]payoutv1.Token, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Confirmations is the number of confirmations of block at head: the including block counts
// as one, so the head block has one. A block is at depth when this reaches the network's
// confirmations setting, i.e. when block <= head - depth + 1.
func Confirmations(block, head int64) int64 {
	if block > head {
		return 0
	}
	return head - block + 1
}

// Header is the part of a block header the watcher uses. The hash is the node's, not
// recomputed: chains with extra header fields (Avalanche, Arbitrum) hash them their own way.
type Header struct {
	Number     hexutil.Uint64 `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Time       hexutil.Uint64 `json:"timestamp"`
	BaseFee    *hexutil.Big   `json:"baseFeePerGas"`
}

// Log is an event log as eth_getLogs and receipts return it.
type Log struct {
	Address     common.Address `json:"address"`
	Topics      []common.Hash  `json:"topics"`
	Data        hexutil.Bytes  `json:"data"`
	BlockNumber hexutil.Uint64 `json:"blockNumber"`
	BlockHash   common.Hash    `json:"blockHash"`
	TxHash      common.Hash    `json:"transactionHash"`
	LogIndex    hexutil.Uint64 `json:"logIndex"`
	Removed     bool           `json:"removed"`
}

// transfer decodes an ERC-20 Transfer event; ok is false for any other log.
func (l *Log) transfer() (from, to common.Address, amount *big.Int, ok bool) {
	if len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32 {
		return from, to, nil, false
	}
	from = common.BytesToAddress(l.Topics[1][12:])
	to = common.BytesToAddress(l.Topics[2][12:])
	return from, to, new(big.Int).SetBytes(l.Data), true
}

// Hex is the canonical spelling of an EVM address in observations: lower-case 0x hex.
func Hex(a common.Address) string { return strings.ToLower(a.Hex()) }

// HeadNumber is eth_blockNumber.
func (c *Chain) HeadNumber(ctx context.Context) (int64, error) {
	var n hexutil.Uint64
	if err := c.Client.Call(ctx, &n, "eth_blockNumber"); err != nil {
		return 0, fmt.Errorf("eth_blockNumber: %w", err)
	}
	return int64(n), nil
}

// Tip is where a network stands for the watcher: its head, and the newest block at depth.
type Tip struct {
	Head, Target int64
}

// ErrNoFinalized means the node answered no finalized block (eth_getBlockByNumber("finalized")
// is null: a node still syncing, a Polygon node without a milestone yet, a rollup node not
// following its L1, or a chain without finality such as a dev chain). Nothing is credited
// until it answers one.
var ErrNoFinalized = errors.New("the node reports no finalized block")

// Tip reads the head and the newest block at depth in one request, as the watcher's head read
// (Client.Head: a stalled or lagging endpoint is failed over): eth_blockNumber, and with depth
// finalized eth_getBlockByNumber("finalized") in the same batch, so both come from one node.
// With a count the target is head - depth + 1; with finalized it is the finalized block (never
// above the head).
func (c *Chain) Tip(ctx context.Context) (Tip, error) {
	var head hexutil.Uint64
	calls := []rpc.BatchElem{{Method: "eth_blockNumber", Result: &head}}
	var final *Header
	if c.Config.Confirmations.IsFinalized() {
		calls = append(calls, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{"finalized", false}, Result: &final})
	}
	h, err := c.Client.Head(ctx, calls, &head)
	if err != nil {
		return Tip{}, err
	}
	if !c.Config.Confirmations.IsFinalized() {
		return Tip{Head: h, Target: h - c.Config.Confirmations.Blocks() + 1}, nil
	}
	f, err := c.finalized(calls[1].Error, final)
	if err != nil {
		return Tip{}, err
	}
	return Tip{Head: h, Target: min(f, h)}, nil
}

// finalized is the number of the block eth_getBlockByNumber("finalized") answered, given the
// call's error and result.
func (c *Chain) finalized(callErr error, h *Header) (int64, error) {
	if callErr != nil {
		return 0, fmt.Errorf(`eth_getBlockByNumber("finalized"): %w (the node does not serve the finalized tag: set %s's confirmations to a number)`, callErr, c.Network)
	}
	if h == nil {
		return 0, fmt.Errorf(`%w (eth_getBlockByNumber("finalized") answered null): deposits on %s wait for one`, ErrNoFinalized, c.Network)
	}
	return int64(h.Number), nil
}

// headers fetches the canonical headers of numbers in one batch; a block the node does not
// have yet is an error.
func (c *Chain) headers(ctx context.Context, numbers ...int64) (map[int64]*Header, error) {
	out := make(map[int64]*Header, len(numbers))
	res := make([]*Header, len(numbers))
	calls := make([]rpc.BatchElem, 0, len(numbers))
	idx := make([]int, 0, len(numbers))
	seen := make(map[int64]bool, len(numbers))
	for i, n := range numbers {
		if seen[n] {
			continue
		}
		seen[n] = true
		calls = append(calls, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(n), false}, Result: &res[i]})
		idx = append(idx, i)
	}
	if err := c.Client.Batch(ctx, calls); err != nil {
		return nil, fmt.Errorf("eth_getBlockByNumber: %w", err)
	}
	for k, call := range calls {
		n := numbers[idx[k]]
		if call.Error != nil {
			return nil, fmt.Errorf("eth_getBlockByNumber(%d): %w", n, call.Error)
		}
		h := res[idx[k]]
		if h == nil {
			return nil, fmt.Errorf("the node has no block %d yet", n)
		}
		if int64(h.Number) != n {
			return nil, fmt.Errorf("eth_getBlockByNumber(%d) answered block %d", n, h.Number)
		}
		out[n] = h
	}
	return out, nil
}

// Identity is the chain id the client verified and the genesis block's hash: a cursor taken on
// another chain (a dev chain restarted from scratch) is not resumed.
func (c *Chain) Identity(ctx context.Context) (chainID int64, genesis common.Hash, err error) {
	hs, err := c.headers(ctx, 0)
	if err != nil {
		return 0, common.Hash{}, err
	}
	return c.Config.ChainID, hs[0].Hash, nil
}

// LookupTx reports what the chain says about a transaction (v2 verification): found or not,
// reverted, its block, confirmations now and required, and every Transfer log of a configured
// token contract in it. It only reports facts; the transfer controller judges them. Nothing is
// reported before the token contracts passed CheckTokens; with more than one endpoint, a
// transaction at depth is reported only once another endpoint answered the same receipt
// (crosscheck.go), else the error is ErrDisagreement.
func (c *Chain) LookupTx(ctx context.Context, network payoutv1.Network, txHash string) (*chain.TxObservation, error) {
	if network != c.Network {
		return nil, fmt.Errorf("%s lookup asked of the %s client", network, c.Network)
	}
	hash, err := c.spell.ParseTxHash(txHash)
	if err != nil {
		return nil, err
	}
	if err := c.CheckTokens(ctx); err != nil {
		return nil, err
	}
	obs := &chain.TxObservation{Network: c.Network, TxHash: c.spell.Hash(hash), Required: c.Config.Confirmations.Blocks()}
	r, head, err := c.receipt(ctx, hash)
	if err != nil || r == nil {
		return obs, err
	}
	if c.Config.Confirmations.IsFinalized() {
		// the confirmations the finalized block has now: the transaction is at depth once its
		// block is at or below it
		obs.Required = Confirmations(r.finalized, head)
	}
	obs.Found = true
	obs.Reverted = r.Status == 0
	obs.BlockNumber = int64(r.BlockNumber)
	obs.BlockHash = c.spell.Hash(r.BlockHash)
	obs.BlockTime = time.Unix(int64(r.header.Time), 0).UTC()
	obs.Confirmations = Confirmations(obs.BlockNumber, head)
	for i := range r.Logs {
		l := &r.Logs[i]
		tok, watched := c.tokens[l.Address]
		from, to, amount, ok := l.transfer()
		if !watched || !ok || l.Removed {
			continue
		}
		obs.Transfers = append(obs.Transfers, chain.TokenTransfer{
			Token: tok, Contract: c.spell.Address(l.Address), From: c.spell.Address(from), To: c.spell.Address(to), Amount: amount, LogIndex: int64(l.LogIndex),
		})
	}
	if obs.Confirmations >= obs.Required && c.Client.Endpoints() > 1 {
		// at depth it decides money (a payout, a failure, a refund confirmed)
		if err := c.crossCheckReceipt(ctx, r.endpoint, r); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// receiptJSON is the part of a receipt used here.
type receiptJSON struct {
	Status      hexutil.Uint64 `json:"status"`
	BlockNumber hexutil.Uint64 `json:"blockNumber"`
	BlockHash   common.Hash    `json:"blockHash"`
	TxHash      common.Hash    `json:"transactionHash"`
	Logs        []Log          `json:"logs"`

	header    *Header
	finalized int64                // the node's finalized block, with depth finalized
	endpoint  rpcfailover.Endpoint // the endpoint that answered it
}

// receipt fetches a receipt and checks it against the canonical header of its block, with the
// head (and with depth finalized the finalized block), in two requests. nil when the node knows
// no receipt. A receipt of another transaction than hash (or holding another one's logs) is the
// endpoint's failure: the next endpoint is asked.
func (c *Chain) receipt(ctx context.Context, hash common.Hash) (*receiptJSON, int64, error) {
	var r *receiptJSON
	ep, err := c.Client.CallAt(ctx, func() error { return r.answers(hash) }, &r, "eth_getTransactionReceipt", hash)
	if err != nil {
		return nil, 0, fmt.Errorf("eth_getTransactionReceipt: %w", err)
	}
	if r == nil {
		return nil, 0, nil
	}
	r.endpoint = ep
	var head hexutil.Uint64
	var h, final *Header
	calls := []rpc.BatchElem{
		{Method: "eth_blockNumber", Result: &head},
		{Method: "eth_getBlockByNumber", Args: []any{r.BlockNumber, false}, Result: &h},
	}
	if c.Config.Confirmations.IsFinalized() {
		calls = append(calls, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{"finalized", false}, Result: &final})
	}
	if err := c.Client.Batch(ctx, calls); err != nil {
		return nil, 0, err
	}
	for _, call := range calls[:2] {
		if call.Error != nil {
			return nil, 0, fmt.Errorf("%s: %w", call.Method, call.Error)
		}
	}
	if c.Config.Confirmations.IsFinalized() {
		f, err := c.finalized(calls[2].Error, final)
		if err != nil {
			return nil, 0, err
		}
		r.finalized = min(f, int64(head))
	}
	if h == nil || h.Hash != r.BlockHash {
		// the receipt's block is no longer canonical: the transaction is being moved by a reorg
		return nil, 0, fmt.Errorf("receipt of %s: %w", hash.Hex(), ErrChainMoved)
	}
	r.header = h
	return r, int64(head), nil
}

// answers checks that r (nil: no receipt) is the receipt of hash: a node that answers another
// transaction's receipt would have it judged as the one asked for.
func (r *receiptJSON) answers(hash common.Hash) error {
	if r == nil {
		return nil
	}
	if r.TxHash != hash {
		return fmt.Errorf("eth_getTransactionReceipt(%s) answered the receipt of %s", hash.Hex(), r.TxHash.Hex())
	}
	for _, l := range r.Logs {
		if l.TxHash != hash || l.BlockHash != r.BlockHash {
			return fmt.Errorf("eth_getTransactionReceipt(%s) answered a log of %s in block %s", hash.Hex(), l.TxHash.Hex(), l.BlockHash.Hex())
		}
	}
	return nil
}

// blockAtFanout is how many headers BlockAt reads per request.
const blockAtFanout = 16

// BlockAt is the newest block at or before head whose timestamp is at or before t, or 0 when
// block 0 is later than t (a chain younger than t). Block timestamps never decrease along a
// chain, so it searches the headers, blockAtFanout of them per request: about log17(head) + 1
// requests (7 for 20 million blocks). The watcher restarts a cursor from the block of the
// oldest transfer it watches.
func (c *Chain) BlockAt(ctx context.Context, t time.Time, head int64) (int64, error) {
	lo, hi := int64(0), head
	hs, err := c.headers(ctx, lo, hi)
	if err != nil {
		return 0, err
	}
	if !blockTime(hs[hi]).After(t) {
		return hi, nil
	}
	if blockTime(hs[lo]).After(t) {
		return 0, nil
	}
	// the time of lo is at or before t, that of hi after it
	for hi-lo > 1 {
		step := max((hi-lo)/(blockAtFanout+1), 1)
		var probes []int64
		for n := lo + step; n < hi && len(probes) < blockAtFanout; n += step {
			probes = append(probes, n)
		}
		if hs, err = c.headers(ctx, probes...); err != nil {
			return 0, err
		}
		for _, n := range probes {
			if blockTime(hs[n]).After(t) {
				hi = n
				break
			}
			lo = n
		}
	}
	return lo, nil
}
