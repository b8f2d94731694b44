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
	"time"
)

// releaseMarshal is CallToolResult.MarshalJSON as released.
func releaseMarshal(x *CallToolResult) ([]byte, error) {
	type res CallToolResult
	type wire struct {
		res
		ResultType    resultType      `json:"resultType,omitempty"`
		InputRequests json.RawMessage `json:"inputRequests,omitempty"`
	}
	w := wire{res: res(*x), ResultType: x.resultType}
	if x.InputRequests != nil {
		ir, err := json.Marshal(x.InputRequests)
		if err != nil {
			return nil, err
		}
		w.InputRequests = ir
	}
	return json.Marshal(w)
}

// TestToolResultMarshalsAsReleased checks that a tool result is encoded to the
// release's bytes, in the common shape (text content, structured content that
// is JSON already) and in others: HTML characters, non-ASCII, U+2028,
// invalid UTF-8 and control characters in the text and in the structured
// content, which is compacted.
func TestToolResultMarshalsAsReleased(t *testing.T) {
	odd := "a <b> & \"c\" é \u2028 \u2029 \x01 \t \xff \\ / \U0001F600"
	text, err := json.Marshal(odd)
	if err != nil {
		t.Fatal(err)
	}
	structured := json.RawMessage(" {\n \"text\" : " + string(text) + ", \"n\": [1, 2.50, -3e2], \"o\": {}, \"t\": true, \"h\": \"<&>\u00e9\"}\n")
	withResultType := &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, RequestState: "s<1>"}
	withResultType.setResultType(resultTypeComplete)
	for i, r := range []*CallToolResult{
		{Content: []Content{&TextContent{Text: odd}}, StructuredContent: structured, Meta: Meta{"status": 200}},
		{Content: []Content{&TextContent{Text: odd}, &TextContent{Text: ""}}, StructuredContent: structured, Meta: Meta{"status": 500, "error": odd, "z": []any{1, "<"}}, IsError: true},
		{Content: []Content{}},
		{},
		{StructuredContent: json.RawMessage(`null`)},
		{Content: []Content{&TextContent{Text: "plain"}}, StructuredContent: json.RawMessage("{\"a\": [1, 2],\n\t\"b\": \"\u00e9 x \xff\"}")},
		{StructuredContent: json.RawMessage(`[1, "<"]`), Meta: Meta{}},
		withResultType,
		// other shapes, encoded the release's way
		{Content: []Content{&TextContent{Text: "x", Meta: Meta{"a": 1}}}},
		{Content: []Content{&TextContent{Text: "x", Annotations: &Annotations{Priority: 0.5}}}},
		{Content: []Content{&ImageContent{Data: []byte("img"), MIMEType: "image/png"}}},
		{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: map[string]any{"a": "<b>"}},
		{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(nil)},
	} {
		got, err := r.MarshalJSON()
		want, werr := releaseMarshal(r)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%d: MarshalJSON gave %s (%v), the release %s (%v)", i, got, err, want, werr)
		}
	}
	// Invalid structured content fails as it did.
	r := &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a":x}`)}
	_, err = r.MarshalJSON()
	_, werr := releaseMarshal(r)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Errorf("invalid structured content: %v, the release %v", err, werr)
	}
}

// TestToolResultMarshaledInOnePass checks that encoding a tool result with a
// large structured content and its text allocates about the answer once,
// rather than a copy of it at each level encoding/json compacts.
func TestToolResultMarshaledInOnePass(t *testing.T) {
	big := `{"text":"` + strings.Repeat(`abc é \"d\" `, 16<<10) + `"}`
	r := &CallToolResult{Content: []Content{&TextContent{Text: big}}, StructuredContent: json.RawMessage(big), Meta: Meta{"status": 200}}
	data, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		_, _ = r.MarshalJSON()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	ratio := float64(per) / float64(len(data))
	t.Logf("a result of %d bytes allocated %d bytes (%.1f times)", len(data), per, ratio)
	if ratio > 1.6 {
		t.Errorf("a result of %d bytes allocated %d bytes (%.1f times its size)", len(data), per, ratio)
	}
}

// TestToolResultThatCannotBeEncodedIsAnswered checks that a tool result the
// server cannot encode (structured content that is not JSON) still gets an
// answer, an error saying why, rather than none.
func TestToolResultThatCannotBeEncodedIsAnswered(t *testing.T) {
	server := NewServer(&Implementation{Name: "test", Version: "1"}, nil)
	server.AddTool(&Tool{Name: "bad", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a":x}`)}, nil
	})
	for _, jsonResponse := range []bool{true, false} {
		h := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocolVersionHeader, protocolVersion20250618)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		timedOut := ctx.Err() != nil
		cancel()
		if body := rec.Body.String(); timedOut || !strings.Contains(body, `"error":{"code":-32603`) || !strings.Contains(body, "cannot be encoded") {
			t.Errorf("JSON answer %v: %d %q (timed out: %v), want an internal error", jsonResponse, rec.Code, body, timedOut)
		}
	}
}
