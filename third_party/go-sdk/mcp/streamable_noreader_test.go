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

// TestStatelessJSONCallHasNoReader checks that a stateless POST of one call
// answered as JSON connects no goroutine reading the connection (its call is
// handled on the request's goroutine, and nothing else can arrive on it), and
// that a POST answered with SSE still has one.
func TestStatelessJSONCallHasNoReader(t *testing.T) {
	readers := func() int {
		buf := make([]byte, 1<<20)
		return strings.Count(string(buf[:runtime.Stack(buf, true)]), "jsonrpc2.(*Connection).readIncoming(")
	}
	var during int
	server := NewServer(&Implementation{Name: "test", Version: "1"}, nil)
	server.AddTool(&Tool{Name: "count", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		during = readers()
		return &CallToolResult{Content: []Content{&TextContent{Text: "counted"}}}, nil
	})
	for _, c := range []struct {
		name         string
		jsonResponse bool
		reader       bool
	}{
		{"JSON answer", true, false},
		{"SSE answer", false, true},
	} {
		h := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true, JSONResponse: c.jsonResponse})
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocolVersionHeader, protocolVersion20250618)
		rec := httptest.NewRecorder()
		before := readers()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"counted"`) {
			t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		if got := during > before; got != c.reader {
			t.Errorf("%s: a goroutine read the connection: %v (%d reading before the call, %d during it), want %v", c.name, got, before, during, c.reader)
		}
	}
}
