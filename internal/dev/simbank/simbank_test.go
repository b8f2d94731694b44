package simbank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	clocktesting "k8s.io/utils/clock/testing"
)

// These tests speak raw HTTP to the bank; the wise package tests the client against it.

const token = "sim-token"

func startBank(t testing.TB, o Options) *Server {
	t.Helper()
	o.Token = token
	if o.SettleAfter == 0 {
		o.SettleAfter = 200 * time.Millisecond
	}
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call sends body (a JSON text) and decodes the answer with json.Number, so that amounts are
// compared as the exact text the bank wrote.
func call(t testing.TB, s *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(data)) > 0 && data[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode, out
}

func mustCall(t testing.TB, s *Server, method, path, body string, want int) map[string]any {
	t.Helper()
	status, out := call(t, s, method, path, body)
	if status != want {
		t.Fatalf("%s %s = %d %v, want %d", method, path, status, out, want)
	}
	return out
}

func errorCode(out map[string]any) string {
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func postQuote(t testing.TB, s *Server, currency, target, rate string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"sourceCurrency":"USD","targetCurrency":%q,"targetAmount":%s,"rate":%s}`, currency, target, rate)
	return mustCall(t, s, "POST", "/v3/profiles/7/quotes", body, 200)
}

func postAccount(t testing.TB, s *Server, currency, name string) int64 {
	t.Helper()
	body := fmt.Sprintf(`{"profile":7,"accountHolderName":%q,"currency":%q,"type":"iban","details":{"legalType":"PRIVATE","iban":"DE89370400440532013000"}}`, name, currency)
	out := mustCall(t, s, "POST", "/v1/accounts", body, 200)
	id, err := out["id"].(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func transferBody(quoteID string, accountID int64, key, reference string) string {
	return fmt.Sprintf(`{"targetAccount":%d,"quoteUuid":%q,"customerTransactionId":%q,"details":{"reference":%q}}`, accountID, quoteID, key, reference)
}

// payout creates and funds one transfer and returns its id.
func payout(t testing.TB, s *Server, name, reference string) string {
	t.Helper()
	q := postQuote(t, s, "EUR", "86.12", "0.8612")
	a := postAccount(t, s, "EUR", name)
	tr := mustCall(t, s, "POST", "/v1/transfers", transferBody(q["id"].(string), a, uuid.NewString(), reference), 200)
	id := tr["id"].(json.Number).String()
	mustCall(t, s, "POST", "/v3/profiles/7/transfers/"+id+"/payments", `{"type":"BALANCE"}`, 201)
	return id
}

func TestQuoteArithmetic(t *testing.T) {
	s := startBank(t, Options{})
	cases := []struct {
		currency, amountField, amount, rate string
		wantSource, wantTarget              string
	}{
		{"EUR", "targetAmount", "86.12", "0.8612", "100.00", "86.12"},
		{"JPY", "targetAmount", "15634", "156.34", "100.00", "15634"},
		{"KWD", "targetAmount", "30.712", "0.30712", "100.00", "30.712"},
		{"EUR", "targetAmount", "10.00", "0.9", "11.12", "10.00"},          // 11.111… rounds up: the target is never short
		{"JPY", "targetAmount", "1", "156.34", "0.01", "1"},                // the least source that buys 1 yen
		{"KWD", "sourceAmount", "100", "0.30712", "100.00", "30.712"},      // a fixed source is converted exactly
		{"KWD", "sourceAmount", "0.01", "0.3071299", "0.01", "0.003"},      // and truncated to 3 decimals
		{"JPY", "sourceAmount", "1234.56", "156.789", "1234.56", "193565"}, // 193565.42... truncated
	}
	for _, tc := range cases {
		body := fmt.Sprintf(`{"sourceCurrency":"USD","targetCurrency":%q,%q:%s,"rate":%s}`, tc.currency, tc.amountField, tc.amount, tc.rate)
		out := mustCall(t, s, "POST", "/v3/profiles/7/quotes", body, 200)
		if got := out["sourceAmount"].(json.Number).String(); got != tc.wantSource {
			t.Errorf("%s %s %s at %s: sourceAmount %s, want %s", tc.currency, tc.amountField, tc.amount, tc.rate, got, tc.wantSource)
		}
		if got := out["targetAmount"].(json.Number).String(); got != tc.wantTarget {
			t.Errorf("%s %s %s at %s: targetAmount %s, want %s", tc.currency, tc.amountField, tc.amount, tc.rate, got, tc.wantTarget)
		}
		if got := out["rate"].(json.Number).String(); got != tc.rate {
			t.Errorf("rate %s, want the requested %s", got, tc.rate)
		}
	}
	// Without the rate extension the bank prices from the embedded snapshot.
	out := mustCall(t, s, "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":10}`, 200)
	if r, err := decimal.NewFromString(out["rate"].(json.Number).String()); err != nil || !r.IsPositive() {
		t.Errorf("snapshot rate = %v, %v", out["rate"], err)
	}
}

