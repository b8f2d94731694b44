package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver/mcpserver"
)

// bearer adds an Authorization header to every request of a caller's client.
type bearer struct {
	auth string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.auth != "" {
		r.Header.Set("Authorization", b.auth)
	}
	return b.next.RoundTrip(r)
}

// agent opens an MCP session with the Go SDK's client, from c's address with c's key.
func (c *caller) agent() *mcp.ClientSession {
	GinkgoHelper()
	hc := &http.Client{Transport: bearer{c.auth, c.hc.Transport}, Timeout: c.hc.Timeout}
	cl := mcp.NewClient(&mcp.Implementation{Name: "facade-suite", Version: "1"}, nil)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL() + MCPPath, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s
}

// outcome is what an interface answered: the HTTP status (for a tool, the one its _meta
// carries) and the body (for a tool, its structured content or {"error": text}).
type outcome struct {
	status int
	body   map[string]any
}

func (o outcome) String() string { return fmt.Sprintf("%d %v", o.status, o.body) }

func (o outcome) error() string { s, _ := o.body["error"].(string); return s }

// outputSchemas are the tools' output schemas, resolved once: every structured result is
// checked against its tool's (the Go SDK's client does not check them; other clients do).
var outputSchemas = map[string]*jsonschema.Resolved{}

func outputSchema(s *mcp.ClientSession, tool string) *jsonschema.Resolved {
	GinkgoHelper()
	if rs, ok := outputSchemas[tool]; ok {
		return rs
	}
	res, err := s.ListTools(ctx, nil)
	Expect(err).NotTo(HaveOccurred())
	for _, t := range res.Tools {
		data, err := json.Marshal(t.OutputSchema)
		Expect(err).NotTo(HaveOccurred())
		var schema jsonschema.Schema
		Expect(json.Unmarshal(data, &schema)).To(Succeed())
		rs, err := schema.Resolve(nil)
		Expect(err).NotTo(HaveOccurred(), "the output schema of %s", t.Name)
		outputSchemas[t.Name] = rs
	}
	return outputSchemas[tool]
}

// call calls a tool and reads its result as an outcome.
func call(s *mcp.ClientSession, tool string, args map[string]any) outcome {
	GinkgoHelper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	Expect(err).NotTo(HaveOccurred(), "a tool's failure is a tool error, never a protocol error")
	Expect(res.Content).To(HaveLen(1))
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		st, _ := res.Meta["status"].(float64)
		msg, _ := res.Meta["error"].(string)
		Expect(text).To(Equal(fmt.Sprintf("%d %s: %s", int(st), http.StatusText(int(st)), msg)))
		return outcome{status: int(st), body: map[string]any{"error": msg}}
	}
	Expect(res.StructuredContent).NotTo(BeNil(), "%s", text)
	data, err := json.Marshal(res.StructuredContent)
	Expect(err).NotTo(HaveOccurred())
	Expect(data).To(MatchJSON(text), "the text is the structured content")
	var instance any
	Expect(json.Unmarshal(data, &instance)).To(Succeed())
	Expect(outputSchema(s, tool).Validate(instance)).To(Succeed(), "%s answered %s", tool, text)
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	Expect(dec.Decode(&body)).To(Succeed())
	st, _ := res.Meta["status"].(float64)
	return outcome{status: int(st), body: body}
}

// viaREST is the outcome of the same operation through REST.
func viaREST(c *caller, method, path string, body any) outcome {
	GinkgoHelper()
	r := c.do(method, path, body)
	o := outcome{status: r.status}
	if len(r.body) > 0 {
		o.body = r.json()
	}
	return o
}

