package chaintest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// RPCProxy stands between the service and a JSON-RPC node (a dev chain's anvil) as a second
// endpoint of the same chain, so that a test can make one endpoint misbehave while the other
// keeps serving the chain: Stall freezes the head it reports (eth_blockNumber answers the head
// of the moment, as a node that lost its peers does, while everything else is still forwarded),
// NoFinalized makes it answer eth_getBlockByNumber("finalized") as a node without finality
// does, DropLogs makes eth_getLogs and receipts leave out the logs of some blocks (a node whose
// log index lost them), FailLogs makes eth_getLogs fail, SwapReceipt makes it answer the receipt
// of one transaction when asked for another, and it counts the requests it serves. Single
// requests and batches are forwarded.
type RPCProxy struct {
	URL string

	target string
	mu     sync.Mutex
	stall  *uint64 // the head reported while stalled
	// noFinalized: the finalized block is answered null, or with finalizedErr when set
	noFinalized  bool
	finalizedErr *rpcError
	// dropLogs, when set, are the blocks whose logs eth_getLogs and receipts leave out
	dropLogs *[2]uint64
	failLogs bool
	// swapReceipt: the receipt asked for under a key is the one of its value
	swapReceipt map[common.Hash]common.Hash
	reqs        map[string]int
	total       int
}

// NewRPCProxy starts a proxy of target until the end of the test.
func NewRPCProxy(tb interface {
	Helper()
	Cleanup(func())
}, target string) *RPCProxy {
	tb.Helper()
	p := &RPCProxy{target: target, reqs: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Stall freezes the head the proxy reports at head (eth_blockNumber answers it from now on).
func (p *RPCProxy) Stall(head uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stall = &head
}

// NoFinalized makes the proxy answer eth_getBlockByNumber("finalized") with null (a node that
// has no finalized block yet), or, with unsupported, with the error a node that does not know
// the tag answers.
func (p *RPCProxy) NoFinalized(unsupported bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noFinalized, p.finalizedErr = true, nil
	if unsupported {
		p.finalizedErr = &rpcError{Code: -32602, Message: "invalid argument 0: hex string without 0x prefix"}
	}
}

// DropLogs makes eth_getLogs, and eth_getTransactionReceipt, answer without the logs of blocks
// from..to (inclusive), as a node that lost them from its log index does; every other answer
// stays true.
func (p *RPCProxy) DropLogs(from, to uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLogs = &[2]uint64{from, to}
}

// KeepLogs undoes DropLogs.
func (p *RPCProxy) KeepLogs() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLogs = nil
}

// FailLogs makes eth_getLogs answer a JSON-RPC error (fail = true), as a node whose log index is
// down does, or serve again.
func (p *RPCProxy) FailLogs(fail bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failLogs = fail
}

// SwapReceipt makes eth_getTransactionReceipt(asked) answer the receipt of answered: a node that
// mixes up its answers, or lies.
func (p *RPCProxy) SwapReceipt(asked, answered common.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.swapReceipt == nil {
		p.swapReceipt = map[common.Hash]common.Hash{}
	}
	p.swapReceipt[asked] = answered
}

// Requests is how many HTTP requests the proxy has served, and how many of them were a single
// call of method.
func (p *RPCProxy) Requests(method string) (total, single int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, p.reqs[method]
}

func (p *RPCProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	batch := strings.HasPrefix(strings.TrimSpace(string(body)), "[")
	var reqs []rpcRequest
	if batch {
		_ = json.Unmarshal(body, &reqs)
	} else {
		var req rpcRequest
		if json.Unmarshal(body, &req) == nil {
			reqs = []rpcRequest{req}
		}
	}
	p.mu.Lock()
	p.total++
	if !batch && len(reqs) == 1 {
		p.reqs[reqs[0].Method]++
	}
	stall, noFinalized, finalizedErr, dropLogs, failLogs := p.stall, p.noFinalized, p.finalizedErr, p.dropLogs, p.failLogs
	swapped := false
	for i, req := range reqs {
		var asked common.Hash
		if req.Method != "eth_getTransactionReceipt" || len(req.Params) != 1 || json.Unmarshal(req.Params[0], &asked) != nil {
			continue
		}
		if answered, ok := p.swapReceipt[asked]; ok {
			reqs[i].Params = []json.RawMessage{mustJSON(answered)}
			swapped = true
		}
	}
	p.mu.Unlock()
	if swapped {
		if batch {
			body = mustJSON(reqs)
		} else {
			body = mustJSON(reqs[0])
		}
	}

	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || (stall == nil && !noFinalized && dropLogs == nil && !failLogs) {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(out)
		return
	}
	// rewrite the answers of the calls the proxy falsifies
	var answers []map[string]json.RawMessage
	if batch {
		err = json.Unmarshal(out, &answers)
	} else {
		answers = make([]map[string]json.RawMessage, 1)
		err = json.Unmarshal(out, &answers[0])
	}
	if err != nil || len(answers) != len(reqs) {
		http.Error(w, "the proxy could not read the node's answer", http.StatusBadGateway)
		return
	}
	for i, req := range reqs {
		switch {
		case req.Method == "eth_blockNumber" && stall != nil:
			answers[i]["result"], _ = json.Marshal(hexutil.Uint64(*stall))
		case req.Method == "eth_getBlockByNumber" && noFinalized && len(req.Params) > 0 && string(req.Params[0]) == `"finalized"`:
			if finalizedErr != nil {
				delete(answers[i], "result")
				answers[i]["error"], _ = json.Marshal(finalizedErr)
			} else {
				answers[i]["result"] = json.RawMessage("null")
			}
		case req.Method == "eth_getLogs" && failLogs:
			delete(answers[i], "result")
			answers[i]["error"] = mustJSON(&rpcError{Code: -32000, Message: "log index unavailable"})
		case req.Method == "eth_getLogs" && dropLogs != nil:
			answers[i]["result"] = dropped(answers[i]["result"], dropLogs)
		case req.Method == "eth_getTransactionReceipt" && dropLogs != nil:
			var receipt map[string]json.RawMessage
			if json.Unmarshal(answers[i]["result"], &receipt) == nil && receipt != nil {
				receipt["logs"] = dropped(receipt["logs"], dropLogs)
				answers[i]["result"] = mustJSON(receipt)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		_ = json.NewEncoder(w).Encode(answers)
	} else {
		_ = json.NewEncoder(w).Encode(answers[0])
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// dropped is a JSON list of logs without those of the blocks in span.
func dropped(logs json.RawMessage, span *[2]uint64) json.RawMessage {
	var list []map[string]json.RawMessage
	if json.Unmarshal(logs, &list) != nil {
		return logs
	}
	kept := []map[string]json.RawMessage{}
	for _, l := range list {
		var n hexutil.Uint64
		if json.Unmarshal(l["blockNumber"], &n) == nil && uint64(n) >= span[0] && uint64(n) <= span[1] {
			continue
		}
		kept = append(kept, l)
	}
	return mustJSON(kept)
}
