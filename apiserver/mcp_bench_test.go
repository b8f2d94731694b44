package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// post sends one JSON-RPC message to the tool server as the bench key, on session when given.
func (f benchFacade) post(session, msg string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, MCPPath, bytes.NewReader([]byte(msg)))
	req.RemoteAddr = "192.0.2.10:40000"
	req.Header.Set("Authorization", "Bearer "+f.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// BenchmarkMCPToolCall measures a get_transfer tool call on an open session (issue 26's load
// goal) against REST GET transfer of the same transfer, one request at a time, so that the
// allocations per call are exact: the tool call pays the door and the REST route as GET does,
// and the protocol (JSON-RPC decode, the session's hand-off, the result's encoding) on top.
func BenchmarkMCPToolCall(b *testing.B) {
	f := startBenchFacade(b)
	rec := f.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	session := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || session == "" {
		b.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	if rec := f.post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); rec.Code != http.StatusAccepted {
		b.Fatalf("notifications/initialized: %d %s", rec.Code, rec.Body)
	}
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_transfer","arguments":{"transfer_id":%q}}}`, f.transferID)
	if rec := f.post(session, call); rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"structuredContent":{`)) ||
		bytes.Contains(rec.Body.Bytes(), []byte(`"isError":true`)) {
		b.Fatalf("tools/call: %d %s", rec.Code, rec.Body)
	}
	b.Run("rest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rec := f.get("/api/payouts/transfer/" + f.transferID); rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rec := f.post(session, call); rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
}
