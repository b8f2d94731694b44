package simbank

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/pricing"
)

// Transfer statuses, as Wise names them, that the simulated bank goes through.
const (
	StatusIncomingPaymentWaiting = "incoming_payment_waiting"
	StatusProcessing             = "processing"
	StatusFundsConverted         = "funds_converted"
	StatusOutgoingPaymentSent    = "outgoing_payment_sent"
	StatusBouncedBack            = "bounced_back"
	StatusCancelled              = "cancelled"
	StatusFundsRefunded          = "funds_refunded"
)

// FailureName is the account holder name whose payouts the simulated bank rejects (CONTRACT.md,
// "Simulated fiat side"). The comparison is exact: case and spacing count.
const FailureName = "Simulated Failure"

// ReturnName is the account holder name whose payouts the simulated bank sends and then, after
// Options.ReturnAfter, gets back from the recipient's bank, as Wise reports a late bounce:
// outgoing_payment_sent ⇒ bounced_back ⇒ cancelled ⇒ funds_refunded. The comparison is exact.
const ReturnName = "Simulated Return"

// failureReason is the explanation a rejected payout carries.
const failureReason = `the recipient's bank returned the payment: the simulated bank rejects every payout to an account held by "` + FailureName + `"`

// returnReason is the explanation a payout returned after it was sent carries.
const returnReason = `the recipient's bank returned the payment after it was sent: the simulated bank has every payout to an account held by "` + ReturnName + `" returned`

// Entry is one transfer in the simulated bank's ledger.
type Entry struct {
	// Reference is the payment reference (details.reference): the transfer id of the service.
	Reference string `json:"reference"`
	// CustomerTransactionID is the client's idempotency key.
	CustomerTransactionID string `json:"customerTransactionId"`
	// TransferID is the bank's id of the transfer (the provider id).
	TransferID int64  `json:"transferId"`
	Profile    int64  `json:"profile"`
	QuoteID    string `json:"quoteUuid"`
	// Status is the Wise transfer status.
	Status             string          `json:"status"`
	SourceCurrency     string          `json:"sourceCurrency"`
	SourceAmount       decimal.Decimal `json:"sourceAmount"`
	TargetCurrency     string          `json:"targetCurrency"`
	TargetAmount       decimal.Decimal `json:"targetAmount"`
	Rate               decimal.Decimal `json:"rate"`
	RecipientAccountID int64           `json:"recipientAccountId"`
	RecipientName      string          `json:"recipientName"`
	// Fundings counts accepted funding calls; never more than 1.
	Fundings int       `json:"fundings"`
	Created  time.Time `json:"created"`
	// FundedAt is when the source amount was debited.
	FundedAt *time.Time `json:"fundedAt,omitempty"`
	// SentAt is when the outgoing payment was sent: set only for a payout that paid out.
	SentAt *time.Time `json:"sentAt,omitempty"`
	// CancelledAt is when the payout was cancelled and its funds returned.
	CancelledAt *time.Time `json:"cancelledAt,omitempty"`
	// ReturnedAt is when the recipient's bank returned a payment that was sent (SentAt): the
	// money did not stay with the recipient.
	ReturnedAt *time.Time `json:"returnedAt,omitempty"`
	// FailureReason explains a bounced or cancelled payout.
	FailureReason string `json:"failureReason,omitempty"`
	// SourceOfFunds is the request's details.sourceOfFunds (the service names the deposit that
	// pays the payout there).
	SourceOfFunds string `json:"sourceOfFunds,omitempty"`
	// History is every status with its time, oldest first.
	History []Step `json:"history"`
}

// Step is one status of a transfer's history.
type Step struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

// Sent reports whether the entry records money sent to the recipient (which its bank may have
// returned since: Returned).
func (e Entry) Sent() bool { return e.SentAt != nil }

// Returned reports whether the recipient's bank returned the money sent.
func (e Entry) Returned() bool { return e.ReturnedAt != nil }

