package main

// The MCP phase (`-phases mcp`, `make loadrun-mcp`): tool calls of get_transfer through the
// facade's tool server (/mcp, issue 26) against REST GET transfer in the same run, with
// -transfers stored, the same workers and one pool of keys. Spec 8.1's budget of a key's
// lookups is shared by both interfaces, so both take the next key of one counter every 25
// reads. A session is bound to the key that opened it, so each key has a session of its own,
// opened (initialize, notifications/initialized) before the windows: the windows measure the
// tool call, not the session's setup, as REST's measure the GET and not the key's creation.
// The client speaks JSON-RPC over Streamable HTTP itself, the REST side's client cost: a POST
// and the decoding of its answer, as JSON or as an SSE stream.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stablepay/payout-operator/apiserver"
)

// mcpProtocol is the protocol version the load client negotiates (and sends on every request).
const mcpProtocol = "2025-06-18"

// runMCP measures get_transfer tool calls against REST GET transfer on the facade at url and
// prints both with the ratio MCP/REST, and against the wire format's floor at floorURL
// (mcpfloor.go); it returns the tool calls measured.
func runMCP(keys []*keyed, ids []string, url, floorURL string) (int64, error) {
	endpoint := url + apiserver.MCPPath
	sessions := make([]string, len(keys))
	if err := parallel(len(keys), func(i int) (err error) {
		sessions[i], err = openSession(keys[i], endpoint)
		// the windows call with the workers' clients: a key's own connection would stay open
		// for nothing, and thousands of keys would pass the process's limit of open files
		keys[i].hc.CloseIdleConnections()
		return err
	}); err != nil {
		return 0, err
	}
	clients := make([]*http.Client, *workers)
	for i := range clients {
		clients[i] = httpClient()
	}
	var next atomic.Int64
	// key is the nth read's key and its session: a new key every 25 reads, REST's and MCP's alike
	key := func() (int64, int) {
		n := next.Add(1)
		return n, int(n/25) % len(keys)
	}
	rest := op(func(w int) error {
		n, i := key()
		k := *keys[i]
		k.hc = clients[w]
		st, err := k.do("GET", url+"/api/payouts/transfer/"+ids[int(n*7919)%len(ids)], nil, nil)
		if err != nil || st != 200 {
			return fmt.Errorf("GET transfer: %d %v", st, err)
		}
		return nil
	})
	// buffers reused from call to call, as REST's side reuses io.Discard's (a pool, not one per
	// worker: the warm-up below runs more calls at once than there are workers)
	bufs := sync.Pool{New: func() any { return &callBuffers{} }}
	// toolCalls is get_transfer tool calls on endpoint: the tool server's, or the floor's
	// (mcpfloor.go), called alike
	toolCalls := func(endpoint string) op {
		return func(w int) error {
			n, i := key()
			buf := bufs.Get().(*callBuffers)
			defer bufs.Put(buf)
			return callTool(clients[w], buf, endpoint, keys[i].key, sessions[i], n, ids[int(n*7919)%len(ids)])
		}
	}
	tool, floor := toolCalls(endpoint), toolCalls(floorURL)
	// every stored transfer read once, unmeasured, as the gets phase warms the body cache; then
	// a few tool calls of each, for the first-call costs
	if err := parallel(len(ids), func(i int) error { return rest(i % *workers) }); err != nil {
		return 0, err
	}
	for _, o := range []op{tool, floor} {
		if err := parallel(100, func(i int) error { return o(i % *workers) }); err != nil {
			return 0, err
		}
	}
	base, f, err := alternate(tool, rest, floor)
	if err != nil {
		return 0, err
	}
	base[0].print("GET transfer through " + facadeName + " (REST)")
	base[1].print("tools/call, the wire format's floor (" + *floorText + " text)")
	f.print("tools/call get_transfer through " + facadeName + " (MCP)")
	printRatio("ratio MCP / REST", f.rate/base[0].rate, "goal >= 0.7")
	printRatio("ratio floor / REST", base[1].rate/base[0].rate, "the most any tool server reaches")
	printRatio("ratio MCP / floor", f.rate/base[1].rate, "")
	printRatio("p99 MCP / p99 REST", float64(f.p99)/float64(base[0].p99), "")
	fmt.Println()
	return f.n, nil
}

