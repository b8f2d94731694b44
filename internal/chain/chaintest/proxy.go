package chaintest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common/hexutil"
)

// RPCProxy stands between the service and a JSON-RPC node (a dev chain's anvil) as a second
// endpoint of the same chain, so that a test can make one endpoint misbehave while the other
// keeps serving the chain: Stall freezes the head it reports (eth_blockNumber answers the head
// of the moment, as a node that lost its peers does, while everything else is still forwarded),
// NoFinalized makes it answer eth_getBlockByNumber("finalized") as a node without finality
// does, and it counts the requests it serves. Single requests and batches are forwarded.
type RPCProxy struct {
	URL string

	target string
	mu     sync.Mutex
	stall  *uint64 // the head reported while stalled
	// noFinalized: the finalized block is answered null, or with finalizedErr when set
	noFinalized  bool
	finalizedErr *rpcError
	reqs         map[string]int
	total        int
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
	stall, noFinalized, finalizedErr := p.stall, p.noFinalized, p.finalizedErr
	p.mu.Unlock()

	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || (stall == nil && !noFinalized) {
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
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		_ = json.NewEncoder(w).Encode(answers)
	} else {
		_ = json.NewEncoder(w).Encode(answers[0])
	}
}
