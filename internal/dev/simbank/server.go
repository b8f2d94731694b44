package simbank

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stablepay/payout-operator/internal/pricing"
)

// Options configure a simulated bank.
type Options struct {
	// Addr is the TCP address to listen on; default "127.0.0.1:0" (a free loopback port).
	Addr string
	// Dir keeps the journal (JournalFile), so that a restart keeps the ledger and recognises
	// repeated references; empty keeps everything in memory.
	Dir string
	// SettleAfter is how long a funded payout takes to reach outgoing_payment_sent (or
	// cancelled); default 2 s.
	SettleAfter time.Duration
	// ReturnAfter is how long after it was sent a payout to ReturnName comes back
	// (bounced_back); default DefaultReturnAfter.
	ReturnAfter time.Duration
	// IgnoreKeyFilter serves GET /v1/transfers as Wise does, without the customerTransactionId
	// extension: a client looking for one transfer must page through the list.
	IgnoreKeyFilter bool
	// Token, when set, is the only bearer token the API accepts; empty accepts any non-empty
	// bearer token.
	Token string
	// QuoteTTL is how long a quote can be used; default 30 min.
	QuoteTTL time.Duration
	// Rates price quotes that do not carry the rate extension; default the embedded snapshot.
	Rates pricing.RateSource
	// Faults are injected from the start; see also SetFaults.
	Faults Faults
	// Logf reports internal failures (a journal write); default log.Printf.
	Logf func(format string, args ...any)
	// Now is the bank's clock; default time.Now. A test moves a clock of its own on instead of
	// waiting for a payout to settle or come back.
	Now func() time.Time
}

// DefaultSettleAfter is the settlement time of a funded payout unless Options say otherwise.
const DefaultSettleAfter = 2 * time.Second

// DefaultReturnAfter is how long a payout to ReturnName stays sent before it comes back, unless
// Options say otherwise.
const DefaultReturnAfter = 30 * time.Second

// Server is a running simulated bank.
type Server struct {
	bank    *bank
	faults  *injector
	token   string
	ln      net.Listener
	srv     *http.Server
	closing chan struct{}
	done    chan struct{}
	once    sync.Once
	err     error

	connMu sync.Mutex
	fresh  map[net.Conn]bool // connections that have not sent a request yet
}

// Start opens the journal (when Options.Dir is set), replays it, listens on Options.Addr and
// serves the bank's API until Close. Payouts funded before a restart keep settling.
func Start(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.SettleAfter <= 0 {
		o.SettleAfter = DefaultSettleAfter
	}
	if o.QuoteTTL <= 0 {
		o.QuoteTTL = 30 * time.Minute
	}
	if o.ReturnAfter <= 0 {
		o.ReturnAfter = DefaultReturnAfter
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rates == nil {
		snap, err := pricing.NewSnapshot()
		if err != nil {
			return nil, fmt.Errorf("simbank: rates: %w", err)
		}
		o.Rates = snap
	}
	b := newBank()
	b.settle, b.returnAfter, b.quoteTTL, b.rates, b.now, b.logf = o.SettleAfter, o.ReturnAfter, o.QuoteTTL, o.Rates, o.Now, o.Logf
	b.keyFilter = !o.IgnoreKeyFilter
	if o.Dir != "" {
		j, err := openJournal(o.Dir, b.apply)
		if err != nil {
			return nil, err
		}
		b.journal = j
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		if b.journal != nil {
			b.journal.close()
		}
		return nil, fmt.Errorf("simbank: listen: %w", err)
	}
	s := &Server{bank: b, token: o.Token, ln: ln, closing: make(chan struct{}), done: make(chan struct{}), fresh: map[net.Conn]bool{}}
	s.faults = &injector{closing: s.closing}
	s.faults.set(o.Faults)
	s.srv = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, ConnState: s.track}
	go func() { _ = s.srv.Serve(ln) }()
	go s.settle(o.SettleAfter)
	return s, nil
}

