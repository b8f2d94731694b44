package chaintest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// rpcServer is the plumbing the JSON-RPC test nodes share (SolanaRPCTestServer,
// TronRPCTestServer, embedding it): an HTTP server whose handler holds the node's lock for the
// whole request, answers HTTP 503 while the node is set down, and otherwise hands the request
// body to the node's own handler and writes back what it returns as JSON. What a node answers
// (single requests or batches too, its errors' texts) is the node's.
type rpcServer struct {
	srv *httptest.Server

	mu    sync.Mutex
	down  bool
	calls map[string]int // per method, counted by the node's handler
	// route, when set, answers the requests of other paths than the JSON-RPC's (called with mu
	// held): ok is false for a path it does not serve, which then goes to the JSON-RPC handler.
	route func(path string, body []byte) (out any, ok bool)
}

// start serves handle (called with mu held) until the end of the test and returns the
// server's URL.
func (s *rpcServer) start(tb interface {
	Helper()
	Cleanup(func())
}, handle func(body []byte) any) string {
	tb.Helper()
	s.calls = map[string]int{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.down {
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if s.route != nil {
			if out, ok := s.route(r.URL.Path, body); ok {
				_ = json.NewEncoder(w).Encode(out)
				return
			}
		}
		_ = json.NewEncoder(w).Encode(handle(body))
	}))
	tb.Cleanup(s.srv.Close)
	return s.srv.URL
}

// SetDown makes the node answer every request with HTTP 503 (down = true) or serve again.
func (s *rpcServer) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Calls is how many times method was called.
func (s *rpcServer) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// rpcRequest is a JSON-RPC 2.0 request.
type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

// rpcError is a JSON-RPC 2.0 error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}