// rawMCP posts one JSON-RPC message to the endpoint as c and returns the answer.
func rawMCP(c *caller, session string, msg map[string]any, header ...string) *response {
	GinkgoHelper()
	b, err := json.Marshal(msg)
	Expect(err).NotTo(HaveOccurred())
	base := c.base
	if base == "" {
		base = srv.URL()
	}
	req, err := http.NewRequest(http.MethodPost, base+MCPPath, bytes.NewReader(b))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

var initialize = map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
	"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}}

var _ = Describe("the MCP tool server (spec 1, issue 26)", func() {
	It("answers a request without a usable key as REST does: 401 with the same text", func() {
		a := newAccount()
		for _, auth := range []string{"", "Bearer nope", "Bearer svc_live_nokey_secret"} {
			c := a.c.as(auth)
			m, r := rawMCP(c, "", initialize), c.get("/api/payouts/amount-limits")
			Expect(m.status).To(Equal(401), "%s", m)
			Expect(m.json()["error"]).To(Equal(r.json()["error"]))
			Expect(m.header.Get("WWW-Authenticate")).To(Equal(r.header.Get("WWW-Authenticate")))
		}
	})

	It("counts its bad credentials against the address's brute-force limit of REST", func() {
		c := newCaller("Bearer svc_live_nokey_secret")
		for i := 0; i < 5; i++ {
			Expect(rawMCP(c, "", initialize).status).To(Equal(401))
		}
		Expect(errorText(c.get("/api/payouts/amount-limits"), 429)).To(Equal(msgBlocked))
		good := newAccount()
		Expect(rawMCP(c.as(good.c.auth), "", initialize).status).To(Equal(429), "a good key from a blocked address")
	})

	It("lists one tool per operation with object input schemas, output schemas and annotations", func() {
		s := newAccount().c.agent()
		res, err := s.ListTools(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		byName := map[string]*mcp.Tool{}
		for _, t := range res.Tools {
			byName[t.Name] = t
			in := t.InputSchema.(map[string]any)
			Expect(in["type"]).To(Equal("object"), t.Name)
			Expect(t.OutputSchema).NotTo(BeNil(), t.Name)
			Expect(t.Description).NotTo(BeEmpty(), t.Name)
		}
		Expect(byName).To(HaveLen(len(srv.routes())))
		Expect(byName["delete_recipient"].Annotations.DestructiveHint).To(HaveValue(BeTrue()))
		Expect(byName["get_transfer"].Annotations.ReadOnlyHint).To(BeTrue())
		Expect(byName["create_transfer_v1"].Annotations.ReadOnlyHint).To(BeFalse())
		Expect(byName["create_transfer_v1"].Annotations.IdempotentHint).To(BeFalse())
		Expect(byName["confirm_transfer_v2"].Annotations.IdempotentHint).To(BeTrue())
		v1 := byName["create_transfer_v1"].InputSchema.(map[string]any)
		Expect(v1["required"]).To(ConsistOf("quote_id", "amount", "recipientId", "customer_uuid", "customer_email", "source_token", "source_network", "wallet_address"))
		Expect(v1["properties"]).To(HaveKeyWithValue("source_token", HaveKeyWithValue("enum", ConsistOf("usdc", "usdt"))))
		q := byName["get_quote"].InputSchema.(map[string]any)
		Expect(q["required"]).To(ConsistOf("sourceAmount", "targetCurrency"))
		Expect(q["properties"]).To(HaveKeyWithValue("sourceAmount", HaveKeyWithValue("type", "number")))
		// the output schemas are checked for real: a quote without its fields is not a quote
		Expect(outputSchema(s, "get_quote").Validate(map[string]any{"quoteId": "x"})).NotTo(Succeed())
	})

	// Every operation through both interfaces, with good and bad input: the same status and the
	// same error text.
	It("gives every operation the outcome REST gives, good input and bad", func() {
		p := newPayee()
		s := p.c.agent()
		type pair struct {
			tool         string
			args         map[string]any
			method, path string
			body         any
		}
		rid := p.rid
		qs := func() string { return p.quote("EUR", "25.00") }
		pairs := []pair{
			{"get_deposit_options", nil, "GET", "/api/payouts/deposit-options", nil},
			{"get_account_requirements", obj{"currency": "EUR"}, "GET", "/api/payouts/account-requirements?currency=EUR", nil},
			{"get_account_requirements", obj{"currency": "eur"}, "GET", "/api/payouts/account-requirements?currency=eur", nil},
			{"get_account_requirements", obj{"currency": "BGN"}, "GET", "/api/payouts/account-requirements?currency=BGN", nil},
			{"refresh_account_requirements", obj{"currency": "USD", "type": "aba", "details": obj{"legalType": "BUSINESS"}},
				"POST", "/api/payouts/account-requirements?currency=USD", obj{"type": "aba", "details": obj{"legalType": "BUSINESS"}}},
			{"refresh_account_requirements", obj{"currency": "USD", "details": obj{}}, "POST", "/api/payouts/account-requirements?currency=USD", obj{"details": obj{}}},
			{"list_recipients", nil, "GET", "/api/payouts/recipients", nil},
			{"get_recipient", obj{"id": rid}, "GET", fmt.Sprintf("/api/payouts/recipients/%d", rid), nil},
			{"get_recipient", obj{"id": "abc"}, "GET", "/api/payouts/recipients/abc", nil},
			{"get_recipient", obj{"id": 99999999}, "GET", "/api/payouts/recipients/99999999", nil},
			{"create_recipient", ibanBody("Ada Lovelace"), "POST", "/api/payouts/recipients", ibanBody("Ada Lovelace")},
			{"create_recipient", abaBody("Ada Lovelace", "USA"), "POST", "/api/payouts/recipients", abaBody("Ada Lovelace", "USA")},
			{"create_recipient", obj{"currency": "EUR", "type": "iban", "accountHolderName": "Ada", "details": obj{"legalType": "PRIVATE", "iban": "XX"}},
				"POST", "/api/payouts/recipients", obj{"currency": "EUR", "type": "iban", "accountHolderName": "Ada", "details": obj{"legalType": "PRIVATE", "iban": "XX"}}},
			{"create_recipient", obj{"currency": "EUR", "type": "iban", "accountHolderName": "Ada", "details": obj{}, "surprise": 1},
				"POST", "/api/payouts/recipients", obj{"currency": "EUR", "type": "iban", "accountHolderName": "Ada", "details": obj{}, "surprise": 1}},
			{"update_recipient", obj{"id": rid}, "PATCH", fmt.Sprintf("/api/payouts/recipients/%d", rid), obj{}},
			{"delete_recipient", obj{"id": "x"}, "DELETE", "/api/payouts/recipients/x", nil},
			{"get_quote", obj{"targetCurrency": "EUR", "sourceAmount": 25}, "GET", quotePath("EUR", "25"), nil},
			{"get_quote", obj{"targetCurrency": "EUR", "sourceAmount": 0}, "GET", quotePath("EUR", "0"), nil},
			{"get_quote", obj{"targetCurrency": "BGN", "sourceAmount": 25}, "GET", quotePath("BGN", "25"), nil},
			{"get_quote", obj{"targetCurrency": "EUR"}, "GET", "/api/payouts/quote?targetCurrency=EUR", nil},
			{"get_quote", obj{"targetCurrency": "EUR", "sourceAmount": "ten"}, "GET", quotePath("EUR", "ten"), nil},
			{"create_transfer_v1", v1Body(qs(), "26.00", rid), "POST", "/api/payouts/transfer", v1Body(qs(), "26.00", rid)},
			{"create_transfer_v1", v1Body("nope", "25.00", rid), "POST", "/api/payouts/transfer", v1Body("nope", "25.00", rid)},
			{"create_transfer_v1", obj{"amount": "25"}, "POST", "/api/payouts/transfer", obj{"amount": "25"}},
			{"create_transfer_v2", obj{"source_token": "usdt"}, "POST", "/api/payouts/transfer/v2", obj{"source_token": "usdt"}},
			{"confirm_transfer_v2", obj{"transfer_id": "x", "tx_hash": "0x12"}, "POST", "/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": "x", "tx_hash": "0x12"}},
			{"confirm_transfer_v2", obj{"transfer_id": "aaaaaaaaaaaaaaaaaaaaaaaa", "tx_hash": "0x" + strings.Repeat("ab", 32)},
				"POST", "/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": "aaaaaaaaaaaaaaaaaaaaaaaa", "tx_hash": "0x" + strings.Repeat("ab", 32)}},
			{"get_transfer", obj{"transfer_id": "aaaaaaaaaaaaaaaaaaaaaaaa"}, "GET", "/api/payouts/transfer/aaaaaaaaaaaaaaaaaaaaaaaa", nil},
			{"get_amount_limits", nil, "GET", "/api/payouts/amount-limits", nil},
			{"get_fee", obj{"amount": 100}, "GET", "/api/payouts/fee?amount=100", nil},
			{"get_fee", obj{}, "GET", "/api/payouts/fee", nil},
			{"get_fee", obj{"amount": 2000000}, "GET", "/api/payouts/fee?amount=2000000", nil},
		}
		for _, pr := range pairs {
			m, r := call(s, pr.tool, pr.args), viaREST(p.c, pr.method, pr.path, pr.body)
			Expect(m.status).To(Equal(r.status), "%s %v: MCP %s, REST %s", pr.tool, pr.args, m, r)
			Expect(m.error()).To(Equal(r.error()), "%s %v: MCP %s, REST %s", pr.tool, pr.args, m, r)
		}
	})

	It("creates a recipient and a v1 transfer, reads it back as a tool and as a resource, and deletes the recipient", func() {
		p := newPayee()
		s := p.c.agent()
		rc := call(s, "create_recipient", ibanBody("Grace Hopper"))
		Expect(rc.status).To(Equal(201), "%s", rc)
		rid, err := rc.body["id"].(json.Number).Int64()
		Expect(err).NotTo(HaveOccurred())
		up := call(s, "update_recipient", obj{"id": rid, "accountHolderName": "Grace B. Hopper"})
		Expect(up.status).To(Equal(200), "%s", up)
		rid, err = up.body["id"].(json.Number).Int64()
		Expect(err).NotTo(HaveOccurred())
		q := call(s, "get_quote", obj{"targetCurrency": "EUR", "sourceAmount": 25})
		Expect(q.status).To(Equal(200), "%s", q)
		t := call(s, "create_transfer_v1", v1Body(q.body["quoteId"].(string), "25.00", rid))
		Expect(t.status).To(Equal(200), "%s", t)
		tr := t.body["transfer"].(map[string]any)
		Expect(tr["status"]).To(Equal("ready_to_process"))
		id := tr["id"].(string)

		got := call(s, "get_transfer", obj{"transfer_id": id})
		Expect(got.status).To(Equal(200), "%s", got)
		Expect(got.body["transfer"]).To(HaveKeyWithValue("deposit_address", tr["deposit_address"]))
		res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "payout://transfers/" + id})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Contents).To(HaveLen(1))
		Expect(res.Contents[0].Text).To(MatchJSON(p.c.get("/api/payouts/transfer/" + id).body))
		_, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "payout://transfers/aaaaaaaaaaaaaaaaaaaaaaaa"})
		Expect(err).To(MatchError(ContainSubstring("not found")))
		doc, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.OpenAPIURI})
		Expect(err).NotTo(HaveOccurred())
		Expect(doc.Contents[0].Text).To(MatchJSON(p.c.get("/openapi.json").body))

		del := call(s, "delete_recipient", obj{"id": rid})
		Expect(del.status).To(Equal(200), "%s", del)
		Expect(del.body).To(HaveKeyWithValue("transfers_failed", json.Number("1")))
		again := call(s, "delete_recipient", obj{"id": rid})
		Expect(again.body).To(HaveKeyWithValue("transfers_failed", json.Number("0")))
	})

	It("creates and confirms a v2 transfer", func() {
		p := newPayee()
		s := p.c.agent()
		b := obj{"quote_id": p.quote("EUR", "25.00"), "amount": 25, "recipientId": p.rid, "customer_uuid": uuid.NewString(),
			"source_token": "usdc", "source_network": "base", "wallet_address": senderWallet}
		t := call(s, "create_transfer_v2", b)
		Expect(t.status).To(Equal(200), "%s", t)
		id := t.body["transfer_id"].(string)
		hash := "0x" + strings.Repeat("5c", 32)
		c := call(s, "confirm_transfer_v2", obj{"transfer_id": id, "tx_hash": hash})
		Expect(c.status).To(Equal(200), "%s", c)
		Expect(c.body).To(HaveKeyWithValue("status", "pending_match"))
		again := call(s, "confirm_transfer_v2", obj{"transfer_id": id, "tx_hash": "0x" + strings.Repeat("5d", 32)})
		Expect(again.status).To(Equal(409), "%s", again)
	})

	It("refuses another account's recipient with REST's 403", func() {
		owner, other := newPayee(), newAccount()
		s := other.c.agent()
		path := fmt.Sprintf("/api/payouts/recipients/%d", owner.rid)
		for _, tool := range []string{"get_recipient", "delete_recipient"} {
			m := call(s, tool, obj{"id": owner.rid})
			Expect(m.status).To(Equal(403), "%s", m)
			Expect(m.error()).To(Equal(errorText(other.c.get(path), 403)))
		}
		Expect(owner.c.get(path).json()).To(HaveKeyWithValue("active", true))
	})

	It("counts tool calls against the REST operation's per-key limit: the 21st quote of a mix is the one 429", func() {
		a := newAccount()
		s := a.c.agent()
		var statuses []int
		for i := 0; i < 21; i++ {
			if i%2 == 0 {
				statuses = append(statuses, call(s, "get_quote", obj{"targetCurrency": "EUR", "sourceAmount": 10}).status)
			} else {
				statuses = append(statuses, a.c.get(quotePath("EUR", "10")).status)
			}
		}
		Expect(statuses[:20]).To(HaveEach(200))
		Expect(statuses[20]).To(Equal(429))
		last := call(s, "get_quote", obj{"targetCurrency": "EUR", "sourceAmount": 10})
		Expect(last.error()).To(Equal(errorText(a.c.get(quotePath("EUR", "10")), 429)))
		// other budgets are untouched
		Expect(call(s, "get_amount_limits", nil).status).To(Equal(200))
	})

	It("binds a session to the key that opened it", func() {
		a, b := newAccount(), newAccount()
		r := rawMCP(a.c, "", initialize)
		Expect(r.status).To(Equal(200), "%s", r)
		session := r.header.Get("Mcp-Session-Id")
		Expect(session).NotTo(BeEmpty())
		list := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{}}
		Expect(rawMCP(a.c, session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}).status).To(Equal(202))
		Expect(rawMCP(a.c, session, list).status).To(Equal(200))
		// a valid key of another account, and a second key of the same account, are refused
		Expect(rawMCP(b.c.as(b.c.auth), session, list).status).To(Equal(403))
		second := issueKey(a.name)
		Eventually(func() int { return a.c.as("Bearer " + second.Full).get("/api/payouts/amount-limits").status }).Should(Equal(200))
		Expect(rawMCP(a.c.as("Bearer "+second.Full), session, list).status).To(Equal(403))
		Expect(rawMCP(a.c, session, list).status).To(Equal(200))
	})

	It("serves a session on every replica: another facade takes it with the key that opened it, and refuses another key", func() {
		a, b := newAccount(), newAccount()
		replica := openServer(baseCfg)
		r := rawMCP(a.c, "", initialize)
		Expect(r.status).To(Equal(200), "%s", r)
		session := r.header.Get("Mcp-Session-Id")
		Expect(session).NotTo(BeEmpty())
		Expect(rawMCP(a.c.on(replica), session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}).status).To(Equal(202))
		limits := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "get_amount_limits", "arguments": map[string]any{}}}
		// the replica reads the key from its own cache: it may take a moment to know it
		Eventually(func() int { return rawMCP(a.c.on(replica), session, limits).status }).Should(Equal(200))
		res, _ := rawMCP(a.c.on(replica), session, limits).json()["result"].(map[string]any)
		Expect(res).To(HaveKey("structuredContent"))
		Expect(res).NotTo(HaveKey("isError"))
		Eventually(func() int { return b.c.on(replica).get("/api/payouts/amount-limits").status }).Should(Equal(200))
		refused := rawMCP(b.c.on(replica), session, limits)
		Expect(refused.status).To(Equal(403), "%s", refused)
		Expect(refused.json()["error"]).To(Equal("the session belongs to another API key"))
	})

	It("refuses browser origins (DNS rebinding) and applies the account's IP allow-list", func() {
		a := newAccount()
		r := rawMCP(a.c, "", initialize, "Origin", "http://evil.example")
		Expect(r.status).To(Equal(403), "%s", r)
		Expect(r.json()["error"]).To(ContainSubstring("origin"))
		cfg := baseCfg
		cfg.MCPAllowedOrigins = []string{"https://console.example"}
		withOrigin := openServer(cfg)
		Expect(rawMCP(a.c.on(withOrigin), "", initialize, "Origin", "https://console.example").status).To(Equal(200))
		Expect(rawMCP(a.c.on(withOrigin), "", initialize, "Origin", "http://evil.example").status).To(Equal(403))
		fenced := newAccount(func(acct *payoutv1.PayoutAccount) { acct.Spec.AllowedIPs = []string{"10.0.0.0/8"} })
		m, rr := rawMCP(fenced.c, "", initialize), fenced.c.get("/api/payouts/amount-limits")
		Expect(m.status).To(Equal(403))
		Expect(m.json()["error"]).To(Equal(errorText(rr, 403)))
	})
})