func TestRequestValidation(t *testing.T) {
	s := startBank(t, Options{})
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"yen have no decimals", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"JPY","targetAmount":1.5,"rate":150}`, 422, "quote.amount.invalid"},
		{"dinars have three", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"KWD","targetAmount":1.2345,"rate":0.3}`, 422, "quote.amount.invalid"},
		{"an amount is a JSON number", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":"10","rate":0.9}`, 400, "error.request.invalid"},
		{"no exponents", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":1e1,"rate":0.9}`, 400, "error.request.invalid"},
		{"one amount only", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":10,"sourceAmount":10,"rate":0.9}`, 422, "quote.amount.invalid"},
		{"unsupported currency", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"BGN","targetAmount":10,"rate":1.8}`, 422, "quote.currency.unsupported"},
		{"misspelt field", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmmount":10,"rate":0.9}`, 400, "error.request.invalid"},
		{"zero rate", "POST", "/v3/profiles/7/quotes", `{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":10,"rate":0}`, 422, "quote.rate.invalid"},
		{"account type", "POST", "/v1/accounts", `{"profile":7,"accountHolderName":"A B","currency":"EUR","type":"IBAN!","details":{}}`, 422, "account.type.invalid"},
		{"account details", "POST", "/v1/accounts", `{"profile":7,"accountHolderName":"A B","currency":"EUR","type":"iban","details":"x"}`, 422, "account.details.invalid"},
		{"key is a UUID", "POST", "/v1/transfers", transferBody("q", 1, "ref-1", "ref-1"), 422, "transfer.customerTransactionId.invalid"},
		{"unknown quote", "POST", "/v1/transfers", transferBody("nope", 1, uuid.NewString(), "r"), 422, "quote.not-found"},
		{"unknown transfer", "GET", "/v1/transfers/12345678", "", 404, "transfer.not-found"},
		{"unknown route", "GET", "/v2/transfers", "", 404, "error.route.not.supported"},
	}
	for _, tc := range cases {
		status, out := call(t, s, tc.method, tc.path, tc.body)
		if status != tc.status || errorCode(out) != tc.code {
			t.Errorf("%s: %d %s, want %d %s (%v)", tc.name, status, errorCode(out), tc.status, tc.code, out)
		}
	}

	req, _ := http.NewRequest("GET", s.URL()+"/v1/transfers", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", resp.StatusCode)
	}
	if n := len(s.Ledger()); n != 0 {
		t.Errorf("refused requests left %d ledger entries", n)
	}
}

