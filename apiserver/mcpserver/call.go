package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tool is d's MCP tool: its input schema holds the operation's path and query parameters and
// its body's fields side by side (the spec's names never collide), its output schema the
// operation's success answer.
func (d toolDef) tool(doc *openAPI) (*mcp.Tool, error) {
	op, err := doc.operation(d.method, d.path)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", d.name, err)
	}
	props := map[string]any{}
	var required []string
	for _, p := range op.params {
		name, _ := p["name"].(string)
		schema, _ := p["schema"].(map[string]any)
		s := map[string]any{}
		for k, v := range schema {
			s[k] = v
		}
		if desc, ok := p["description"].(string); ok {
			s["description"] = desc
		}
		props[name] = s
		if p["required"] == true {
			required = append(required, name)
		}
	}
	input := map[string]any{"type": "object"}
	if op.body != nil {
		bp, _ := op.body["properties"].(map[string]any)
		for k, v := range bp {
			props[k] = v
		}
		for _, r := range asStrings(op.body["required"]) {
			required = append(required, r)
		}
		if ap, ok := op.body["additionalProperties"]; ok {
			input["additionalProperties"] = ap
		}
	}
	for k, v := range d.props {
		props[k] = v
	}
	if d.required != nil {
		required = d.required
	}
	input["properties"] = props
	if len(required) > 0 {
		sort.Strings(required)
		input["required"] = required
	}
	return &mcp.Tool{
		Name: d.name, Title: d.title, Description: d.description,
		InputSchema: input, OutputSchema: op.output, Annotations: d.annotations(),
	}, nil
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// toolHandler performs d's operation with the call's arguments. The arguments are not
// validated here (the SDK's typed tools would, with texts of their own): they are handed to
// the REST handler as a REST caller would send them, so bad input gets the same 400 text.
func toolHandler(b Backend, d toolDef) mcp.ToolHandler {
	pathParams := map[string]bool{}
	for _, seg := range strings.Split(d.path, "/") {
		if strings.HasPrefix(seg, "{") {
			pathParams[strings.Trim(seg, "{}")] = true
		}
	}
	hasBody := d.method == http.MethodPost || d.method == http.MethodPatch
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		caller, ok := callerOf(req.Extra)
		if !ok {
			return errorResult(http.StatusUnauthorized, "the call carries no admitted API key"), nil
		}
		var args map[string]json.RawMessage
		if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			if err := json.Unmarshal(raw, &args); err != nil {
				return errorResult(http.StatusBadRequest, "the tool's arguments must be a JSON object"), nil
			}
		}
		// The maps are made when an argument goes into them: a lookup (get_transfer) has a
		// path value and no query, and the backend reads a nil map as an empty one.
		rq := Request{Method: d.method, Path: d.path}
		body := map[string]json.RawMessage{}
		for name, raw := range args {
			switch {
			case pathParams[name]:
				if rq.PathValues == nil {
					rq.PathValues = map[string]string{}
				}
				rq.PathValues[name] = queryText(raw)
			case hasBody && !isQueryParam(d, name):
				body[name] = raw
			default:
				if !bytes.Equal(raw, []byte("null")) {
					if rq.Query == nil {
						rq.Query = url.Values{}
					}
					rq.Query.Set(name, queryText(raw))
				}
			}
		}
		if hasBody {
			rq.Body = objectJSON(body)
		}
		return result(b.Do(ctx, caller, rq)), nil
	}
}

// isQueryParam tells the query parameters of a POST operation (account requirements' currency).
func isQueryParam(d toolDef, name string) bool {
	return name == "currency" && d.path == "/api/payouts/account-requirements"
}

// queryText is a JSON argument as it would be written in a URL: a string's text, any other
// value's JSON (25, true), which the REST handler parses (or refuses) as it parses a query.
func queryText(raw json.RawMessage) string {
	// a string without escapes (an id) is its text as it stands, as decoding it would give it
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if in := raw[1 : n-1]; bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in) {
			return string(in)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// objectJSON writes fields as one JSON object, each value exactly as the caller sent it (no
// number is re-encoded), keys sorted.
func objectJSON(fields map[string]json.RawMessage) []byte {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(fields[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// result is the tool result of a REST answer: the body as structured content and as text on
// success, a tool error with the status and error text otherwise. _meta carries the status
// either way (201 for a created recipient), for clients that act on it.
func result(resp Response) *mcp.CallToolResult {
	if resp.Status < 200 || resp.Status > 299 {
		return errorResult(resp.Status, errorText(resp.Body))
	}
	body := bytes.TrimSpace(resp.Body)
	// Every REST answer is a JSON object; one that is not is a tool error. It is not validated
	// here (a scan of every answer): the SDK encodes the structured content with a scan that
	// validates it, and answers a call whose result it cannot encode with an internal error
	// (third_party/go-sdk.patch, hunk 5).
	if n := len(body); n < 2 || body[0] != '{' || body[n-1] != '}' {
		return errorResult(http.StatusInternalServerError, "the operation's answer is not a JSON object")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
		Meta:              mcp.Meta{"status": resp.Status},
	}
}

// transferResource reads payout://transfers/{id} with the lookup of get_transfer (its budget,
// its answer).
func transferResource(b Backend) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		caller, ok := callerOf(req.Extra)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "401 Unauthorized: the request carries no admitted API key"}
		}
		uri := req.Params.URI
		id, ok := strings.CutPrefix(uri, "payout://transfers/")
		if !ok || id == "" || strings.Contains(id, "/") {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		resp := b.Do(ctx, caller, Request{Method: http.MethodGet, Path: "/api/payouts/transfer/{transfer_id}", PathValues: map[string]string{"transfer_id": id}})
		switch {
		case resp.Status == http.StatusNotFound:
			return nil, mcp.ResourceNotFoundError(uri)
		case resp.Status != http.StatusOK:
			code := int64(jsonrpc.CodeInternalError)
			if resp.Status < 500 {
				code = jsonrpc.CodeInvalidParams
			}
			return nil, &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%d %s: %s", resp.Status, http.StatusText(resp.Status), errorText(resp.Body))}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(bytes.TrimSpace(resp.Body))}}}, nil
	}
}