// settle advances funded payouts in the background, so that the ledger shows them settled even
// when nobody asks; reads advance them too, so a caller never sees a stale status.
func (s *Server) settle(after time.Duration) {
	defer close(s.done)
	tick := min(max(after/8, 10*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			s.bank.advance()
		}
	}
}

// URL is the base URL of the bank's API, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Ledger returns every transfer the bank holds, oldest first.
func (s *Server) Ledger() []Entry { return s.bank.ledger() }

// Find returns the ledger entry with the payment reference, if any; when several transfers
// carry it (which the service never causes), the first.
func (s *Server) Find(reference string) (Entry, bool) {
	for _, e := range s.Ledger() {
		if e.Reference == reference {
			return e, true
		}
	}
	return Entry{}, false
}

// Lose makes the bank forget the transfer with the payment reference, as a provider that lost a
// payout it had accepted: GET /v1/transfers/{id} answers 404, the list and the ledger no longer
// hold it, and its customerTransactionId is free again (a client that created it anew would pay
// twice). It reports whether the bank held such a transfer.
func (s *Server) Lose(reference string) (bool, error) {
	ok, aerr := s.bank.lose(reference)
	if aerr != nil {
		return false, aerr
	}
	return ok, nil
}

// SetFaults replaces the injected faults; the zero Faults turns them off.
func (s *Server) SetFaults(f Faults) { s.faults.set(f) }

// FaultCounts reports the faults injected so far.
func (s *Server) FaultCounts() FaultCounts { return s.faults.snapshot() }

// track remembers connections that have not sent a request yet. Shutdown counts such a
// connection as busy for its first 5 seconds; Close closes them instead of waiting.
func (s *Server) track(c net.Conn, state http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if state == http.StateNew {
		s.fresh[c] = true
	} else {
		delete(s.fresh, c)
	}
}

// Close stops serving (letting calls in progress finish, for up to 5 s), stops settlement and
// closes the journal. It is safe to call more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closing)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped := make(chan error, 1)
		go func() { stopped <- s.srv.Shutdown(ctx) }()
		var err error
		for wait := true; wait; {
			select {
			case err = <-stopped:
				wait = false
			case <-time.After(5 * time.Millisecond):
				s.connMu.Lock()
				for c := range s.fresh {
					_ = c.Close()
				}
				s.connMu.Unlock()
			}
		}
		<-s.done
		if s.bank.journal != nil {
			s.bank.mu.Lock()
			err = errors.Join(err, s.bank.journal.close())
			s.bank.journal = nil
			s.bank.mu.Unlock()
		}
		s.err = err
	})
	return s.err
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern, op string, mutating bool, h http.HandlerFunc) {
		mux.Handle(pattern, s.authenticate(s.faults.wrap(op, mutating, h)))
	}
	api("POST /v3/profiles/{profileId}/quotes", OpQuote, true, s.handleQuoteCreate)
	api("POST /v1/accounts", OpAccount, true, s.handleAccountCreate)
	api("POST /v1/transfers", OpTransfer, true, s.handleTransferCreate)
	api("GET /v1/transfers", OpList, false, s.handleTransferList)
	api("GET /v1/transfers/{transferId}", OpGet, false, s.handleTransferGet)
	api("POST /v3/profiles/{profileId}/transfers/{transferId}/payments", OpFund, true, s.handleTransferFund)
	mux.HandleFunc("GET /ledger", s.handleLedger)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "error.route.not.supported", "%s %s is not a route of the simulated bank", r.Method, r.URL.Path))
	})
	return mux
}

