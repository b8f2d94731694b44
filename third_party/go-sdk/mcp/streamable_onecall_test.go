// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// oneCallServer is a server with a tool, a failing tool, a resource to
// subscribe to and a receiving middleware, recording for each request whether
// its session was among the server's sessions while it was handled, and what
// the middleware saw.
type oneCallServer struct {
	*Server
	mu     sync.Mutex
	listed []bool
	queued []bool // whether the session's connection had a queue of incoming messages
	seen   []string
}

func newOneCallServer(opts *ServerOptions) *oneCallServer {
	s := &oneCallServer{}
	o := *opts
	o.SubscribeHandler = func(_ context.Context, req *SubscribeRequest) error {
		s.record(req.Session)
		return nil
	}
	o.UnsubscribeHandler = func(context.Context, *UnsubscribeRequest) error { return nil }
	s.Server = NewServer(&Implementation{Name: "test", Version: "1"}, &o)
	s.AddTool(&Tool{Name: "ok", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
		s.record(req.Session)
		return &CallToolResult{Content: []Content{&TextContent{Text: "<ok> " + req.Session.InitializeParams().ProtocolVersion}}, StructuredContent: map[string]any{"a": 1}}, nil
	})
	s.AddTool(&Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
		s.record(req.Session)
		return nil, errors.New("it failed")
	})
	s.AddResource(&Resource{Name: "r", URI: "test://r"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	s.AddReceivingMiddleware(func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, req Request) (Result, error) {
			s.mu.Lock()
			s.seen = append(s.seen, method)
			s.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	return s
}

func (s *oneCallServer) record(ss *ServerSession) {
	listed := slices.Contains(slices.Collect(s.Sessions()), ss)
	c, _ := ss.mcpConn.(*streamableServerConn)
	s.mu.Lock()
	s.listed = append(s.listed, listed)
	s.queued = append(s.queued, c == nil || c.incoming != nil)
	s.mu.Unlock()
}

func (s *oneCallServer) post(t *testing.T, jsonResponse bool, version, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s.Server }, &StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set(protocolVersionHeader, version)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestStatelessOneCallSessionNotListed checks that a stateless POST of one
// call answered as JSON is served by a session the server does not list (so
// that neither its connection nor its close takes the server's lock), and that
// an SSE answer, a resource subscription and a server with keepalive still get
// a listed session; and that a connection with no reader (any of them but the
// SSE answer) has no queue of incoming messages.
func TestStatelessOneCallSessionNotListed(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{}}}`
	const subscribe = `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}`
	for _, c := range []struct {
		name         string
		keepAlive    time.Duration
		jsonResponse bool
		body         string
		listed       bool
		queued       bool
	}{
		{"JSON answer", 0, true, call, false, false},
		{"SSE answer", 0, false, call, true, true},
		{"resource subscription", 0, true, subscribe, true, false},
		{"keepalive", time.Hour, true, call, true, false},
	} {
		s := newOneCallServer(&ServerOptions{KeepAlive: c.keepAlive})
		if rec := s.post(t, c.jsonResponse, protocolVersion20250618, c.body); rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		if len(s.listed) != 1 || s.listed[0] != c.listed {
			t.Errorf("%s: the session listed by the server while it was handled: %v, want [%v]", c.name, s.listed, c.listed)
		}
		if len(s.queued) != 1 || s.queued[0] != c.queued {
			t.Errorf("%s: the connection had a queue of incoming messages: %v, want [%v]", c.name, s.queued, c.queued)
		}
		if n := len(slices.Collect(s.Sessions())); n != 0 {
			t.Errorf("%s: %d sessions listed after the call, want 0", c.name, n)
		}
	}
}

// TestStatelessOneCallAnswersAsConnect checks that a stateless POST of one call
// answered as JSON gets the answer a session connected by Server.Connect gives
// (a server with keepalive connects its sessions that way), through the same
// middleware.
func TestStatelessOneCallAnswersAsConnect(t *testing.T) {
	newMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		version, body string
		header        []string
	}{
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, nil},
		{"", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"ok","arguments":{},"_meta":{"progressToken":3}}}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fails","arguments":{}}}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":1}}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":6,"method":"ping"}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://r"}}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":8,"method":"prompts/list"}`, nil},
		{protocolVersion20250618, `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil},
		{protocolVersion20260728, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ok","arguments":{},` + newMeta + `}}`, nil},
		{protocolVersion20260728, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"ok","arguments":{},` + newMeta + `}}`, []string{methodHeader, "tools/call", nameHeader, "ok"}},
		{protocolVersion20260728, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"fails","arguments":{},` + newMeta + `}}`, []string{methodHeader, "tools/call", nameHeader, "fails"}},
		{protocolVersion20260728, `{"jsonrpc":"2.0","id":13,"method":"ping","params":{` + newMeta + `}}`, []string{methodHeader, "ping"}},
		{protocolVersion20260728, `{"jsonrpc":"2.0","id":14,"method":"server/discover","params":{` + newMeta + `}}`, []string{methodHeader, "server/discover"}},
	} {
		oneCall, connected := newOneCallServer(&ServerOptions{}), newOneCallServer(&ServerOptions{KeepAlive: time.Hour})
		got, want := oneCall.post(t, true, c.version, c.body, c.header...), connected.post(t, true, c.version, c.body, c.header...)
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || got.Body.String() != want.Body.String() {
			t.Errorf("%s:\ngot  %d %q %s\nwant %d %q %s", c.body, got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
		}
		if !slices.Equal(oneCall.seen, connected.seen) {
			t.Errorf("%s: the middleware saw %q, want %q", c.body, oneCall.seen, connected.seen)
		}
	}
}
