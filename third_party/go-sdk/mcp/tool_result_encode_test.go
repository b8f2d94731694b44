// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestToolResultEncodedOnce checks that a tool's answer is encoded once: a
// large structured content costs about what writing the answer takes, not a
// copy of it compacted at each level of the JSON-RPC response. It also checks
// that the answer is the JSON the release wrote (an escaped string, HTML
// characters as encoding/json writes them).
func TestToolResultEncodedOnce(t *testing.T) {
	big := `{"text":"` + strings.Repeat(`<a & \"b\">`, 32<<10) + `"}`
	server := NewServer(&Implementation{Name: "test", Version: "1"}, nil)
	server.AddTool(&Tool{Name: "big", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{
			Content:           []Content{&TextContent{Text: big}},
			StructuredContent: json.RawMessage(big),
			Meta:              Meta{"status": 200},
		}, nil
	})
	h := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	call := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":"a<1>","method":"tools/call","params":{"name":"big","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocolVersionHeader, protocolVersion20250618)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := call()
	res := &CallToolResult{Content: []Content{&TextContent{Text: big}}, StructuredContent: json.RawMessage(big), Meta: Meta{"status": 200}}
	result, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Version string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", "a<1>", result}); err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.Bytes(); rec.Code != http.StatusOK || !bytes.Equal(got, bytes.TrimSpace(want.Bytes())) {
		t.Fatalf("answer: %d %.300s, want %.300s", rec.Code, got, want.Bytes())
	}

	// No collection while measuring: it would empty encoding/json's pool of
	// buffers, and a call would then allocate them again, by chance.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const runs = 20
	var before, after runtime.MemStats
	call()
	runtime.ReadMemStats(&before)
	for range runs {
		call()
	}
	runtime.ReadMemStats(&after)
	// Writing the answer takes the text escaped and the answer itself, each in
	// a buffer that grows by doubling, and the recorder's copy: 3.8 to 4.0
	// times the answer's size measured. The release compacted the result twice
	// more, each time into a new buffer: 4.8 to 5.0 times.
	answer := uint64(rec.Body.Len())
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("a call answering %d bytes allocated %d bytes (%.1f times)", answer, per, float64(per)/float64(answer))
	if per > 44*answer/10 {
		t.Errorf("a call answering %d bytes allocated %d bytes (%.1f times)", answer, per, float64(per)/float64(answer))
	}
}
