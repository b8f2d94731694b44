package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKLogsNoInfoPerCall: a stateless tool call logs nothing at Info through the SDK (it
// connects and closes a session for every request, and logs both at Info), and what it logs at
// Warn and above still comes through.
func TestSDKLogsNoInfoPerCall(t *testing.T) {
	var out bytes.Buffer
	log := sdkLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})))
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{Logger: log})
	srv.AddTool(&mcp.Tool{Name: "ok", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(Response{Status: 200, Body: []byte(`{"a":1}`)}), nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log})
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"structuredContent":{"a":1}`) {
		t.Fatalf("tools/call: %d %s", rec.Code, rec.Body)
	}
	if out.Len() > 0 {
		t.Errorf("a tool call logged at Info or above:\n%s", out.String())
	}
	log.Warn("a warning")
	if !strings.Contains(out.String(), "level=WARN msg=\"a warning\"") {
		t.Errorf("a warning was not logged: %q", out.String())
	}
}
