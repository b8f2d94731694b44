package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestQueryText checks that an argument's URL text is what decoding it gives for every string,
// the ones its shortcut takes as they stand and the ones it leaves to the decoder, and its JSON
// for any other value.
func TestQueryText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"be0c0000000000000000000a"`, "be0c0000000000000000000a"},
		{`""`, ""},
		{`"a b/c?d"`, "a b/c?d"},
		{`"é"`, "é"},
		{`"a\"b"`, `a"b`},
		{`"a\\b"`, `a\b`},
		{`"\u00e9"`, "é"},
		{"\"\xff\"", "\uFFFD"},
		{`25`, "25"},
		{`true`, "true"},
		{`null`, ""},
	} {
		if got := queryText(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("queryText(%s) = %q, want %q", c.raw, got, c.want)
		}
		var s string
		if json.Unmarshal([]byte(c.raw), &s) == nil && s != c.want {
			t.Errorf("queryText(%s) = %q, decoding gives %q", c.raw, c.want, s)
		}
	}
}

// TestResultOfAnAnswerThatIsNotAnObject: a 2xx answer that is not a JSON object is a tool error,
// not structured content.
func TestResultOfAnAnswerThatIsNotAnObject(t *testing.T) {
	for _, body := range []string{"", "not json", `["a"]`, `{"a":`, "{\"a\":1}\n{", "{"} {
		r := result(Response{Status: 200, Body: []byte(body)})
		if !r.IsError || r.StructuredContent != nil {
			t.Errorf("%q: %+v, want a tool error without structured content", body, r)
		}
	}
	r := result(Response{Status: 200, Body: []byte(" {\"transfer\":{\"id\":\"x\"}}\n")})
	if r.IsError || string(r.StructuredContent.(json.RawMessage)) != `{"transfer":{"id":"x"}}` {
		t.Errorf("an object: %+v", r)
	}
}

// TestResultOfAnAnswerThatIsNotJSONIsAnswered: result does not validate an answer that looks
// like an object (the SDK's encoding does); one that is not JSON still gets an answer, the SDK's
// internal error, rather than none.
func TestResultOfAnAnswerThatIsNotJSONIsAnswered(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(Response{Status: 200, Body: []byte(`{"transfer":{"id":x}}`)}), nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"broken","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if body := rec.Body.String(); ctx.Err() != nil || !strings.Contains(body, `"error":{"code":-32603`) {
		t.Errorf("%d %q (timed out: %v), want the SDK's internal error", rec.Code, body, ctx.Err() != nil)
	}
}
