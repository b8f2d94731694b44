package chaintest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// TronMainnetChainID is what eth_chainId answers on Tron mainnet (0x2b6653dc).
const TronMainnetChainID = 0x2b6653dc

// TronUSDT is Tether's TRC-20 contract on Tron mainnet, TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t.
var TronUSDT = common.HexToAddress("0xa614f803b6fd780986a42c78ec9c7f77e6ded13c")

// TronRPCTestServer stands in for a Tron node in tests, because none can be installed here
// (no java-tron in the registries this machine reaches). It answers the part of java-tron's
// Ethereum-compatible JSON-RPC the watcher uses, in the shapes TRON's documentation gives with
// responses captured from the Nile testnet (tronprotocol/documentation-en,
// docs/api/json-rpc/: node/eth_chainId.md, node/eth_blockNumber.md,
// block-and-tx-query/eth_getBlockByNumber.md and eth_getTransactionReceipt.md,
// filter/eth_getLogs.md), including its errors (-32602 "exceed max block range: N") and its
// tags (latest, earliest, finalized = the latest solidified block, 19 below the head here).
// Single requests and batches are served, as java-tron's JsonRpcServlet does. eth_call answers
// decimals() of the TRC-20 contracts it knows (TronUSDT: 6; SetDecimals adds or changes one) and
// eth_getCode their code (TronTokenCode), as vm/eth_call.md and vm/eth_getCode.md show.
//
// The chain is kept in memory: Mine makes blocks (3 s apart, with Tron block ids: the height in
// the first 8 bytes), Transfer queues a TRC-20 Transfer event for the next block, Reorg replaces
// the newest blocks by empty ones with other ids, SetDown makes the node answer HTTP 503.
type TronRPCTestServer struct {
	URL string
	// HTTPURL is the root of the wallet HTTP API it serves too (tronwallet.go).
	HTTPURL string

	rpcServer     // mu guards the fields below
	chainID       uint64
	blocks        []*tronTestBlock
	pending       []tronTestLog
	fork          uint64
	txSeq         uint64
	maxBlockRange int64
	decimals      map[common.Address]uint8 // the TRC-20 contracts it knows
	wallet        tronWallet
}

// TronTokenCode is the runtime code eth_getCode answers for every contract the server knows.
var TronTokenCode = []byte("tron test token code")

type tronTestBlock struct {
	number       uint64
	hash, parent common.Hash
	timestamp    uint64
	logs         []tronTestLog
}

type tronTestLog struct {
	contract, from, to common.Address
	amount             *big.Int
	txID               common.Hash
}

// Solidification is how far below the head java-tron's "finalized" tag is here.
const tronSolidification = 19

// NewTronRPCTestServer starts a server whose chain has its genesis block and head blocks more
// (head >= 0), serving chainID. It stops at the end of the test.
func NewTronRPCTestServer(tb interface {
	Helper()
	Cleanup(func())
}, chainID uint64, head int) *TronRPCTestServer {
	tb.Helper()
	s := &TronRPCTestServer{chainID: chainID, maxBlockRange: 5000, decimals: map[common.Address]uint8{TronUSDT: 6},
		wallet: tronWallet{accounts: map[common.Address]*tronAccount{}, balances: map[common.Address]map[common.Address]*big.Int{}, txs: map[common.Hash]*tronTx{}}}
	s.mine(head + 1)
	s.route = s.walletRoute
	s.HTTPURL = s.start(tb, s.handle)
	s.URL = s.HTTPURL + "/jsonrpc"
	return s
}

// SetMaxBlockRange sets the node's eth_getLogs range limit (java-tron's default is 5000).
func (s *TronRPCTestServer) SetMaxBlockRange(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBlockRange = n
}

// SetDecimals makes contract a TRC-20 contract whose decimals() answers d.
func (s *TronRPCTestServer) SetDecimals(contract common.Address, d uint8) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decimals[contract] = d
}

// Head is the newest block's height.
func (s *TronRPCTestServer) Head() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.blocks) - 1)
}

// BlockHash is the id of block n (which must exist).
func (s *TronRPCTestServer) BlockHash(n int64) common.Hash {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocks[n].hash
}

// Mine makes n blocks; the first holds the transfers queued since the last block.
func (s *TronRPCTestServer) Mine(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mine(n)
}

func (s *TronRPCTestServer) mine(n int) {
	for range n {
		num := uint64(len(s.blocks))
		var parent common.Hash
		if num > 0 {
			parent = s.blocks[num-1].hash
		}
		var seed [24]byte
		binary.BigEndian.PutUint64(seed[:8], num)
		binary.BigEndian.PutUint64(seed[8:16], s.fork)
		sum := sha256.Sum256(append(parent[:], seed[:]...))
		var id common.Hash
		binary.BigEndian.PutUint64(id[:8], num)
		copy(id[8:], sum[8:])
		logs := append(s.pending, s.execute(num)...)
		s.blocks = append(s.blocks, &tronTestBlock{number: num, hash: id, parent: parent, timestamp: 1_700_000_000 + 3*num, logs: logs})
		s.pending = nil
	}
}