// MarshalJSON writes the amounts as JSON numbers with the currency's decimals.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plainEntry Entry // drops the methods, so that this is not recursive
	return json.Marshal(struct {
		plainEntry
		SourceAmount jsonNumber `json:"sourceAmount"`
		TargetAmount jsonNumber `json:"targetAmount"`
		Rate         jsonNumber `json:"rate"`
	}{plainEntry(e), fixed(e.SourceAmount, minor(e.SourceCurrency)), fixed(e.TargetAmount, minor(e.TargetCurrency)), plain(e.Rate)})
}

func (e Entry) clone() Entry {
	e.History = append([]Step(nil), e.History...)
	return e
}

func (e *Entry) moveTo(status string, at time.Time) {
	e.Status = status
	e.History = append(append([]Step(nil), e.History...), Step{Status: status, At: at})
}

type quote struct {
	ID             string          `json:"id"`
	Profile        int64           `json:"profile"`
	SourceCurrency string          `json:"sourceCurrency"`
	TargetCurrency string          `json:"targetCurrency"`
	SourceAmount   decimal.Decimal `json:"sourceAmount"`
	TargetAmount   decimal.Decimal `json:"targetAmount"`
	Rate           decimal.Decimal `json:"rate"`
	// RateFrom says where the rate came from: "request" (the rate extension) or the rate
	// table's source.
	RateFrom string    `json:"rateFrom"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
}

type account struct {
	ID                int64           `json:"id"`
	Profile           int64           `json:"profile"`
	AccountHolderName string          `json:"accountHolderName"`
	Currency          string          `json:"currency"`
	Type              string          `json:"type"`
	Country           string          `json:"country,omitempty"`
	Details           json.RawMessage `json:"details"`
	Created           time.Time       `json:"created"`
}

// bank is the state of the simulated bank. One mutex guards it: every change is written to the
// journal before it is applied and before the caller hears of it.
type bank struct {
	mu        sync.Mutex
	quotes    map[string]*quote
	accounts  map[int64]*account
	transfers map[int64]*Entry
	byKey     map[string]int64 // customerTransactionId → transfer id
	quoteUsed map[string]int64 // quote id → transfer id
	order     []int64          // transfer ids in order of creation
	inflight  map[int64]bool   // funded transfers not yet at the end of their path
	journal   *journal         // nil: memory only

	settle      time.Duration
	returnAfter time.Duration
	keyFilter   bool // the list filters by customerTransactionId (the extension)
	quoteTTL    time.Duration
	rates       pricing.RateSource
	now         func() time.Time
	logf        func(string, ...any)
}

func newBank() *bank {
	return &bank{
		quotes:    map[string]*quote{},
		accounts:  map[int64]*account{},
		transfers: map[int64]*Entry{},
		byKey:     map[string]int64{},
		quoteUsed: map[string]int64{},
		inflight:  map[int64]bool{},
	}
}

// apply adds a journal record to the state; it is used both live and on replay.
func (b *bank) apply(r record) {
	switch {
	case r.Lost != 0:
		if t, ok := b.transfers[r.Lost]; ok {
			delete(b.byKey, t.CustomerTransactionID)
			delete(b.transfers, r.Lost)
			delete(b.inflight, r.Lost)
			b.order = slices.DeleteFunc(b.order, func(id int64) bool { return id == r.Lost })
		}
	case r.Quote != nil:
		b.quotes[r.Quote.ID] = r.Quote
	case r.Account != nil:
		b.accounts[r.Account.ID] = r.Account
	case r.Transfer != nil:
		t := r.Transfer
		if _, ok := b.transfers[t.TransferID]; !ok {
			b.order = append(b.order, t.TransferID)
		}
		b.transfers[t.TransferID] = t
		b.byKey[t.CustomerTransactionID] = t.TransferID
		b.quoteUsed[t.QuoteID] = t.TransferID
		if t.FundedAt != nil && !b.settled(t) {
			b.inflight[t.TransferID] = true
		} else {
			delete(b.inflight, t.TransferID)
		}
	}
}

// commit makes r durable, then applies it.
func (b *bank) commit(r record) *apiError {
	if b.journal != nil {
		if err := b.journal.append(r); err != nil {
			b.logf("simbank: journal write failed: %v", err)
			return errorf(http.StatusInternalServerError, "error.internal", "the simulated bank could not record the change")
		}
	}
	b.apply(r)
	return nil
}

// settled reports whether a transfer is at the end of its path: nothing more happens to it.
func (b *bank) settled(e *Entry) bool {
	status, _ := nextStep(e, b.settle, b.returnAfter)
	return status == ""
}

// newID returns an unused id for kind; ids look like Wise's (8 digits) and are random, so that
// two bank directories do not hand out the same ids.
func (b *bank) newID(used func(int64) bool) int64 {
	for {
		id := 10_000_000 + rand.Int64N(90_000_000)
		if !used(id) {
			return id
		}
	}
}

func minor(currency string) int32 {
	m, _ := pricing.MinorUnits(currency)
	return m
}

// quoteRequest is the body of POST /v3/profiles/{profileId}/quotes.
type quoteRequest struct {
	SourceCurrency string `json:"sourceCurrency"`
	TargetCurrency string `json:"targetCurrency"`
	SourceAmount   *num   `json:"sourceAmount"`
	TargetAmount   *num   `json:"targetAmount"`
	TargetAccount  *int64 `json:"targetAccount"`
	PayOut         string `json:"payOut"`
	PreferredPayIn string `json:"preferredPayIn"`
	// Rate is the simulated bank's extension: the rate the caller quoted its customer, which
	// the bank then converts at. Without it the bank prices from its rate table.
	Rate *num `json:"rate"`
}

func (b *bank) createQuote(ctx context.Context, profile int64, req quoteRequest) (*quote, *apiError) {
	src, dst := strings.ToUpper(req.SourceCurrency), strings.ToUpper(req.TargetCurrency)
	srcMinor, ok := pricing.MinorUnits(src)
	if !ok {
		return nil, fieldErrorf("sourceCurrency", "quote.currency.unsupported", "source currency %q is not supported", req.SourceCurrency)
	}
	dstMinor, ok := pricing.MinorUnits(dst)
	if !ok {
		return nil, fieldErrorf("targetCurrency", "quote.currency.unsupported", "target currency %q is not supported", req.TargetCurrency)
	}
	if (req.SourceAmount == nil) == (req.TargetAmount == nil) {
		return nil, fieldErrorf("sourceAmount", "quote.amount.invalid", "exactly one of sourceAmount and targetAmount is required")
	}
	rate := req.Rate.dec()
	rateFrom := "request"
	if req.Rate == nil {
		if src != "USD" {
			return nil, fieldErrorf("rate", "quote.rate.unavailable", "the simulated bank has rates from USD only; send the rate for %s→%s", src, dst)
		}
		table, err := b.rates.Rates(ctx)
		if err != nil {
			return nil, errorf(http.StatusServiceUnavailable, "quote.rate.unavailable", "no rates: %v", err)
		}
		if rate, err = table.Rate(dst); err != nil {
			return nil, fieldErrorf("targetCurrency", "quote.rate.unavailable", "no rate for %s", dst)
		}
		rateFrom = table.Source
	}
	if !rate.IsPositive() {
		return nil, fieldErrorf("rate", "quote.rate.invalid", "rate must be positive")
	}
	q := &quote{Profile: profile, SourceCurrency: src, TargetCurrency: dst, Rate: rate, RateFrom: rateFrom}
	if req.TargetAmount != nil {
		// A fixed target: the recipient gets exactly this; the source is the least amount in
		// whole source units that converts to at least it, i.e. target ÷ rate rounded up.
		t := req.TargetAmount.dec()
		if err := checkAmount("targetAmount", t, dst, dstMinor); err != nil {
			return nil, err
		}
		s, rest := t.QuoRem(rate, srcMinor)
		if rest.IsPositive() {
			s = s.Add(decimal.New(1, -srcMinor))
		}
		q.SourceAmount, q.TargetAmount = s, t
	} else {
		// A fixed source: the conversion truncated to the target currency's decimals.
		s := req.SourceAmount.dec()
		if err := checkAmount("sourceAmount", s, src, srcMinor); err != nil {
			return nil, err
		}
		t := s.Mul(rate).Truncate(dstMinor)
		if !t.IsPositive() {
			return nil, fieldErrorf("sourceAmount", "quote.amount.too-small", "%s %s converts to nothing in %s", s, src, dst)
		}
		q.SourceAmount, q.TargetAmount = s, t
	}
	now := b.now()
	q.Created, q.Expires = now, now.Add(b.quoteTTL)
	b.mu.Lock()
	defer b.mu.Unlock()
	q.ID = uuid.NewString()
	if err := b.commit(record{Quote: q}); err != nil {
		return nil, err
	}
	return q, nil
}

func checkAmount(field string, d decimal.Decimal, currency string, places int32) *apiError {
	if !d.IsPositive() {
		return fieldErrorf(field, "quote.amount.invalid", "%s must be positive", field)
	}
	if !d.Equal(d.Truncate(places)) {
		return fieldErrorf(field, "quote.amount.invalid", "%s %s has more than the %d decimals of %s", field, d, places, currency)
	}
	if d.Exponent() < -20 || d.GreaterThan(decimal.New(1, 12)) {
		return fieldErrorf(field, "quote.amount.invalid", "%s is out of range", field)
	}
	return nil
}

// accountRequest is the body of POST /v1/accounts.
type accountRequest struct {
	Profile           int64           `json:"profile"`
	AccountHolderName string          `json:"accountHolderName"`
	Currency          string          `json:"currency"`
	Type              string          `json:"type"`
	OwnedByCustomer   *bool           `json:"ownedByCustomer"`
	Details           json.RawMessage `json:"details"`
}

var accountType = regexp.MustCompile(`^[a-z][a-z0-9_]{1,39}$`)

func (b *bank) createAccount(req accountRequest) (*account, *apiError) {
	cur := strings.ToUpper(req.Currency)
	switch {
	case req.Profile <= 0:
		return nil, fieldErrorf("profile", "account.profile.invalid", "profile is required")
	case !pricing.Supported(cur):
		return nil, fieldErrorf("currency", "account.currency.unsupported", "currency %q is not supported", req.Currency)
	case !accountType.MatchString(req.Type):
		return nil, fieldErrorf("type", "account.type.invalid", "type %q is not an account type", req.Type)
	case strings.TrimSpace(req.AccountHolderName) == "" || len(req.AccountHolderName) > 256:
		return nil, fieldErrorf("accountHolderName", "account.name.invalid", "accountHolderName must hold 1 to 256 characters")
	}
	var details struct {
		Address *struct {
			Country string `json:"country"`
		} `json:"address"`
	}
	if !bytes.HasPrefix(bytes.TrimSpace(req.Details), []byte("{")) || json.Unmarshal(req.Details, &details) != nil {
		return nil, fieldErrorf("details", "account.details.invalid", "details must be an object")
	}
	a := &account{Profile: req.Profile, AccountHolderName: req.AccountHolderName, Currency: cur, Type: req.Type, Details: req.Details, Created: b.now()}
	if details.Address != nil {
		a.Country = details.Address.Country
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a.ID = b.newID(func(id int64) bool { _, ok := b.accounts[id]; return ok })
	if err := b.commit(record{Account: a}); err != nil {
		return nil, err
	}
	return a, nil
}

// transferRequest is the body of POST /v1/transfers.
type transferRequest struct {
	TargetAccount         int64           `json:"targetAccount"`
	SourceAccount         *int64          `json:"sourceAccount"`
	QuoteUUID             string          `json:"quoteUuid"`
	CustomerTransactionID string          `json:"customerTransactionId"`
	Details               transferDetails `json:"details"`
}

type transferDetails struct {
	Reference                         string `json:"reference"`
	TransferPurpose                   string `json:"transferPurpose,omitempty"`
	TransferPurposeSubTransferPurpose string `json:"transferPurposeSubTransferPurpose,omitempty"`
	TransferPurposeInvoiceNumber      string `json:"transferPurposeInvoiceNumber,omitempty"`
	SourceOfFunds                     string `json:"sourceOfFunds,omitempty"`
}

// createTransfer creates a transfer, or returns the one already made under the request's
// customerTransactionId whatever the rest of the request says (Wise's idempotency).
func (b *bank) createTransfer(req transferRequest) (*Entry, *apiError) {
	key, err := uuid.Parse(req.CustomerTransactionID)
	if err != nil {
		return nil, fieldErrorf("customerTransactionId", "transfer.customerTransactionId.invalid", "customerTransactionId must be a UUID")
	}
	if len(req.Details.SourceOfFunds) > 512 {
		return nil, fieldErrorf("details.sourceOfFunds", "transfer.sourceOfFunds.invalid", "sourceOfFunds is longer than 512 characters")
	}
	if len(req.Details.Reference) > 64 {
		return nil, fieldErrorf("details.reference", "transfer.reference.invalid", "reference is longer than 64 characters")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.byKey[key.String()]; ok {
		e := b.transfers[id].clone()
		return &e, nil
	}
	q, ok := b.quotes[req.QuoteUUID]
	if !ok {
		return nil, fieldErrorf("quoteUuid", "quote.not-found", "no quote %q", req.QuoteUUID)
	}
	now := b.now()
	if now.After(q.Expires) {
		return nil, fieldErrorf("quoteUuid", "quote.expired", "quote %s expired at %s", q.ID, q.Expires.Format(time.RFC3339))
	}
	if _, used := b.quoteUsed[q.ID]; used {
		return nil, fieldErrorf("quoteUuid", "quote.already-used", "quote %s already has a transfer", q.ID)
	}
	a, ok := b.accounts[req.TargetAccount]
	switch {
	case !ok:
		return nil, fieldErrorf("targetAccount", "account.not-found", "no recipient account %d", req.TargetAccount)
	case a.Profile != q.Profile:
		return nil, fieldErrorf("targetAccount", "account.profile.mismatch", "recipient account %d belongs to another profile than quote %s", a.ID, q.ID)
	case a.Currency != q.TargetCurrency:
		return nil, fieldErrorf("targetAccount", "account.currency.mismatch", "recipient account %d takes %s, the quote pays %s", a.ID, a.Currency, q.TargetCurrency)
	}
	e := &Entry{
		Reference: req.Details.Reference, CustomerTransactionID: key.String(),
		TransferID: b.newID(func(id int64) bool { _, ok := b.transfers[id]; return ok }),
		Profile:    q.Profile, QuoteID: q.ID,
		SourceCurrency: q.SourceCurrency, SourceAmount: q.SourceAmount,
		TargetCurrency: q.TargetCurrency, TargetAmount: q.TargetAmount, Rate: q.Rate,
		RecipientAccountID: a.ID, RecipientName: a.AccountHolderName,
		Created: now, SourceOfFunds: req.Details.SourceOfFunds,
	}
	e.moveTo(StatusIncomingPaymentWaiting, now)
	if err := b.commit(record{Transfer: e}); err != nil {
		return nil, err
	}
	c := e.clone()
	return &c, nil
}

// fund debits the transfer's source amount from the profile's balance, once.
func (b *bank) fund(profile, id int64, typ string) (*Entry, *apiError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.transfers[id]
	switch {
	case !ok:
		return nil, errorf(http.StatusNotFound, "transfer.not-found", "no transfer %d", id)
	case cur.Profile != profile:
		return nil, errorf(http.StatusForbidden, "transfer.not-accessible-for-user", "transfer %d belongs to another profile", id)
	case typ != "BALANCE":
		return nil, fieldErrorf("type", "payment.type.unsupported", "the simulated bank funds from BALANCE only, not %q", typ)
	case cur.Status != StatusIncomingPaymentWaiting:
		return nil, errorf(http.StatusUnprocessableEntity, "transfer.invalid-state", "transfer %d is %s and cannot be funded again", id, cur.Status)
	}
	now := b.now()
	next := cur.clone()
	next.Fundings++
	next.FundedAt = &now
	next.moveTo(StatusProcessing, now)
	if err := b.commit(record{Transfer: &next}); err != nil {
		return nil, err
	}
	c := next.clone()
	return &c, nil
}

// advance moves every funded transfer along its path as far as now allows: half-way through
// the settlement time the funds are converted (or, for FailureName, the payment bounces); at the
// end the payment is sent (or cancelled and the funds returned). A payment to ReturnName comes
// back ReturnAfter after it was sent.
func (b *bank) advance() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for id := range b.inflight {
		cur := b.transfers[id]
		next := cur.clone()
		for {
			status, at := nextStep(&next, b.settle, b.returnAfter)
			if status == "" || now.Before(at) {
				break
			}
			next.moveTo(status, at)
			switch {
			case status == StatusBouncedBack && next.SentAt != nil:
				next.FailureReason, next.ReturnedAt = returnReason, &at
			case status == StatusBouncedBack:
				next.FailureReason = failureReason
			case status == StatusCancelled:
				next.CancelledAt = &at
			case status == StatusOutgoingPaymentSent:
				next.SentAt = &at
			}
		}
		if next.Status == cur.Status {
			continue
		}
		if err := b.commit(record{Transfer: &next}); err != nil {
			return // tried again on the next tick
		}
	}
}

// nextStep is the status after e's and the time it is due, or "" at the end of its path.
func nextStep(e *Entry, settle, returnAfter time.Duration) (string, time.Time) {
	if e.FundedAt == nil {
		return "", time.Time{}
	}
	half, full := e.FundedAt.Add(settle/2), e.FundedAt.Add(settle)
	fails, returns := e.RecipientName == FailureName, e.RecipientName == ReturnName
	switch {
	case e.Status == StatusProcessing && fails:
		return StatusBouncedBack, half
	case e.Status == StatusProcessing:
		return StatusFundsConverted, half
	case e.Status == StatusFundsConverted:
		return StatusOutgoingPaymentSent, full
	case e.Status == StatusOutgoingPaymentSent && returns:
		return StatusBouncedBack, full.Add(returnAfter)
	case e.Status == StatusBouncedBack && e.SentAt != nil:
		return StatusCancelled, full.Add(returnAfter + settle/2)
	case e.Status == StatusBouncedBack:
		return StatusCancelled, full
	case e.Status == StatusCancelled && e.SentAt != nil:
		return StatusFundsRefunded, full.Add(returnAfter + settle)
	}
	return "", time.Time{}
}

// lose forgets the transfer with the payment reference, as if the bank had lost it; it reports
// whether there was one.
func (b *bank) lose(reference string) (bool, *apiError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range b.order {
		if b.transfers[id].Reference == reference {
			return true, b.commit(record{Lost: id})
		}
	}
	return false, nil
}

func (b *bank) transfer(id int64) (*Entry, bool) {
	b.advance()
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.transfers[id]
	if !ok {
		return nil, false
	}
	c := e.clone()
	return &c, true
}

// listQuery selects transfers of the list: the profile's (all when 0), created within
// [since, until] (unbounded when zero), with the customerTransactionId key (any when empty).
type listQuery struct {
	profile      int64
	key          string
	since, until time.Time
}

func (q listQuery) selects(e *Entry) bool {
	return (q.profile == 0 || e.Profile == q.profile) && (q.key == "" || e.CustomerTransactionID == q.key) &&
		(q.since.IsZero() || !e.Created.Before(q.since)) && (q.until.IsZero() || !e.Created.After(q.until))
}

// list returns the transfers q selects, newest first, from offset, at most limit.
func (b *bank) list(q listQuery, offset, limit int) []Entry {
	b.advance()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Entry
	for i := len(b.order) - 1; i >= 0; i-- {
		e := b.transfers[b.order[i]]
		if !q.selects(e) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, e.clone())
	}
	return out
}

func (b *bank) ledger() []Entry {
	b.advance()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Entry, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.transfers[id].clone())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}