func TestTransferIdempotentAndFundedOnce(t *testing.T) {
	s := startBank(t, Options{})
	key := uuid.NewString()
	a := postAccount(t, s, "EUR", "Ada Lovelace")
	q1 := postQuote(t, s, "EUR", "86.12", "0.8612")
	first := mustCall(t, s, "POST", "/v1/transfers", transferBody(q1["id"].(string), a, key, "ref-1"), 200)
	// The same key with the same or even another quote is the same transfer.
	again := mustCall(t, s, "POST", "/v1/transfers", transferBody(q1["id"].(string), a, key, "ref-1"), 200)
	q2 := postQuote(t, s, "EUR", "99.00", "0.8612")
	other := mustCall(t, s, "POST", "/v1/transfers", transferBody(q2["id"].(string), a, key, "ref-1"), 200)
	id := first["id"].(json.Number).String()
	if again["id"].(json.Number).String() != id || other["id"].(json.Number).String() != id {
		t.Fatalf("one key gave transfers %v, %v, %v", first["id"], again["id"], other["id"])
	}
	if first["status"] != StatusIncomingPaymentWaiting {
		t.Errorf("new transfer status %v", first["status"])
	}
	// A quote makes one transfer only.
	status, out := call(t, s, "POST", "/v1/transfers", transferBody(q1["id"].(string), a, uuid.NewString(), "ref-2"))
	if status != 422 || errorCode(out) != "quote.already-used" {
		t.Errorf("second transfer on one quote: %d %v", status, out)
	}

	fund := "/v3/profiles/7/transfers/" + id + "/payments"
	if status, out := call(t, s, "POST", "/v3/profiles/8/transfers/"+id+"/payments", `{"type":"BALANCE"}`); status != 403 {
		t.Errorf("funding from another profile: %d %v", status, out)
	}
	paid := mustCall(t, s, "POST", fund, `{"type":"BALANCE"}`, 201)
	if paid["status"] != "COMPLETED" {
		t.Errorf("funding answer %v", paid)
	}
	status, out = call(t, s, "POST", fund, `{"type":"BALANCE"}`)
	if status != 422 || errorCode(out) != "transfer.invalid-state" {
		t.Errorf("second funding: %d %v, want 422 transfer.invalid-state", status, out)
	}
	ledger := s.Ledger()
	if len(ledger) != 1 || ledger[0].Fundings != 1 || ledger[0].Reference != "ref-1" || ledger[0].CustomerTransactionID != key {
		t.Fatalf("ledger %+v", ledger)
	}
	if got := mustCall(t, s, "GET", "/v1/transfers/"+id, "", 200)["status"]; got != StatusProcessing {
		t.Errorf("funded transfer is %v, want processing", got)
	}
}

func TestSettlement(t *testing.T) {
	s := startBank(t, Options{SettleAfter: 100 * time.Millisecond})
	ok := payout(t, s, "Ada Lovelace", "ok")
	bad := payout(t, s, FailureName, "bad")
	lower := payout(t, s, "simulated failure", "lower") // not exactly the name: paid
	time.Sleep(150 * time.Millisecond)
	for id, want := range map[string]string{ok: StatusOutgoingPaymentSent, bad: StatusCancelled, lower: StatusOutgoingPaymentSent} {
		out := mustCall(t, s, "GET", "/v1/transfers/"+id, "", 200)
		if out["status"] != want {
			t.Errorf("transfer %s is %v, want %s", id, out["status"], want)
		}
	}
	for _, e := range s.Ledger() {
		var path []string
		for _, h := range e.History {
			path = append(path, h.Status)
		}
		switch e.Reference {
		case "bad":
			if e.Sent() || e.FailureReason == "" || e.CancelledAt == nil ||
				strings.Join(path, ",") != "incoming_payment_waiting,processing,bounced_back,cancelled" {
				t.Errorf("rejected payout: %+v", e)
			}
		default:
			if !e.Sent() || e.FailureReason != "" ||
				strings.Join(path, ",") != "incoming_payment_waiting,processing,funds_converted,outgoing_payment_sent" {
				t.Errorf("paid payout: %+v", e)
			}
		}
	}
	// The back office sees the same books over HTTP, amounts as numbers.
	out := mustCall(t, s, "GET", "/ledger?reference=bad", "", 200)
	entries := out["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("GET /ledger?reference=bad: %v", out)
	}
	e := entries[0].(map[string]any)
	if e["sourceAmount"].(json.Number).String() != "100.00" || e["targetAmount"].(json.Number).String() != "86.12" ||
		e["failureReason"] == "" || e["sentAt"] != nil {
		t.Errorf("ledger entry %v", e)
	}
}

func TestConcurrentTransfersOneKey(t *testing.T) {
	s := startBank(t, Options{})
	key := uuid.NewString()
	a := postAccount(t, s, "EUR", "Ada Lovelace")
	var wg sync.WaitGroup
	ids := make([]string, 50)
	for i := range ids {
		q := postQuote(t, s, "EUR", "86.12", "0.8612")["id"].(string)
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, out := call(t, s, "POST", "/v1/transfers", transferBody(q, a, key, "ref"))
			if status == 200 {
				ids[i] = out["id"].(json.Number).String()
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("50 creates with one key gave ids %v", ids)
		}
	}
	if n := len(s.Ledger()); n != 1 {
		t.Fatalf("%d ledger entries, want 1", n)
	}
}

