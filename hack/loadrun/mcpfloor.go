package main

// The MCP phase's floor: what a tool call costs over REST GET transfer by its wire format alone.
// A tools/call is a POST whose JSON-RPC request names the tool and its arguments, and whose
// answer carries the REST body twice (as structured content, and escaped as text, MCP's
// "serialized JSON in a TextContent block"), in a JSON-RPC envelope. The floor serves exactly
// that, with the least any tool server could do around the facade's own GET transfer: the
// request decoded by the SDK's jsonrpc.DecodeMessage and its params decoded, the facade's
// handler run in-process on the GET (the door, the key's authentication and budget, the book's
// answer), and the answer encoded as the SDK encodes a tool result (CallToolResult.MarshalJSON)
// inside the envelope the SDK writes. No SDK server, no session check, no Origin check, no translation of
// arguments through the OpenAPI document: a hand-written protocol server that the tool server
// must not be (issue 26: "no hand-written JSON-RPC"), measured only to say how far the goal
// lies from what the protocol itself costs.

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var floorText = flag.String("mcp-floor-text", "body", "the MCP floor's text content: body (the REST body, as the tool server answers) or short (one line, the \"short text rendering\" of issue 26)")

// facadeHandler is the in-process facade's handler (openFacade's), which the MCP floor runs.
var facadeHandler http.Handler

// serveMCPFloor serves the floor on a loopback port of its own and returns its URL.
func serveMCPFloor() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(ln, mcpFloor(facadeHandler, *floorText == "short")) }()
	return "http://" + ln.Addr().String(), nil
}

// mcpFloor answers a tools/call of get_transfer through facade's REST route (see the file's
// comment); with short, the text content is one line rather than the body.
func mcpFloor(facade http.Handler, short bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		call, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || call.Method != "tools/call" {
			http.Error(w, "the floor serves one tools/call", http.StatusBadRequest)
			return
		}
		var params struct {
			Name      string `json:"name"`
			Arguments struct {
				TransferID string `json:"transfer_id"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(call.Params, &params); err != nil || params.Name != "get_transfer" {
			http.Error(w, "the floor serves get_transfer", http.StatusBadRequest)
			return
		}
		get, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/payouts/transfer/"+params.Arguments.TransferID, http.NoBody)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		get.RemoteAddr, get.Header = r.RemoteAddr, http.Header{"Authorization": r.Header["Authorization"]}
		rec := &floorRecorder{header: http.Header{}, status: http.StatusOK}
		facade.ServeHTTP(rec, get)
		answer := bytes.TrimSpace(rec.body.Bytes())
		text := string(answer)
		if short {
			text = "Transfer " + params.Arguments.TransferID + ": see the structured content"
		}
		res := &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: json.RawMessage(answer),
			Meta:              mcp.Meta{"status": rec.status},
			IsError:           rec.status != http.StatusOK,
		}
		resBytes, err := res.MarshalJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// the envelope as the SDK writes a tool call's answer (wireCombined's fields in its
		// order), around the result as it stands: jsonrpc.EncodeMessage would compact it again
		id, err := json.Marshal(call.ID.Raw())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out := make([]byte, 0, len(resBytes)+len(id)+36)
		out = append(append(append(out, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
		out = append(append(out, resBytes...), '}')
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// floorRecorder keeps the facade's answer to the floor's GET.
type floorRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (f *floorRecorder) Header() http.Header         { return f.header }
func (f *floorRecorder) WriteHeader(status int)      { f.status = status }
func (f *floorRecorder) Write(b []byte) (int, error) { return f.body.Write(b) }