// authenticate requires "Authorization: Bearer <token>".
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || got == "" || (s.token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1) {
			writeError(w, errorf(http.StatusUnauthorized, "error.unauthorized", "a valid bearer token is required"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func pathID(r *http.Request, name string) (int64, *apiError) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errorf(http.StatusNotFound, "error.route.not.supported", "%s %q is not an id", name, r.PathValue(name))
	}
	return id, nil
}

// handleQuoteCreate serves POST /v3/profiles/{profileId}/quotes.
func (s *Server) handleQuoteCreate(w http.ResponseWriter, r *http.Request) {
	profile, aerr := pathID(r, "profileId")
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var req quoteRequest
	if aerr := decode(r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	q, aerr := s.bank.createQuote(r.Context(), profile, req)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, quoteResponse{
		ID: q.ID, Profile: q.Profile,
		SourceCurrency: q.SourceCurrency, TargetCurrency: q.TargetCurrency,
		SourceAmount: fixed(q.SourceAmount, minor(q.SourceCurrency)), TargetAmount: fixed(q.TargetAmount, minor(q.TargetCurrency)),
		Rate: plain(q.Rate), RateType: "FIXED", PayOut: "BANK_TRANSFER", Status: "PENDING",
		CreatedTime: q.Created.UTC().Format(time.RFC3339), ExpirationTime: q.Expires.UTC().Format(time.RFC3339),
	})
}

type quoteResponse struct {
	ID             string     `json:"id"`
	Profile        int64      `json:"profile"`
	SourceCurrency string     `json:"sourceCurrency"`
	TargetCurrency string     `json:"targetCurrency"`
	SourceAmount   jsonNumber `json:"sourceAmount"`
	TargetAmount   jsonNumber `json:"targetAmount"`
	Rate           jsonNumber `json:"rate"`
	RateType       string     `json:"rateType"`
	PayOut         string     `json:"payOut"`
	Status         string     `json:"status"`
	CreatedTime    string     `json:"createdTime"`
	ExpirationTime string     `json:"expirationTime"`
}

// handleAccountCreate serves POST /v1/accounts.
func (s *Server) handleAccountCreate(w http.ResponseWriter, r *http.Request) {
	var req accountRequest
	if aerr := decode(r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	a, aerr := s.bank.createAccount(req)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, accountResponse{
		ID: a.ID, Profile: a.Profile, AccountHolderName: a.AccountHolderName, Currency: a.Currency,
		Country: a.Country, Type: a.Type, Details: a.Details, Active: true,
	})
}

type accountResponse struct {
	ID                int64  `json:"id"`
	Profile           int64  `json:"profile"`
	AccountHolderName string `json:"accountHolderName"`
	Currency          string `json:"currency"`
	Country           string `json:"country,omitempty"`
	Type              string `json:"type"`
	Details           any    `json:"details"`
	Active            bool   `json:"active"`
}

// handleTransferCreate serves POST /v1/transfers. A repeated customerTransactionId answers the
// transfer it made the first time, with the same status code.
func (s *Server) handleTransferCreate(w http.ResponseWriter, r *http.Request) {
	var req transferRequest
	if aerr := decode(r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	e, aerr := s.bank.createTransfer(req)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, transferJSON(e))
}

// handleTransferFund serves POST /v3/profiles/{profileId}/transfers/{transferId}/payments.
// Funding a transfer that is no longer waiting for funds answers 422 transfer.invalid-state,
// as Wise does; it never debits twice.
func (s *Server) handleTransferFund(w http.ResponseWriter, r *http.Request) {
	profile, aerr := pathID(r, "profileId")
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	id, aerr := pathID(r, "transferId")
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var req struct {
		Type             string `json:"type"`
		PartnerReference string `json:"partnerReference"`
	}
	if aerr := decode(r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if _, aerr := s.bank.fund(profile, id, req.Type); aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		Type      string  `json:"type"`
		Status    string  `json:"status"`
		ErrorCode *string `json:"errorCode"`
	}{Type: req.Type, Status: "COMPLETED"})
}

// handleTransferGet serves GET /v1/transfers/{transferId}.
func (s *Server) handleTransferGet(w http.ResponseWriter, r *http.Request) {
	id, aerr := pathID(r, "transferId")
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	e, ok := s.bank.transfer(id)
	if !ok {
		writeError(w, errorf(http.StatusNotFound, "transfer.not-found", "no transfer %d", id))
		return
	}
	writeJSON(w, http.StatusOK, transferJSON(e))
}