// Transfer queues a TRC-20 Transfer(from, to, amount) event of contract for the next mined block
// and returns its transaction id. The wallet API sees to's balance grow at once (and from's
// shrink, when from holds the amount: senders from outside hold nothing here).
func (s *TronRPCTestServer) Transfer(contract, from, to common.Address, amount int64) common.Hash {
	s.mu.Lock()
	defer s.mu.Unlock()
	units := big.NewInt(amount)
	if b := s.wallet.balance(contract, from); b.Cmp(units) >= 0 {
		b.Sub(b, units)
	}
	s.wallet.balance(contract, to).Add(s.wallet.balance(contract, to), units)
	s.txSeq++
	id := crypto.Keccak256Hash([]byte(fmt.Sprintf("tron test tx %d", s.txSeq)))
	s.pending = append(s.pending, tronTestLog{contract: contract, from: from, to: to, amount: big.NewInt(amount), txID: id})
	return id
}

// Reorg replaces the newest depth blocks by as many empty blocks with other ids: their
// transactions leave the chain, as with a fork that did not include them.
func (s *TronRPCTestServer) Reorg(depth int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocks = s.blocks[:len(s.blocks)-depth]
	s.fork++
	s.pending = nil
	s.mine(depth)
}

type tronRPCResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
	Error   *rpcError       `json:"error,omitempty"`
}

// handle answers a single request or a batch, as java-tron's JsonRpcServlet does.
func (s *TronRPCTestServer) handle(body []byte) any {
	if strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
		var reqs []rpcRequest
		if err := json.Unmarshal(body, &reqs); err != nil {
			return tronParseError()
		}
		out := make([]tronRPCResponse, len(reqs))
		for i, req := range reqs {
			out[i] = s.call(req)
		}
		return out
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return tronParseError()
	}
	return s.call(req)
}

func tronParseError() tronRPCResponse {
	return tronRPCResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "Parse json error"}}
}

func (s *TronRPCTestServer) call(req rpcRequest) tronRPCResponse {
	s.calls[req.Method]++
	res := tronRPCResponse{JSONRPC: "2.0", ID: req.ID}
	result, rerr := s.dispatch(req)
	if rerr != nil {
		res.Error = rerr
	} else {
		res.Result = result
	}
	return res
}

func invalidParams(msg string) *rpcError { return &rpcError{Code: -32602, Message: msg} }

func (s *TronRPCTestServer) dispatch(req rpcRequest) (any, *rpcError) {
	head := uint64(len(s.blocks) - 1)
	switch req.Method {
	case "eth_chainId", "net_version":
		return hexutil.Uint64(s.chainID), nil
	case "eth_blockNumber":
		return hexutil.Uint64(head), nil
	case "eth_getBlockByNumber":
		if len(req.Params) < 1 {
			return nil, invalidParams("invalid block number")
		}
		n, err := s.blockNumber(req.Params[0], head)
		if err != nil {
			return nil, err
		}
		if n > head {
			return nil, nil
		}
		return s.blockResult(s.blocks[n]), nil
	case "eth_getLogs":
		var f struct {
			FromBlock json.RawMessage `json:"fromBlock"`
			ToBlock   json.RawMessage `json:"toBlock"`
			Address   json.RawMessage `json:"address"`
			Topics    []any           `json:"topics"`
		}
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &f) != nil {
			return nil, invalidParams("invalid filter")
		}
		from, err := s.blockNumber(orLatest(f.FromBlock), head)
		if err != nil {
			return nil, err
		}
		to, err := s.blockNumber(orLatest(f.ToBlock), head)
		if err != nil {
			return nil, err
		}
		if from > to {
			return nil, invalidParams("please verify: fromBlock <= toBlock")
		}
		if int64(to-from+1) > s.maxBlockRange {
			return nil, invalidParams(fmt.Sprintf("exceed max block range: %d", s.maxBlockRange))
		}
		addrs := map[common.Address]bool{}
		var one string
		var many []string
		switch {
		case len(f.Address) == 0 || string(f.Address) == "null":
		case json.Unmarshal(f.Address, &one) == nil:
			addrs[common.HexToAddress(one)] = true
		case json.Unmarshal(f.Address, &many) == nil:
			for _, a := range many {
				addrs[common.HexToAddress(a)] = true
			}
		}
		var topic0 string
		if len(f.Topics) > 0 {
			topic0, _ = f.Topics[0].(string)
		}
		out := []map[string]any{}
		for n := from; n <= min(to, head); n++ {
			b := s.blocks[n]
			for i, l := range b.logs {
				if len(addrs) > 0 && !addrs[l.contract] {
					continue
				}
				if topic0 != "" && !strings.EqualFold(topic0, transferTopic.Hex()) {
					continue
				}
				out = append(out, logElement(b, i, l))
			}
		}
		return out, nil
	case "eth_call", "eth_getCode":
		var call struct {
			To   common.Address `json:"to"`
			Data hexutil.Bytes  `json:"data"`
		}
		var addr common.Address
		switch {
		case len(req.Params) < 1:
			return nil, invalidParams("invalid parameters")
		case req.Method == "eth_getCode" && json.Unmarshal(req.Params[0], &addr) == nil:
		case req.Method == "eth_call" && json.Unmarshal(req.Params[0], &call) == nil:
			addr = call.To
		default:
			return nil, invalidParams("invalid parameters")
		}
		d, known := s.decimals[addr]
		switch {
		case !known:
			return hexutil.Bytes{}, nil
		case req.Method == "eth_getCode":
			return hexutil.Bytes(TronTokenCode), nil
		case len(call.Data) >= 4 && common.Bytes2Hex(call.Data[:4]) == "313ce567": // decimals()
			return hexutil.Bytes(common.BigToHash(big.NewInt(int64(d))).Bytes()), nil
		}
		return nil, &rpcError{Code: -32000, Message: "REVERT opcode executed"}
	case "eth_getTransactionReceipt":
		var id string
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &id) != nil {
			return nil, invalidParams("invalid hash value")
		}
		want := common.HexToHash(id)
		for _, b := range s.blocks {
			for i, l := range b.logs {
				if l.txID != want {
					continue
				}
				// eth_getTransactionReceipt.md: a receipt whose logs are this transaction's
				return map[string]any{
					"blockHash": b.hash, "blockNumber": hexutil.Uint64(b.number), "transactionHash": l.txID,
					"transactionIndex": hexutil.Uint64(i), "from": l.from, "to": l.contract,
					"cumulativeGasUsed": "0x0", "effectiveGasPrice": "0xd2", "gasUsed": "0x3443",
					"contractAddress": nil, "logs": []map[string]any{logElement(b, i, l)},
					"logsBloom": "0x" + strings.Repeat("00", 256), "root": nil, "status": "0x1", "type": "0x0",
				}, nil
			}
		}
		return nil, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method " + req.Method + " not found"}
}

