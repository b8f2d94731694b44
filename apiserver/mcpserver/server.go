// Package mcpserver is the tool server for AI agents (spec section 1's {mcp_url}): the Model
// Context Protocol over Streamable HTTP, built on the official Go SDK. It owns no rule of the
// payout API: every tool and resource is a REST operation of the facade, described from the
// facade's OpenAPI document and performed by the facade's own handlers through Backend, behind
// the facade's authentication, limits and allow-lists. What it adds is the protocol: the
// catalog, the translation of tool arguments into the operation's parameters and body, and of
// its answer into a tool result.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is one REST operation to perform: the route (method and path template as the
// facade's routes name them), its path values, query and JSON body (nil: none). PathValues
// and Query are nil when the operation has none.
type Request struct {
	Method, Path string
	PathValues   map[string]string
	Query        url.Values
	Body         []byte
}

// Response is the REST answer: its status and body (the resource, or {"error": ...}).
type Response struct {
	Status int
	Body   []byte
}

// Backend performs REST operations for a caller the endpoint admitted: the facade, running
// the route's own rate limit and handler.
type Backend interface {
	Do(ctx context.Context, caller any, req Request) Response
}

// Admit authenticates an HTTP request to the endpoint as the REST routes do (same texts, same
// brute-force counting, same allow-list). It returns the key's id and the caller; when it
// refuses, it has answered the request and returns ok false.
type Admit func(w http.ResponseWriter, r *http.Request) (keyID string, caller any, ok bool)

// Config wires the tool server to the facade.
type Config struct {
	// OpenAPI is the facade's OpenAPI document (JSON): the schemas of the tools, and a resource.
	OpenAPI []byte
	Backend Backend
	Admit   Admit
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed to call the
	// endpoint; none by default, so any request carrying an Origin header is refused (see
	// checkOrigin).
	AllowedOrigins []string
	// SessionLifetime is how long a session id is good for (default 24 hours); past it the
	// client initializes again. Sessions hold nothing on the server (see sessions).
	SessionLifetime time.Duration
	// Now is the clock of session expiry (nil: time.Now).
	Now func() time.Time
	// Version is reported to clients in the initialize answer.
	Version string
	// Log receives the SDK's log lines (nil: none).
	Log *slog.Logger
}

// TransferURITemplate is the resource template of a transfer.
const TransferURITemplate = "payout://transfers/{id}"

// OpenAPIURI is the resource of the OpenAPI document.
const OpenAPIURI = "payout://openapi.json"

// New builds the endpoint's handler: the Origin check, then Admit, then the SDK's Streamable
// HTTP handler, whose sessions are bound to the key that opened them (a request on a session
// with another key is refused with 403 by the SDK: the key id is the token's UserID).
func New(cfg Config) (http.Handler, error) {
	doc, err := parseOpenAPI(cfg.OpenAPI)
	if err != nil {
		return nil, err
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "payout", Title: "Stablecoin-to-fiat payouts", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(cfg.Log),
	})
	for _, d := range tools {
		t, err := d.tool(doc)
		if err != nil {
			return nil, err
		}
		srv.AddTool(t, toolHandler(cfg.Backend, d))
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "transfer", Title: "A transfer", URITemplate: TransferURITemplate, MIMEType: "application/json",
		Description: "A transfer by its 24-character id, as get_transfer answers it: read it to follow its status.",
	}, transferResource(cfg.Backend))
	openapi := cfg.OpenAPI
	srv.AddResource(&mcp.Resource{
		Name: "openapi", Title: "The REST API's OpenAPI document", URI: OpenAPIURI, MIMEType: "application/json",
		Description: "The OpenAPI 3.0 document of the REST facade these tools perform.",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: OpenAPIURI, MIMEType: "application/json", Text: string(openapi)}}}, nil
	})
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		JSONResponse: true,
		Stateless:    true,
		Logger:       sdkLogger(cfg.Log),
	})
	withToken := auth.RequireBearerToken(admitted, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(stream)
	bound := sessions{lifetime: cfg.SessionLifetime, now: cfg.Now}.bind(withToken)
	return checkOrigin(cfg.AllowedOrigins, admit(cfg.Admit, bound)), nil
}

// sdkLogger is the SDK's logger: log with its Info lines logged at Debug. The SDK logs a
// session's connect and disconnect at Info, and a stateless server connects a session for
// every request: three lines a tool call, none of which says more than the access log.
func sdkLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(quieter{log.Handler()})
}

// quieter logs Info records (and levels up to Warn) at Debug.
type quieter struct{ slog.Handler }

func quietLevel(l slog.Level) slog.Level {
	if l >= slog.LevelInfo && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.Handler.Enabled(ctx, quietLevel(l))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = quietLevel(r.Level)
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(attrs)}
}

func (q quieter) WithGroup(name string) slog.Handler { return quieter{q.Handler.WithGroup(name)} }

const instructions = `Stablecoin-to-fiat payouts: a deposit of USDC or USDT becomes a fiat bank payout.
Typical flow: get_deposit_options; get_account_requirements for the currency; create_recipient;
get_quote (valid 5 minutes, one transfer); create_transfer_v1 (or create_transfer_v2 then
confirm_transfer_v2 with the deposit's transaction hash); send exactly the amount to the
deposit_address; poll get_transfer until completed, failed or refunded. Errors come back as tool
errors whose text starts with the HTTP status of the same REST call.`

// identityKey carries what Admit found from admit to the token verifier.
type identityKey struct{}

type identity struct {
	keyID  string
	caller any
}

// admit runs Admit and hands its result on in the request's context.
func admit(a Admit, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keyID, caller, ok := a(w, r)
		if !ok {
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, identity{keyID, caller})))
	})
}

// admitted is the SDK's token verifier: the key was already checked by admit, which put what
// it found in the context. Its id is the token's UserID, to which the SDK binds the session.
func admitted(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	id, ok := ctx.Value(identityKey{}).(identity)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: id.keyID, Extra: map[string]any{"caller": id.caller}}, nil
}

// checkOrigin refuses requests whose Origin header is not an allowed origin (MCP transports:
// servers must validate Origin, against DNS rebinding). API keys are for server-side use only
// (spec 5.1): agents and their hosts send no Origin, browsers always do on a POST, so by
// default every browser request is refused before its key is looked at. The SDK adds its own
// rule for loopback listeners (a Host that is not loopback is refused).
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(allowed, strings.TrimSuffix(o, "/")) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = fmt.Fprintf(w, "{\"error\":%q}\n", "requests from origin "+o+" are not allowed on the tool server")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// callerOf is the caller admit found for the HTTP request that carried req.
func callerOf(extra *mcp.RequestExtra) (any, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return nil, false
	}
	c, ok := extra.TokenInfo.Extra["caller"]
	return c, ok
}

// errorResult is a tool error carrying the REST answer's status and error text.
func errorResult(status int, msg string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s: %s", status, http.StatusText(status), msg)}},
		Meta:    mcp.Meta{"status": status, "error": msg},
	}
	return res
}

// errorText is the error text of a REST error body.
func errorText(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return strings.TrimSpace(string(body))
	}
	return e.Error
}
