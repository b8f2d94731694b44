// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestStatelessJSONCallOnRequestGoroutine checks that a stateless server
// answering JSON handles a single call on the HTTP request's goroutine, and
// that a batch and an SSE answer still go through the connection's queue.
func TestStatelessJSONCallOnRequestGoroutine(t *testing.T) {
	var stack string
	server := NewServer(&Implementation{Name: "test", Version: "1"}, nil)
	server.AddTool(&Tool{Name: "where", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		buf := make([]byte, 64<<10)
		stack = string(buf[:runtime.Stack(buf, false)])
		return &CallToolResult{Content: []Content{&TextContent{Text: "here"}}}, nil
	})
	for _, c := range []struct {
		name         string
		jsonResponse bool
		onRequest    bool
	}{
		{"JSON answer", true, true},
		{"SSE answer", false, false},
	} {
		stack = ""
		h := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true, JSONResponse: c.jsonResponse})
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocolVersionHeader, protocolVersion20250618)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"here"`) {
			t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		if got := strings.Contains(stack, "servePOST"); got != c.onRequest {
			t.Errorf("%s: handled on the request's goroutine %v, want %v; the handler's stack:\n%s", c.name, got, c.onRequest, stack)
		}
	}
}