// openSession initializes an MCP session with key k and returns its id.
func openSession(k *keyed, endpoint string) (string, error) {
	init := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcpProtocol, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "loadrun", "version": "1"}}}
	resp, err := postMCP(k.hc, endpoint, k.key, "", init)
	if err != nil {
		return "", err
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if _, err := rpcResult(resp, 0); err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if session == "" {
		return "", fmt.Errorf("initialize: no Mcp-Session-Id in the answer")
	}
	resp, err = postMCP(k.hc, endpoint, k.key, session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %d", resp.StatusCode)
	}
	return session, nil
}

// callBuffers are one call's request body, answer and expected prefix, reused from call to call.
type callBuffers struct{ body, answer, prefix []byte }

// callTool calls get_transfer for transfer on session as request id and checks that it
// succeeded with structured content. The request is written and the answer checked with as
// little work as REST's side does (a status read, the body discarded), in the call's buffers:
// a JSON answer to this id that carries structured content and no isError; else the whole
// answer is decoded for the error to report.
func callTool(hc *http.Client, buf *callBuffers, endpoint, key, session string, id int64, transfer string) error {
	// the transfer ids are 24 lowercase hex characters: written as they stand, as %q would
	buf.body = append(buf.body[:0], `{"jsonrpc":"2.0","id":`...)
	buf.body = strconv.AppendInt(buf.body, id, 10)
	buf.body = append(buf.body, `,"method":"tools/call","params":{"name":"get_transfer","arguments":{"transfer_id":"`...)
	buf.body = append(buf.body, transfer...)
	buf.body = append(buf.body, `"}}}`...)
	resp, err := postMCP(hc, endpoint, key, session, json.RawMessage(buf.body))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		b := bytes.NewBuffer(buf.answer[:0])
		_, err := b.ReadFrom(resp.Body)
		resp.Body.Close()
		buf.answer = b.Bytes()
		if err != nil {
			return err
		}
		buf.prefix = append(buf.prefix[:0], `{"jsonrpc":"2.0","id":`...)
		buf.prefix = strconv.AppendInt(buf.prefix, id, 10)
		buf.prefix = append(buf.prefix, `,"result":{`...)
		if a := buf.answer; bytes.HasPrefix(a, buf.prefix) &&
			bytes.Contains(a, []byte(`"structuredContent":{`)) && !bytes.Contains(a, []byte(`"isError":true`)) {
			return nil
		}
		resp.Body = io.NopCloser(bytes.NewReader(buf.answer)) // read below, before buf is reused
	}
	raw, err := rpcResult(resp, id)
	if err != nil {
		return fmt.Errorf("tools/call get_transfer: %w", err)
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("tools/call get_transfer: %w", err)
	}
	if res.IsError || len(res.StructuredContent) == 0 {
		return fmt.Errorf("tools/call get_transfer: tool error %+v", res.Content)
	}
	return nil
}

// postMCP posts one JSON-RPC message to the endpoint, on session when one is given.
// A json.RawMessage is posted as it stands (json.Marshal would compact it again).
func postMCP(hc *http.Client, endpoint, key, session string, msg any) (*http.Response, error) {
	b, ok := msg.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(msg); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", mcpProtocol)
	}
	return hc.Do(req)
}

// rpcResult reads the answer to request id from resp, a JSON body or an SSE stream (whose
// events may carry other messages first), and closes it.
func rpcResult(resp *http.Response, id int64) (json.RawMessage, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	type message struct {
		ID     *int64          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	answer := func(data []byte) (json.RawMessage, bool, error) {
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, false, err
		}
		if m.ID == nil || *m.ID != id {
			return nil, false, nil
		}
		if m.Error != nil {
			return nil, true, fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
		}
		return m.Result, true, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		res, ok, err := answer(b)
		if err == nil && !ok {
			err = fmt.Errorf("the answer is not to request %d: %s", id, b)
		}
		return res, err
	}
	// an SSE stream: events of data lines, separated by blank lines
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
			continue
		}
		if len(data) == 0 {
			continue
		}
		res, ok, err := answer(data)
		if err != nil || ok {
			return res, err
		}
		data = data[:0]
	}
	if len(data) > 0 {
		if res, ok, err := answer(data); err != nil || ok {
			return res, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the event stream ended without the answer to request %d", id)
}
