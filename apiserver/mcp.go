package apiserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/apiserver/mcpserver"
	"github.com/stablepay/payout-operator/internal/apierror"
)

// MCPPath is where the facade serves the tool server for AI agents (spec 1's {mcp_url}).
const MCPPath = "/mcp"

// newMCP builds the tool server on the facade's own routes. Its HTTP requests pass the door
// and admit as every API request does (the same 401s, brute-force counting and allow-list);
// each tool call then runs its route through serve, the rest of the REST path: the route's
// per-key rate limit, body limit and handler. The handlers write HTTP answers, so the tool
// hands them a request built from its arguments and reads their answer back (mcpBackend.Do):
// nothing of a handler is copied or split for MCP, and a tool's answer is the REST answer.
func (s *Server) newMCP() (http.Handler, error) {
	return mcpserver.New(mcpserver.Config{
		OpenAPI:        s.openapi,
		Backend:        mcpBackend{s: s, routes: s.routesByPattern()},
		Admit:          s.admitMCP,
		AllowedOrigins: s.cfg.MCPAllowedOrigins,
		Version:        "1.3.25",
		Now:            s.cfg.Clock.Now,
		Log:            slog.New(logr.ToSlogHandler(s.cfg.Log.WithName("mcp"))),
	})
}

// admitMCP is admit for the MCP endpoint: its transport messages (initialize, tools/list, ...)
// spend no budget; the tool calls they carry spend their operation's.
func (s *Server) admitMCP(w http.ResponseWriter, r *http.Request) (string, any, bool) {
	c, ok := s.admit(w, r, "")
	if !ok {
		return "", nil, false
	}
	return c.KeyID, c, true
}

func (s *Server) routesByPattern() map[string]route {
	out := map[string]route{}
	for _, rt := range s.routes() {
		out[rt.method+" "+rt.path] = rt
	}
	return out
}

// mcpBackend performs tool calls through the REST routes.
type mcpBackend struct {
	s      *Server
	routes map[string]route
}

// Do runs the route of req for caller as a REST request with the same parameters and body.
func (b mcpBackend) Do(ctx context.Context, caller any, req mcpserver.Request) mcpserver.Response {
	w := &bufferWriter{header: http.Header{}}
	c, _ := caller.(*Caller)
	rt, ok := b.routes[req.Method+" "+req.Path]
	if c == nil || !ok {
		// a tool the routes do not serve: a programming error, never the caller's
		writeError(w, &http.Request{}, apierror.Errorf(apierror.Internal, "no route %s %s", req.Method, req.Path))
		return mcpserver.Response{Status: w.status, Body: w.body.Bytes()}
	}
	path := req.Path
	for k, v := range req.PathValues {
		path = strings.Replace(path, "{"+k+"}", url.PathEscape(v), 1)
	}
	// A request without a body gets http.NoBody, as a server's request has (a reader of
	// nothing would cost a reader, a closer and a GetBody closure for no bytes).
	var body io.Reader = http.NoBody
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	r, err := http.NewRequestWithContext(ctx, req.Method, "/", body)
	if err != nil {
		writeError(w, &http.Request{}, apierror.Errorf(apierror.Invalid, "the arguments do not make a request: %v", err))
		return mcpserver.Response{Status: w.status, Body: w.body.Bytes()}
	}
	// the URL as parsing its text would give it, without writing and parsing that text: "/"
	// parsed is a URL with nothing but its path
	r.URL.Path, r.URL.RawQuery = path, req.Query.Encode()
	if req.Body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	// the tool call's own access record: writeError keeps a 5xx's cause there, logged below
	rec := &record{id: requestID(r)}
	w.rec = rec
	for k, v := range req.PathValues {
		r.SetPathValue(k, v)
	}
	b.s.serve(w, r, c, rt.budget, rt.handle)
	if rec.err != nil {
		b.s.cfg.Log.Error(rec.err, "tool call failed", "requestId", rec.id, "method", req.Method, "path", req.Path,
			"status", w.status, "account", c.Account.Name, "keyId", c.KeyID)
	}
	return mcpserver.Response{Status: w.status, Body: w.body.Bytes()}
}

// bufferWriter keeps a handler's answer for a tool call.
type bufferWriter struct {
	rec    *record // the tool call's access record
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