// handleTransferList serves GET /v1/transfers?profile=&createdDateStart=&createdDateEnd=
// &offset=&limit=, newest first, and the simulated bank's extension customerTransactionId=,
// which keeps only the transfer made under that idempotency key (Wise has no lookup by it; with
// Options.IgnoreKeyFilter the bank ignores it too). The dates are ISO 8601 times (or dates).
func (s *Server) handleTransferList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	intParam := func(name string, def, max int64) (int64, *apiError) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > max {
			return 0, errorf(http.StatusBadRequest, "error.request.invalid", "%s must be an integer from 0 to %d", name, max)
		}
		return n, nil
	}
	profile, aerr := intParam("profile", 0, 1<<53)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	offset, aerr := intParam("offset", 0, 1<<31)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	limit, aerr := intParam("limit", 100, 1000)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	lq := listQuery{profile: profile}
	if s.bank.keyFilter {
		lq.key = q.Get("customerTransactionId")
	}
	for name, at := range map[string]*time.Time{"createdDateStart": &lq.since, "createdDateEnd": &lq.until} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, v); err != nil {
				writeError(w, errorf(http.StatusBadRequest, "error.request.invalid", "%s must be an ISO 8601 time, not %q", name, v))
				return
			}
		}
		*at = t
	}
	entries := s.bank.list(lq, int(offset), int(limit))
	out := make([]transferResponse, 0, len(entries))
	for i := range entries {
		out = append(out, transferJSON(&entries[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleLedger serves GET /ledger: the simulated bank's books, oldest first. It is the bank's
// back office, not part of the Wise-shaped API, and needs no token.
func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	entries := s.Ledger()
	if ref := r.URL.Query().Get("reference"); ref != "" {
		kept := entries[:0]
		for _, e := range entries {
			if e.Reference == ref {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	writeJSON(w, http.StatusOK, struct {
		Entries []Entry `json:"entries"`
	}{entries})
}

// transferResponse is the standard Wise transfer object, plus failureReason (an extension: Wise
// reports problems through other channels).
type transferResponse struct {
	ID                    int64           `json:"id"`
	User                  int64           `json:"user"`
	TargetAccount         int64           `json:"targetAccount"`
	SourceAccount         *int64          `json:"sourceAccount"`
	Quote                 *int64          `json:"quote"`
	QuoteUUID             string          `json:"quoteUuid"`
	Status                string          `json:"status"`
	Reference             string          `json:"reference"`
	Rate                  jsonNumber      `json:"rate"`
	Created               string          `json:"created"`
	Business              int64           `json:"business"`
	Details               transferDetails `json:"details"`
	HasActiveIssues       bool            `json:"hasActiveIssues"`
	SourceCurrency        string          `json:"sourceCurrency"`
	SourceValue           jsonNumber      `json:"sourceValue"`
	TargetCurrency        string          `json:"targetCurrency"`
	TargetValue           jsonNumber      `json:"targetValue"`
	CustomerTransactionID string          `json:"customerTransactionId"`
	FailureReason         string          `json:"failureReason,omitempty"`
}

// createdLayout is Wise's format of a transfer's "created" (UTC).
const createdLayout = "2006-01-02 15:04:05"

func transferJSON(e *Entry) transferResponse {
	return transferResponse{
		ID: e.TransferID, User: e.Profile, Business: e.Profile, TargetAccount: e.RecipientAccountID,
		QuoteUUID: e.QuoteID, Status: e.Status, Reference: e.Reference,
		Rate: plain(e.Rate), Created: e.Created.UTC().Format(createdLayout),
		Details:         transferDetails{Reference: e.Reference, SourceOfFunds: e.SourceOfFunds},
		HasActiveIssues: e.Status == StatusBouncedBack,
		SourceCurrency:  e.SourceCurrency, SourceValue: fixed(e.SourceAmount, minor(e.SourceCurrency)),
		TargetCurrency: e.TargetCurrency, TargetValue: fixed(e.TargetAmount, minor(e.TargetCurrency)),
		CustomerTransactionID: e.CustomerTransactionID, FailureReason: e.FailureReason,
	}
}