func TestRestartKeepsLedgerAndKeys(t *testing.T) {
	dir := t.TempDir()
	s := startBank(t, Options{Dir: dir, SettleAfter: 300 * time.Millisecond})
	key := uuid.NewString()
	a := postAccount(t, s, "KWD", "Ada Lovelace")
	q := postQuote(t, s, "KWD", "30.712", "0.30712")["id"].(string)
	id := mustCall(t, s, "POST", "/v1/transfers", transferBody(q, a, key, "ref-k"), 200)["id"].(json.Number).String()
	mustCall(t, s, "POST", "/v3/profiles/7/transfers/"+id+"/payments", `{"type":"BALANCE"}`, 201)
	unfunded := payoutUnfunded(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := startBank(t, Options{Dir: dir, SettleAfter: 300 * time.Millisecond})
	// The key is still known, whatever the rest of the request says.
	q2 := postQuote(t, s2, "KWD", "1", "0.30712")["id"].(string)
	again := mustCall(t, s2, "POST", "/v1/transfers", transferBody(q2, a, key, "ref-k"), 200)
	if again["id"].(json.Number).String() != id {
		t.Fatalf("after restart the key gave transfer %v, want %s", again["id"], id)
	}
	if status, out := call(t, s2, "POST", "/v3/profiles/7/transfers/"+id+"/payments", `{"type":"BALANCE"}`); status != 422 {
		t.Errorf("funding again after restart: %d %v", status, out)
	}
	// A quote and an account from before the restart still make a transfer.
	mustCall(t, s2, "POST", "/v3/profiles/7/transfers/"+unfunded+"/payments", `{"type":"BALANCE"}`, 201)
	// Payouts funded before the restart keep settling.
	deadline := time.Now().Add(2 * time.Second)
	for {
		e, _ := s2.Find("ref-k")
		if e.Sent() {
			if e.Fundings != 1 || !e.TargetAmount.Equal(decimal.RequireFromString("30.712")) || !e.SourceAmount.Equal(decimal.RequireFromString("100")) {
				t.Errorf("entry after restart: %+v", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("payout funded before the restart did not settle: %+v", e)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(s2.Ledger()); n != 2 {
		t.Errorf("%d ledger entries after restart, want 2", n)
	}
}

// payoutUnfunded creates a transfer and leaves it waiting for funds.
func payoutUnfunded(t testing.TB, s *Server) string {
	q := postQuote(t, s, "EUR", "5", "0.9")["id"].(string)
	a := postAccount(t, s, "EUR", "Grace Hopper")
	return mustCall(t, s, "POST", "/v1/transfers", transferBody(q, a, uuid.NewString(), "ref-u"), 200)["id"].(json.Number).String()
}

func TestJournalDamage(t *testing.T) {
	dir := t.TempDir()
	s := startBank(t, Options{Dir: dir})
	payout(t, s, "Ada Lovelace", "ref-1")
	s.Close()
	path := filepath.Join(dir, JournalFile)

	// A write torn by a crash is dropped; the rest replays.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"transfer":{"reference":"to`)
	f.Close()
	s2 := startBank(t, Options{Dir: dir})
	if _, ok := s2.Find("ref-1"); !ok || len(s2.Ledger()) != 1 {
		t.Fatalf("after a torn write: %+v", s2.Ledger())
	}
	payout(t, s2, "Ada Lovelace", "ref-2")
	s2.Close()
	s3 := startBank(t, Options{Dir: dir})
	if n := len(s3.Ledger()); n != 2 {
		t.Fatalf("appending after a torn write: %d entries", n)
	}
	s3.Close()

	// Damage in the middle is an error: skipping a line could forget a payout.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("garbage\n"), data...), 0o644)
	if s4, err := Start(Options{Dir: dir}); err == nil {
		s4.Close()
		t.Fatal("a damaged journal was accepted")
	}
}

func TestOneBankPerDirectory(t *testing.T) {
	dir := t.TempDir()
	startBank(t, Options{Dir: dir})
	if s, err := Start(Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("two banks opened one directory")
	}
}

func TestFaults(t *testing.T) {
	s := startBank(t, Options{})
	a := postAccount(t, s, "EUR", "Ada Lovelace")
	q := postQuote(t, s, "EUR", "86.12", "0.8612")["id"].(string)

	// Drop: the transfer is made, the answer never comes.
	s.SetFaults(Faults{DropRate: 1, Ops: []string{OpTransfer}})
	req, _ := http.NewRequest("POST", s.URL()+"/v1/transfers", strings.NewReader(transferBody(q, a, uuid.NewString(), "dropped")))
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped call was answered %d", resp.StatusCode)
	}
	if _, ok := s.Find("dropped"); !ok {
		t.Fatal("the dropped call did not act")
	}
	// Reads are never dropped.
	mustCall(t, s, "GET", "/v1/transfers", "", 200)

	// Error: answered without acting.
	s.SetFaults(Faults{ErrorRate: 1})
	status, out := call(t, s, "POST", "/v1/accounts", `{"profile":7,"accountHolderName":"A B","currency":"EUR","type":"iban","details":{}}`)
	if status < 429 || errorCode(out) != "error.simulated" {
		t.Errorf("error fault: %d %v", status, out)
	}

	// Timeout: held, then acted on although the caller gave up.
	s.SetFaults(Faults{TimeoutRate: 1, Stall: 200 * time.Millisecond, Ops: []string{OpQuote}})
	c := &http.Client{Timeout: 50 * time.Millisecond}
	req, _ = http.NewRequest("POST", s.URL()+"/v3/profiles/7/quotes", strings.NewReader(`{"sourceCurrency":"USD","targetCurrency":"EUR","targetAmount":1,"rate":0.9}`))
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a stalled call was answered in time")
	}
	s.SetFaults(Faults{})
	if got := s.FaultCounts(); got != (FaultCounts{Errors: 1, Timeouts: 1, Drops: 1}) {
		t.Errorf("fault counts %+v", got)
	}
}

// list reads GET /v1/transfers?query and returns the ids and customerTransactionIds, in order.
func list(t testing.TB, s *Server, query string) (ids, keys []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+"/v1/transfers?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct {
		ID                    json.Number `json:"id"`
		CustomerTransactionID string      `json:"customerTransactionId"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/transfers?%s = %d", query, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		ids, keys = append(ids, o.ID.String()), append(keys, o.CustomerTransactionID)
	}
	return ids, keys
}

// TestReturnAfterSent: a payout to ReturnName is sent, then comes back from the recipient's bank
// ReturnAfter later, as Wise reports it (bounced_back, cancelled, funds_refunded), and stays
// recorded as sent and returned across a restart.
func TestReturnAfterSent(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(time.Now())
	o := Options{Dir: dir, SettleAfter: time.Second, ReturnAfter: time.Hour, Now: clk.Now}
	s := startBank(t, o)
	id := payout(t, s, ReturnName, "back")
	status := func() any { return mustCall(t, s, "GET", "/v1/transfers/"+id, "", 200)["status"] }
	clk.Step(time.Second)
	if got := status(); got != StatusOutgoingPaymentSent {
		t.Fatalf("settled: %v", got)
	}
	clk.Step(time.Hour - time.Millisecond)
	if e, _ := s.Find("back"); !e.Sent() || e.Returned() || e.FailureReason != "" {
		t.Fatalf("sent, not returned yet: %+v", e)
	}
	clk.Step(time.Millisecond)
	if got := status(); got != StatusBouncedBack {
		t.Fatalf("ReturnAfter after it was sent: %v", got)
	}
	clk.Step(time.Second)
	if got := status(); got != StatusFundsRefunded {
		t.Fatalf("then cancelled and refunded: %v", got)
	}
	e, _ := s.Find("back")
	var path []string
	for _, h := range e.History {
		path = append(path, h.Status)
	}
	if want := "incoming_payment_waiting,processing,funds_converted,outgoing_payment_sent,bounced_back,cancelled,funds_refunded"; strings.Join(path, ",") != want {
		t.Errorf("path %v, want %s", path, want)
	}
	if !e.Sent() || !e.Returned() || e.FailureReason == "" || e.ReturnedAt.Sub(*e.SentAt) != time.Hour {
		t.Errorf("returned payout: %+v", e)
	}
	out := mustCall(t, s, "GET", "/v1/transfers/"+id, "", 200)
	if !strings.Contains(out["failureReason"].(string), ReturnName) {
		t.Errorf("the transfer says why it came back: %v", out)
	}
	s.Close()
	s2 := startBank(t, o)
	if e, _ := s2.Find("back"); !e.Returned() || e.Status != StatusFundsRefunded {
		t.Errorf("after a restart: %+v", e)
	}
}

// TestLose: a bank that loses a transfer answers 404 for it, lists it no more, keeps it lost
// across a restart, and takes its idempotency key for a new transfer.
func TestLose(t *testing.T) {
	dir := t.TempDir()
	s := startBank(t, Options{Dir: dir})
	a := postAccount(t, s, "EUR", "Ada Lovelace")
	key := uuid.NewString()
	q := postQuote(t, s, "EUR", "86.12", "0.8612")["id"].(string)
	id := mustCall(t, s, "POST", "/v1/transfers", transferBody(q, a, key, "lost"), 200)["id"].(json.Number).String()
	kept := payout(t, s, "Ada Lovelace", "kept")
	if ok, err := s.Lose("lost"); !ok || err != nil {
		t.Fatalf("Lose = %v, %v", ok, err)
	}
	if ok, err := s.Lose("never"); ok || err != nil {
		t.Errorf("Lose of an unknown reference = %v, %v", ok, err)
	}
	if status, out := call(t, s, "GET", "/v1/transfers/"+id, ""); status != 404 || errorCode(out) != "transfer.not-found" {
		t.Errorf("GET a lost transfer: %d %v", status, out)
	}
	if ids, _ := list(t, s, "profile=7"); len(ids) != 1 || ids[0] != kept {
		t.Errorf("the list holds %v, want only %s", ids, kept)
	}
	s.Close()
	s2 := startBank(t, Options{Dir: dir})
	if _, ok := s2.Find("lost"); ok || len(s2.Ledger()) != 1 {
		t.Fatalf("after a restart the lost transfer is back: %+v", s2.Ledger())
	}
	q2 := postQuote(t, s2, "EUR", "86.12", "0.8612")["id"].(string)
	again := mustCall(t, s2, "POST", "/v1/transfers", transferBody(q2, a, key, "lost"), 200)["id"].(json.Number).String()
	if again == id {
		t.Errorf("the lost transfer's key gave it back")
	}
}

// TestListLikeWise: with IgnoreKeyFilter the list is Wise's: the customerTransactionId filter is
// ignored, pages are limit long from offset, newest first, and createdDateStart/End bound the
// creation time.
func TestListLikeWise(t *testing.T) {
	s := startBank(t, Options{IgnoreKeyFilter: true})
	var first string
	for i := range 120 {
		q := postQuote(t, s, "EUR", "1", "0.9")["id"].(string)
		a := postAccount(t, s, "EUR", "Ada Lovelace")
		key := uuid.NewString()
		mustCall(t, s, "POST", "/v1/transfers", transferBody(q, a, key, fmt.Sprint("ref-", i)), 200)
		if i == 0 {
			first = key
		}
	}
	ids, keys := list(t, s, "profile=7&limit=100&customerTransactionId="+first)
	if len(ids) != 100 || slices.Contains(keys, first) {
		t.Fatalf("the key filter is ignored: %d transfers, the oldest among them: %v", len(ids), slices.Contains(keys, first))
	}
	more, moreKeys := list(t, s, "profile=7&limit=100&offset=100")
	if len(more) != 20 || moreKeys[19] != first || slices.Contains(ids, more[0]) {
		t.Errorf("the second page: %d transfers, oldest last", len(more))
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if ids, _ := list(t, s, "profile=7&createdDateStart="+future); len(ids) != 0 {
		t.Errorf("createdDateStart in the future: %d transfers", len(ids))
	}
	past := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	if ids, _ := list(t, s, "profile=7&createdDateEnd="+past); len(ids) != 0 {
		t.Errorf("createdDateEnd in the past: %d transfers", len(ids))
	}
	if status, _ := call(t, s, "GET", "/v1/transfers?createdDateStart=yesterday", ""); status != 400 {
		t.Errorf("a bad date: %d", status)
	}
	// The default bank keeps the extension.
	s2 := startBank(t, Options{})
	payout(t, s2, "Ada Lovelace", "a")
	if ids, _ := list(t, s2, "customerTransactionId="+uuid.NewString()); len(ids) != 0 {
		t.Errorf("the key filter: %v", ids)
	}
}