var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

func orLatest(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`"latest"`)
	}
	return raw
}

// blockNumber reads a block parameter: a 0x height or a tag java-tron accepts.
func (s *TronRPCTestServer) blockNumber(raw json.RawMessage, head uint64) (uint64, *rpcError) {
	var p string
	if json.Unmarshal(raw, &p) != nil {
		return 0, invalidParams("invalid block number")
	}
	switch p {
	case "latest":
		return head, nil
	case "earliest":
		return 0, nil
	case "finalized":
		if head < tronSolidification {
			return 0, nil
		}
		return head - tronSolidification, nil
	case "pending", "safe":
		return 0, invalidParams("TAG " + p + " not supported")
	}
	n, err := hexutil.DecodeUint64(p)
	if err != nil {
		return 0, invalidParams("invalid block number")
	}
	return n, nil
}

// blockResult is a BlockResult as eth_getBlockByNumber.md shows it (transaction ids only).
func (s *TronRPCTestServer) blockResult(b *tronTestBlock) map[string]any {
	txs := []common.Hash{}
	for _, l := range b.logs {
		txs = append(txs, l.txID)
	}
	zero32 := "0x" + strings.Repeat("00", 32)
	return map[string]any{
		"number": hexutil.Uint64(b.number), "hash": b.hash, "parentHash": b.parent,
		"miner": "0xa234e405a2c6fd67cdd4d0ea2f6188f65534c8b1", "timestamp": hexutil.Uint64(b.timestamp),
		"size": "0x73d", "transactionsRoot": crypto.Keccak256Hash(b.hash[:]), "stateRoot": "0x",
		"transactions": txs, "uncles": []string{}, "gasLimit": "0x0", "gasUsed": "0x0",
		"difficulty": "0x0", "totalDifficulty": "0x0", "extraData": "0x",
		"logsBloom": "0x" + strings.Repeat("00", 256), "nonce": "0x0000000000000000",
		"sha3Uncles": zero32, "receiptsRoot": zero32, "mixHash": zero32, "baseFeePerGas": "0x0",
	}
}

// logElement is a LogFilterElement as eth_getLogs.md shows it, of a TRC-20 Transfer.
func logElement(b *tronTestBlock, i int, l tronTestLog) map[string]any {
	return map[string]any{
		"address": l.contract, "blockHash": b.hash, "blockNumber": hexutil.Uint64(b.number),
		"blockTimestamp": hexutil.Uint64(b.timestamp), "transactionHash": l.txID,
		"transactionIndex": hexutil.Uint64(i), "logIndex": hexutil.Uint64(i), "removed": false,
		"topics": []common.Hash{transferTopic, common.BytesToHash(l.from[:]), common.BytesToHash(l.to[:])},
		"data":   hexutil.Bytes(common.BigToHash(l.amount).Bytes()),
	}
}
