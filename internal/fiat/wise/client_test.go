package wise_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/secret"
)

// The client is tested against the simulated bank over loopback HTTP: a real server, a real
// journal, real connections that fail.

const (
	token   = "test-token"
	profile = 4242
	settle  = 200 * time.Millisecond
)

func startBank(t testing.TB, o simbank.Options) *simbank.Server {
	t.Helper()
	o.Token = token
	if o.SettleAfter == 0 {
		o.SettleAfter = settle
	}
	s, err := simbank.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newClient(t testing.TB, url string, mods ...func(*wise.Config)) *wise.Client {
	t.Helper()
	cfg := wise.DefaultConfig()
	cfg.BaseURL, cfg.ProfileID, cfg.Token = url, profile, secret.New(token)
	cfg.Timeout, cfg.RetryBackoff = 2*time.Second, 5*time.Millisecond
	for _, m := range mods {
		m(&cfg)
	}
	c, err := wise.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(ref, name, currency, target, rate string) fiat.PayoutRequest {
	return fiat.PayoutRequest{
		Reference: ref, SourceCurrency: "USD", TargetCurrency: currency,
		TargetAmount: decimal.RequireFromString(target), Rate: decimal.RequireFromString(rate),
		Recipient: fiat.Recipient{
			AccountHolderName: name, Currency: currency, Type: "iban", Country: "DE",
			Details: map[string]string{"legalType": "PRIVATE", "iban": "DE89370400440532013000", "address.country": "DE", "address.city": "Berlin"},
		},
	}
}

func eur(ref string) fiat.PayoutRequest {
	return request(ref, "Ada Lovelace", "EUR", "86.12", "0.8612")
}

// waitFor polls Get until the payout reaches a terminal state.
func waitFor(t testing.TB, c *wise.Client, id string, within time.Duration) *fiat.Payout {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p, err := c.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p.State.Terminal() || time.Now().After(deadline) {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// entries returns the bank's ledger entries with the reference.
func entries(s *simbank.Server, ref string) []simbank.Entry {
	var out []simbank.Entry
	for _, e := range s.Ledger() {
		if e.Reference == ref {
			out = append(out, e)
		}
	}
	return out
}

// paidOnce fails the test unless the bank holds exactly one transfer with the reference, funded
// exactly once.
func paidOnce(t testing.TB, s *simbank.Server, ref string) simbank.Entry {
	t.Helper()
	es := entries(s, ref)
	if len(es) != 1 {
		t.Fatalf("reference %s: %d ledger entries, want 1: %+v", ref, len(es), es)
	}
	if es[0].Fundings != 1 {
		t.Fatalf("reference %s funded %d times", ref, es[0].Fundings)
	}
	return es[0]
}

func TestCreateSettles(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	ctx := context.Background()
	p, err := c.Create(ctx, eur("tr-settles"))
	if err != nil {
		t.Fatal(err)
	}
	if p.State != fiat.StateAccepted || p.ProviderStatus != "processing" || p.Reference != "tr-settles" || p.ProviderID == "" {
		t.Fatalf("created payout %+v", p)
	}
	if !p.SourceAmount.Equal(decimal.RequireFromString("100")) || !p.TargetAmount.Equal(decimal.RequireFromString("86.12")) ||
		!p.Rate.Equal(decimal.RequireFromString("0.8612")) || p.SourceCurrency != "USD" || p.TargetCurrency != "EUR" {
		t.Errorf("amounts %+v", p)
	}
	if time.Since(p.Created) > time.Minute {
		t.Errorf("created %v", p.Created)
	}
	done := waitFor(t, c, p.ProviderID, settle+time.Second)
	if done.State != fiat.StateCompleted || done.ProviderStatus != "outgoing_payment_sent" || done.Message != "" {
		t.Fatalf("settled payout %+v", done)
	}
	e := paidOnce(t, s, "tr-settles")
	if !e.Sent() || e.RecipientName != "Ada Lovelace" || e.CustomerTransactionID != wise.CustomerTransactionID("tr-settles") {
		t.Errorf("ledger entry %+v", e)
	}
	if took := e.SentAt.Sub(*e.FundedAt); took > settle+50*time.Millisecond {
		t.Errorf("settled after %s, SettleAfter is %s", took, settle)
	}
}

func TestSimulatedFailureIsRejected(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	p, err := c.Create(context.Background(), request("tr-fails", simbank.FailureName, "EUR", "86.12", "0.8612"))
	if err != nil {
		t.Fatal(err)
	}
	done := waitFor(t, c, p.ProviderID, settle+time.Second)
	if done.State != fiat.StateRejected || done.Message == "" {
		t.Fatalf("payout to %q: %+v", simbank.FailureName, done)
	}
	if e := paidOnce(t, s, "tr-fails"); e.Sent() || e.FailureReason == "" {
		t.Errorf("rejected payout recorded as sent: %+v", e)
	}
}

func TestCreateIsIdempotent(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	ctx := context.Background()
	first, err := c.Create(ctx, eur("tr-repeat"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := c.Create(ctx, eur("tr-repeat"))
		if err != nil {
			t.Fatal(err)
		}
		if again.ProviderID != first.ProviderID {
			t.Fatalf("repeat made payout %s, first was %s", again.ProviderID, first.ProviderID)
		}
	}
	paidOnce(t, s, "tr-repeat")
	// Repeating after completion changes nothing either.
	waitFor(t, c, first.ProviderID, settle+time.Second)
	if again, err := c.Create(ctx, eur("tr-repeat")); err != nil || again.State != fiat.StateCompleted {
		t.Fatalf("repeat after completion: %+v, %v", again, err)
	}
	paidOnce(t, s, "tr-repeat")
}

func TestFind(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	ctx := context.Background()
	if p, err := c.Find(ctx, "tr-find", time.Time{}); p != nil || err != nil {
		t.Fatalf("Find before Create = %+v, %v; want nil, nil", p, err)
	}
	created, err := c.Create(ctx, eur("tr-find"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, eur("tr-other")); err != nil {
		t.Fatal(err)
	}
	found, err := c.Find(ctx, "tr-find", time.Time{})
	if err != nil || found == nil || found.ProviderID != created.ProviderID || found.Reference != "tr-find" {
		t.Fatalf("Find after Create = %+v, %v; want %s", found, err, created.ProviderID)
	}
	if p, err := c.Find(ctx, "tr-never", time.Time{}); p != nil || err != nil {
		t.Fatalf("Find of an unknown reference = %+v, %v", p, err)
	}
}

// TestFindPagesPastTheNewest100: against a list that ignores the customerTransactionId filter,
// as Wise's does, Find reads every page of the transfers created since notBefore: a payout with
// more than 100 newer ones is found (the first page alone missed it), a reference with none is
// nil only once the list ended, and the search stops at the window's start.
func TestFindPagesPastTheNewest100(t *testing.T) {
	s := startBank(t, simbank.Options{IgnoreKeyFilter: true})
	calls := 0
	counting := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/transfers" {
			calls++
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, s.URL(), func(cfg *wise.Config) { cfg.HTTPClient = counting })
	ctx := context.Background()
	start := time.Now()
	old, err := c.Create(ctx, eur("tr-oldest"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		if _, err := c.Create(ctx, eur(fmt.Sprint("tr-newer-", i))); err != nil {
			t.Fatal(err)
		}
	}
	calls = 0
	found, err := c.Find(ctx, "tr-oldest", start)
	if err != nil || found == nil || found.ProviderID != old.ProviderID {
		t.Fatalf("Find behind 150 newer transfers = %+v, %v; want %s", found, err, old.ProviderID)
	}
	if calls != 2 {
		t.Errorf("%d pages read, want 2 (151 transfers)", calls)
	}
	calls = 0
	if p, err := c.Find(ctx, "tr-never", start); p != nil || err != nil || calls != 2 {
		t.Errorf("Find of a reference the bank never saw = %+v, %v after %d pages; want nil after 2", p, err, calls)
	}
	// A window that starts after every transfer (plus the skew) is one short page.
	calls = 0
	if p, err := c.Find(ctx, "tr-oldest", time.Now().Add(2*time.Hour)); p != nil || err != nil || calls != 1 {
		t.Errorf("Find in a window after the payout = %+v, %v after %d pages; want nil after 1", p, err, calls)
	}
}

// TestFindNeverConcludesFromAPartialSearch: a list that never ends (a server that honours none
// of the filters and keeps answering full pages of recent transfers) is a Transient error after
// the last page allowed, never a "none".
func TestFindNeverConcludesFromAPartialSearch(t *testing.T) {
	page := make([]map[string]any, 100)
	for i := range page {
		page[i] = map[string]any{"id": i + 1, "status": "processing", "customerTransactionId": "00000000-0000-0000-0000-000000000000",
			"created": time.Now().UTC().Format("2006-01-02 15:04:05")}
	}
	body, _ := json.Marshal(page)
	// pages are told apart by their offset: a request the client retried (its answer was late
	// on a loaded machine) reads the same page again
	var mu sync.Mutex
	pages := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pages[r.URL.Query().Get("offset")] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	p, err := c.Find(context.Background(), "tr-somewhere", time.Now().Add(-time.Hour))
	if p != nil || !fiat.IsTransient(err) || !strings.Contains(fiat.MessageOf(err), "gave up") {
		t.Fatalf("Find over an endless list = %+v, %v; want a Transient error", p, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pages) != 1000 {
		t.Errorf("%d pages read, want 1000", len(pages))
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestReturnedAfterCompleted: a payout the recipient's bank returns after it was sent reads
// Completed, then Accepted while it bounces, then Rejected with the bank's reason.
func TestReturnedAfterCompleted(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	s := startBank(t, simbank.Options{SettleAfter: time.Second, ReturnAfter: time.Hour, Now: clk.Now})
	c := newClient(t, s.URL())
	if c.ReturnWindow() != wise.DefaultReturnWindow {
		t.Errorf("ReturnWindow() = %s, want the default %s", c.ReturnWindow(), wise.DefaultReturnWindow)
	}
	p, err := c.Create(context.Background(), request("tr-back", simbank.ReturnName, "EUR", "86.12", "0.8612"))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		after time.Duration
		want  fiat.State
	}{
		{time.Second, fiat.StateCompleted},
		{time.Hour, fiat.StateAccepted}, // bounced_back: the provider may send it again
		{time.Second, fiat.StateRejected},
	} {
		clk.Step(step.after)
		got, err := c.Get(context.Background(), p.ProviderID)
		if err != nil || got.State != step.want {
			t.Fatalf("%s on: %+v, %v; want %s", step.after, got, err, step.want)
		}
		if got.State == fiat.StateRejected && !strings.Contains(got.Message, "returned the payment after it was sent") {
			t.Errorf("the bank's reason: %q", got.Message)
		}
	}
}

func TestConcurrentCreateOneReference(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	var wg sync.WaitGroup
	ids := make([]string, 50)
	errs := make([]error, 50)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.Create(context.Background(), eur("tr-race"))
			if err == nil {
				ids[i] = p.ProviderID
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("call %d: %q, %v; call 0: %q", i, ids[i], errs[i], ids[0])
		}
	}
	paidOnce(t, s, "tr-race")
	if n := len(s.Ledger()); n != 1 {
		t.Fatalf("%d ledger entries", n)
	}
}

// A crash between the bank's action and its answer: every step of Create in turn acts, then
// loses its answer on every attempt, so Create fails. The next Create (a later reconcile) must
// find what the lost answers made and not pay again.
func TestDroppedAnswersNeverPayTwice(t *testing.T) {
	// no payout settles during the test: the answer to the second Create is the accepted payout
	// the lost answers made, however slowly a loaded machine runs the retries
	s := startBank(t, simbank.Options{SettleAfter: time.Hour})
	c := newClient(t, s.URL(), func(cfg *wise.Config) { cfg.Retries = 2 })
	ctx := context.Background()
	for _, op := range []string{simbank.OpQuote, simbank.OpAccount, simbank.OpTransfer, simbank.OpFund} {
		ref := "tr-drop-" + op
		s.SetFaults(simbank.Faults{DropRate: 1, Ops: []string{op}})
		_, err := c.Create(ctx, eur(ref))
		if !fiat.IsTransient(err) {
			t.Fatalf("%s: every answer lost, Create = %v; want a Transient error", op, err)
		}
		s.SetFaults(simbank.Faults{})
		p, err := c.Create(ctx, eur(ref))
		if err != nil {
			t.Fatalf("%s: Create after the faults: %v", op, err)
		}
		if p.State != fiat.StateAccepted {
			t.Errorf("%s: payout %+v", op, p)
		}
		paidOnce(t, s, ref)
	}
	if got := s.FaultCounts().Drops; got != 4*3 {
		t.Errorf("%d answers dropped, want 12 (4 steps × 3 attempts)", got)
	}
}

// Errors, timeouts (the bank acts after the client gave up) and dropped answers on a third of
// all calls, many payouts at once, each retried like a controller would: still one payout each.
func TestFaultsNeverPayTwice(t *testing.T) {
	s := startBank(t, simbank.Options{Faults: simbank.Faults{
		ErrorRate: 0.15, TimeoutRate: 0.05, DropRate: 0.15, Stall: 150 * time.Millisecond, Seed: 7,
	}})
	c := newClient(t, s.URL(), func(cfg *wise.Config) { cfg.Timeout, cfg.Retries = 75*time.Millisecond, 2 })
	refs := make([]string, 8)
	var wg sync.WaitGroup
	for i := range refs {
		refs[i] = fmt.Sprintf("tr-chaos-%d", i)
		for range 3 { // three replicas race on each transfer
			wg.Add(1)
			go func() {
				defer wg.Done()
				for attempt := 0; ; attempt++ {
					_, err := c.Create(context.Background(), eur(refs[i]))
					if err == nil {
						return
					}
					if !fiat.IsTransient(err) || attempt == 50 {
						t.Errorf("%s: %v", refs[i], err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	s.SetFaults(simbank.Faults{})
	counts := s.FaultCounts()
	if counts.Errors == 0 || counts.Timeouts == 0 || counts.Drops == 0 {
		t.Errorf("not every fault happened: %+v", counts)
	}
	for _, ref := range refs {
		e := paidOnce(t, s, ref)
		p := waitFor(t, c, fmt.Sprint(e.TransferID), settle+time.Second)
		if p.State != fiat.StateCompleted {
			t.Errorf("%s: %+v", ref, p)
		}
	}
	if n := len(s.Ledger()); n != len(refs) {
		t.Errorf("%d ledger entries for %d references", n, len(refs))
	}
	t.Logf("faults injected: %+v", counts)
}

// A bank that answers 5xx to every funding call: the transfer exists unfunded (Pending), and
// the next Create funds it once.
func TestUnfundedTransferIsFinishedByCreate(t *testing.T) {
	dir := t.TempDir()
	s := startBank(t, simbank.Options{Dir: dir, Faults: simbank.Faults{ErrorRate: 1, Ops: []string{simbank.OpFund}}})
	c := newClient(t, s.URL(), func(cfg *wise.Config) { cfg.Retries = 1 })
	ctx := context.Background()
	if _, err := c.Create(ctx, eur("tr-pending")); !fiat.IsTransient(err) {
		t.Fatalf("Create with funding down = %v; want a Transient error", err)
	}
	p, err := c.Find(ctx, "tr-pending", time.Time{})
	if err != nil || p == nil || p.State != fiat.StatePending {
		t.Fatalf("Find = %+v, %v; want a pending payout", p, err)
	}
	if e := entries(s, "tr-pending"); len(e) != 1 || e[0].Fundings != 0 {
		t.Fatalf("ledger %+v", e)
	}
	// The bank restarts (and its faults are gone); the payout is finished, not made again.
	s.Close()
	s2 := startBank(t, simbank.Options{Dir: dir})
	c2 := newClient(t, s2.URL())
	done, err := c2.Create(ctx, eur("tr-pending"))
	if err != nil || done.ProviderID != p.ProviderID || done.State != fiat.StateAccepted {
		t.Fatalf("Create after restart = %+v, %v; want payout %s accepted", done, err, p.ProviderID)
	}
	paidOnce(t, s2, "tr-pending")
}

func TestRestartKeepsLedgerAndIdempotency(t *testing.T) {
	dir := t.TempDir()
	s := startBank(t, simbank.Options{Dir: dir})
	ctx := context.Background()
	first, err := newClient(t, s.URL()).Create(ctx, request("tr-restart", "Ada Lovelace", "JPY", "15634", "156.34"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := startBank(t, simbank.Options{Dir: dir})
	c := newClient(t, s2.URL())
	found, err := c.Find(ctx, "tr-restart", time.Time{})
	if err != nil || found == nil || found.ProviderID != first.ProviderID {
		t.Fatalf("Find after restart = %+v, %v; want %s", found, err, first.ProviderID)
	}
	again, err := c.Create(ctx, request("tr-restart", "Ada Lovelace", "JPY", "15634", "156.34"))
	if err != nil || again.ProviderID != first.ProviderID {
		t.Fatalf("Create after restart = %+v, %v; want %s", again, err, first.ProviderID)
	}
	if done := waitFor(t, c, first.ProviderID, settle+time.Second); done.State != fiat.StateCompleted {
		t.Fatalf("after restart: %+v", done)
	}
	paidOnce(t, s2, "tr-restart")
}

func TestDecimalExactness(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	cases := []struct {
		currency, target, rate, source string
	}{
		{"JPY", "15634", "156.34", "100.00"},   // no decimals
		{"KWD", "30.712", "0.30712", "100.00"}, // three
		{"EUR", "86.12", "0.8612", "100.00"},   // two
		{"EUR", "10.00", "0.9", "11.12"},       // 11.111… rounds up: the recipient is never short
		{"KWD", "0.001", "0.30712", "0.01"},    // the least amount there is
		{"VND", "26312345", "26312.345", "1000.00"},
		{"EUR", "999999.99", "0.86123456789", "1161123.85"}, // 1161123.8416… up
	}
	for i, tc := range cases {
		ref := fmt.Sprintf("tr-exact-%d", i)
		p, err := c.Create(context.Background(), request(ref, "Ada Lovelace", tc.currency, tc.target, tc.rate))
		if err != nil {
			t.Fatalf("%s %s: %v", tc.target, tc.currency, err)
		}
		want := decimal.RequireFromString(tc.source)
		if !p.SourceAmount.Equal(want) || !p.TargetAmount.Equal(decimal.RequireFromString(tc.target)) || !p.Rate.Equal(decimal.RequireFromString(tc.rate)) {
			t.Errorf("%s %s at %s: source %s target %s rate %s; want source %s", tc.target, tc.currency, tc.rate, p.SourceAmount, p.TargetAmount, p.Rate, tc.source)
		}
		e := paidOnce(t, s, ref)
		if !e.SourceAmount.Equal(want) || !e.TargetAmount.Equal(decimal.RequireFromString(tc.target)) || e.TargetCurrency != tc.currency {
			t.Errorf("ledger %+v", e)
		}
		// The source converts to at least the target, and one cent less would not.
		rate := decimal.RequireFromString(tc.rate)
		if e.SourceAmount.Mul(rate).LessThan(e.TargetAmount) || e.SourceAmount.Sub(decimal.New(1, -2)).Mul(rate).GreaterThanOrEqual(e.TargetAmount) {
			t.Errorf("%s %s: source %s is not the least amount that pays the target", tc.target, tc.currency, e.SourceAmount)
		}
	}
}

func TestPermanentErrors(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	ctx := context.Background()
	bad := map[string]fiat.PayoutRequest{
		"yen decimals":     request("tr-p1", "Ada Lovelace", "JPY", "1.5", "150"),
		"kwd decimals":     request("tr-p2", "Ada Lovelace", "KWD", "1.2345", "0.3"),
		"no rate":          request("tr-p3", "Ada Lovelace", "EUR", "10", "0"),
		"bad account type": func() fiat.PayoutRequest { r := eur("tr-p4"); r.Recipient.Type = "IBAN!"; return r }(),
		"clashing details": func() fiat.PayoutRequest { r := eur("tr-p5"); r.Recipient.Details["address"] = "x"; return r }(),
		"no reference":     eur(""),
	}
	for name, req := range bad {
		p, err := c.Create(ctx, req)
		if !fiat.IsPermanent(err) || p != nil || fiat.MessageOf(err) == "" {
			t.Errorf("%s: Create = %+v, %v; want a Permanent error", name, p, err)
		}
	}
	if n := len(s.Ledger()); n != 0 {
		t.Errorf("refused payouts left %d ledger entries", n)
	}
}

func TestTransientErrors(t *testing.T) {
	s := startBank(t, simbank.Options{})
	ctx := context.Background()

	// Every call answered 5xx or 429: retried, then Transient.
	s.SetFaults(simbank.Faults{ErrorRate: 1})
	_, err := newClient(t, s.URL(), func(c *wise.Config) { c.Retries = 2 }).Create(ctx, eur("tr-t1"))
	var fe *fiat.Error
	if !errors.As(err, &fe) || fe.Kind != fiat.Transient || fe.StatusCode < 429 {
		t.Fatalf("5xx: %v", err)
	}
	if got := s.FaultCounts().Errors; got != 3 {
		t.Errorf("%d calls for one operation with 2 retries, want 3", got)
	}
	s.SetFaults(simbank.Faults{})

	// Refused credentials: Transient (an operator fixes them; no transfer is at fault), and not
	// repeated within the operation.
	wrong := newClient(t, s.URL(), func(c *wise.Config) { c.Token = secret.New("wrong") })
	if _, err := wrong.Create(ctx, eur("tr-t2")); !errors.As(err, &fe) || fe.Kind != fiat.Transient || fe.StatusCode != 401 {
		t.Errorf("401: %v", err)
	}

	// Nobody listening.
	url := s.URL()
	s.Close()
	_, err = newClient(t, url, func(c *wise.Config) { c.Retries = 1 }).Find(ctx, "tr-t3", time.Time{})
	if !fiat.IsTransient(err) {
		t.Errorf("connection refused: %v", err)
	}

	// A caller's deadline ends the retries.
	s2 := startBank(t, simbank.Options{Faults: simbank.Faults{TimeoutRate: 1, Stall: time.Second}})
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = newClient(t, s2.URL(), func(c *wise.Config) { c.Retries = 5 }).Find(dctx, "tr-t4", time.Time{})
	if !fiat.IsTransient(err) || time.Since(start) > 500*time.Millisecond {
		t.Errorf("deadline: %v after %s", err, time.Since(start))
	}
}

func TestInconsistent(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL())
	ctx := context.Background()
	first, err := c.Create(ctx, eur("tr-twice"))
	if err != nil {
		t.Fatal(err)
	}
	// The same reference for another payout is a bug of the caller: reported, never paid.
	_, err = c.Create(ctx, request("tr-twice", "Ada Lovelace", "EUR", "99.00", "0.8612"))
	var fe *fiat.Error
	if !errors.As(err, &fe) || fe.Kind != fiat.Inconsistent || fe.Payout == nil || fe.Payout.ProviderID != first.ProviderID {
		t.Fatalf("another payout under one reference: %v", err)
	}
	paidOnce(t, s, "tr-twice")
	// An id the provider never gave.
	if _, err := c.Get(ctx, "99999999999"); fiat.KindOf(err) != fiat.Inconsistent {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := c.Get(ctx, "not-an-id"); fiat.KindOf(err) != fiat.Inconsistent {
		t.Errorf("malformed id: %v", err)
	}
}

func TestOmitRate(t *testing.T) {
	s := startBank(t, simbank.Options{})
	c := newClient(t, s.URL(), func(c *wise.Config) { c.OmitRate = true })
	p, err := c.Create(context.Background(), request("tr-own-rate", "Ada Lovelace", "EUR", "50", "1"))
	if err != nil {
		t.Fatal(err)
	}
	// The bank priced from its own rates: the target is fixed, the rate and source are the bank's.
	if p.Rate.Equal(decimal.NewFromInt(1)) || !p.TargetAmount.Equal(decimal.NewFromInt(50)) {
		t.Errorf("payout %+v", p)
	}
}

func BenchmarkCreate(b *testing.B) { benchmarkCreate(b, simbank.Options{}) }

// BenchmarkCreateJournaled: the same with the bank writing its journal to disk.
func BenchmarkCreateJournaled(b *testing.B) { benchmarkCreate(b, simbank.Options{Dir: b.TempDir()}) }

func benchmarkCreate(b *testing.B, opts simbank.Options) {
	s := startBank(b, opts)
	c := newClient(b, s.URL())
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Create(ctx, eur(fmt.Sprintf("tr-bench-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := startBank(b, simbank.Options{})
	c := newClient(b, s.URL())
	ctx := context.Background()
	p, err := c.Create(ctx, eur("tr-bench-get"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Get(ctx, p.ProviderID); err != nil {
			b.Fatal(err)
		}
	}
}
