// Package wise is a fiat.Provider that pays out through an HTTP API in the shape of Wise's
// platform API: a quote (POST /v3/profiles/{profileId}/quotes), a recipient account
// (POST /v1/accounts), a transfer created under an idempotency key (POST /v1/transfers with
// customerTransactionId), its funding from the profile's balance
// (POST /v3/profiles/{profileId}/transfers/{transferId}/payments, type BALANCE) and its status
// (GET /v1/transfers/{transferId}). The simulated bank (package simbank) serves the same API.
//
// The idempotency key is CustomerTransactionID(reference), a UUID derived from the transfer id,
// so that every call for one transfer, from any replica, before or after any crash, carries
// the same key; Wise documents that a repeated customerTransactionId returns the transfer the
// first call made.
//
// Find lists GET /v1/transfers?profile=&createdDateStart=&offset=&limit= (Wise's list, newest
// first) with customerTransactionId=, an extension the simulated bank serves. Wise's list has no
// such filter, so the client checks each transfer's key itself and reads every page of the
// transfers created since the caller's notBefore, until one carries the key or the list ends: a
// nil answer means the provider has none. A search that cannot finish (maxFindPages) is a
// Transient error, never a "none". Create reads only the first page before it posts: a miss
// there is safe, since the idempotent POST gets the existing transfer back. Once a payout's id is
// known, the caller polls Get by id and never searches.
package wise

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/fiat"
)

// Find's search: pages of findPage transfers, at most maxFindPages of them (a window of 100,000
// transfers), from findSkew before the caller's notBefore (the provider's clock is not ours).
const (
	findPage     = 100
	maxFindPages = 1000
	findSkew     = time.Hour
)

// Client is a fiat.Provider over the Wise-style API. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	http *http.Client
}

var _ fiat.Provider = (*Client)(nil)

// New checks cfg (after filling unset Timeout, RetryBackoff and Name with their defaults) and
// returns a client.
func New(cfg Config) (*Client, error) {
	def := DefaultConfig()
	if cfg.Timeout == 0 {
		cfg.Timeout = def.Timeout
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = def.RetryBackoff
	}
	if cfg.Name == "" {
		cfg.Name = def.Name
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		hc = &http.Client{Transport: t}
	}
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), http: hc}, nil
}

// Name is the provider's name (Config.Name).
func (c *Client) Name() string { return c.cfg.Name }

// ReturnWindow is how long after outgoing_payment_sent a payout may still come back
// (Config.ReturnWindow).
func (c *Client) ReturnWindow() time.Duration { return c.cfg.ReturnWindow }

// Find returns the payout made under reference, or nil, nil when the provider holds none: it
// searches every transfer of the profile created since notBefore (see the package
// documentation).
func (c *Client) Find(ctx context.Context, reference string, notBefore time.Time) (*fiat.Payout, error) {
	if reference == "" {
		return nil, errorf(fiat.Permanent, "find", "reference is required")
	}
	t, err := c.findTransfer(ctx, CustomerTransactionID(reference), notBefore, maxFindPages)
	if err != nil || t == nil {
		return nil, err
	}
	if t.reference() != reference {
		return nil, &fiat.Error{Kind: fiat.Inconsistent, Op: "find", Payout: t.payout(),
			Message: fmt.Sprintf("the provider's transfer %d under the key of reference %q carries reference %q", t.ID, reference, t.reference())}
	}
	return t.payout(), nil
}

// findTransfer reads the profile's transfers created since notBefore (all when zero), newest
// first, up to pages pages, and returns the one under key, or nil when the list ended without
// it. When pages run out before the list does, the answer is an error if pages > 1 (a search
// that could not finish proves nothing) and nil otherwise (Create's look at the newest page).
func (c *Client) findTransfer(ctx context.Context, key string, notBefore time.Time, pages int) (*transfer, error) {
	var cutoff time.Time
	if !notBefore.IsZero() {
		cutoff = notBefore.Add(-findSkew).UTC()
	}
	var found *transfer
	ended, err := c.pageTransfers(ctx, url.Values{"customerTransactionId": {key}}, cutoff, pages, func(t *transfer) error {
		if t.CustomerTransactionID != key {
			return nil // a server that ignores the key filter
		}
		if found != nil && found.ID != t.ID {
			return errorf(fiat.Inconsistent, "find", "the provider holds transfers %d and %d under one customerTransactionId %s", found.ID, t.ID, key)
		}
		found = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ended && found == nil && pages > 1 {
		return nil, errorf(fiat.Transient, "find", "gave up after %d pages of the provider's transfers since %s without reaching their end: whether a payout exists under customerTransactionId %s is unknown",
			pages, cutoff.Format(time.RFC3339), key)
	}
	return found, nil
}

// pageTransfers hands visit the profile's transfers created since cutoff (all when zero), newest
// first, findPage per request (GET /v1/transfers with q), up to pages pages. ended reports that
// the list was read to its end (or to a transfer older than cutoff: a server that ignores
// createdDateStart), not cut off by pages.
func (c *Client) pageTransfers(ctx context.Context, q url.Values, cutoff time.Time, pages int, visit func(*transfer) error) (ended bool, err error) {
	q.Set("profile", strconv.FormatInt(c.cfg.ProfileID, 10))
	q.Set("limit", strconv.Itoa(findPage))
	if !cutoff.IsZero() {
		q.Set("createdDateStart", cutoff.Format("2006-01-02T15:04:05.000Z"))
	}
	for page := 0; page < pages; page++ {
		// Pages by offset in a list that grows at its head meanwhile: a transfer may be read
		// twice (same id), none is skipped.
		q.Set("offset", strconv.Itoa(page*findPage))
		var list []transfer
		// A read: repeatable.
		if err := c.do(ctx, call{method: http.MethodGet, path: "/v1/transfers?" + q.Encode(), repeatable: true}, &list); err != nil {
			return false, narrow(err, fiat.Transient)
		}
		for i := range list {
			if created := parseCreated(list[i].Created); !cutoff.IsZero() && !created.IsZero() && created.Before(cutoff) {
				return true, nil // the rest is older still
			}
			if err := visit(&list[i]); err != nil {
				return false, err
			}
		}
		if len(list) < findPage {
			return true, nil
		}
	}
	return false, nil
}

// Get returns the payout with the provider's id. An id the provider does not know is
// Inconsistent: the caller recorded it from this provider.
func (c *Client) Get(ctx context.Context, providerID string) (*fiat.Payout, error) {
	id, err := strconv.ParseInt(providerID, 10, 64)
	if err != nil || id <= 0 {
		return nil, errorf(fiat.Inconsistent, "get", "%q is not a transfer id of this provider", providerID)
	}
	t, err := c.getTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	return t.payout(), nil
}

func (c *Client) getTransfer(ctx context.Context, id int64) (*transfer, error) {
	var t transfer
	// A read: repeatable.
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/transfers/" + strconv.FormatInt(id, 10), repeatable: true}, &t)
	var fe *fiat.Error
	if errors.As(err, &fe) && fe.StatusCode == http.StatusNotFound {
		fe.Kind = fiat.Inconsistent
		fe.Message = fmt.Sprintf("the provider has no transfer %d: %s", id, fe.Message)
		return nil, fe
	}
	if err != nil {
		return nil, narrow(err, fiat.Transient)
	}
	return &t, nil
}

// Create makes and funds the payout of req, or finishes and returns the one already made under
// req.Reference. The steps, each safe to repeat:
//
//  1. Look for the transfer under the reference's key in the newest page of transfers (a miss
//     is safe: step 3 gets an existing transfer back); if there is one, skip to 4.
//  2. Quote the fixed target amount at req.Rate, and create the recipient account. Both cost
//     nothing and commit nothing; a repeat leaves an unused quote or account behind.
//  3. Create the transfer under the key. Wise returns the existing transfer for a repeated key,
//     so a repeat after a lost answer gets the first call's transfer.
//  4. Check that the transfer is the one req asks for; a different one is Inconsistent.
//  5. Fund it if it still waits for funds. A repeat after a lost answer is refused by the
//     provider as transfer.invalid-state, which means the first call funded it; Create then
//     reads the status.
func (c *Client) Create(ctx context.Context, req fiat.PayoutRequest) (*fiat.Payout, error) {
	if err := req.Validate(); err != nil {
		var fe *fiat.Error
		if errors.As(err, &fe) {
			fe.Op = "create"
		}
		return nil, err
	}
	details, err := nestDetails(req.Recipient.Details)
	if err != nil {
		return nil, errorf(fiat.Permanent, "create", "recipient %v", err)
	}
	key := CustomerTransactionID(req.Reference)
	t, err := c.findTransfer(ctx, key, time.Time{}, 1)
	if err != nil {
		return nil, err
	}
	if t == nil {
		if t, err = c.createTransfer(ctx, req, key, details); err != nil {
			return nil, err
		}
	}
	if err := matches(t, req); err != nil {
		return nil, err
	}
	if t.Status == statusIncomingPaymentWaiting {
		if t, err = c.fund(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	return t.payout(), nil
}

func (c *Client) createTransfer(ctx context.Context, req fiat.PayoutRequest, key string, details map[string]any) (*transfer, error) {
	qr := quoteRequest{
		SourceCurrency: req.SourceCurrency, TargetCurrency: req.TargetCurrency,
		TargetAmount: num(req.TargetAmount), PayOut: "BANK_TRANSFER", PreferredPayIn: "BALANCE",
	}
	if !c.cfg.OmitRate {
		r := num(req.Rate)
		qr.Rate = &r
	}
	var q quoteResponse
	profile := strconv.FormatInt(c.cfg.ProfileID, 10)
	// A quote commits nothing: repeatable.
	if err := c.do(ctx, call{method: http.MethodPost, path: "/v3/profiles/" + profile + "/quotes", body: qr, repeatable: true}, &q); err != nil {
		return nil, err
	}
	var a accountResponse
	ar := accountRequest{
		Profile: c.cfg.ProfileID, AccountHolderName: req.Recipient.AccountHolderName,
		Currency: req.Recipient.Currency, Type: req.Recipient.Type, Details: details,
	}
	// A recipient account commits nothing: repeatable.
	if err := c.do(ctx, call{method: http.MethodPost, path: "/v1/accounts", body: ar, repeatable: true}, &a); err != nil {
		return nil, err
	}
	var t transfer
	tr := transferRequest{TargetAccount: a.ID, QuoteUUID: q.ID, CustomerTransactionID: key, Details: transferDetails{Reference: req.Reference, SourceOfFunds: req.SourceOfFunds}}
	// Idempotent by customerTransactionId: repeatable.
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/transfers", body: tr, repeatable: true}, &t)
	var fe *fiat.Error
	if errors.As(err, &fe) && fe.Kind == fiat.Permanent && strings.HasPrefix(fe.Code, "quote.") {
		// The quote expired or was lost between two calls: a new Create gets a new one.
		fe.Kind = fiat.Transient
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// matches checks that the provider's transfer under req's key is the payout req asks for.
func matches(t *transfer, req fiat.PayoutRequest) error {
	var diff []string
	if ref := t.reference(); ref != req.Reference {
		diff = append(diff, fmt.Sprintf("reference %q", ref))
	}
	if t.TargetCurrency != req.TargetCurrency || !t.TargetValue.dec().Equal(req.TargetAmount) {
		diff = append(diff, fmt.Sprintf("target %s %s", t.TargetValue.dec(), t.TargetCurrency))
	}
	if t.SourceCurrency != req.SourceCurrency {
		diff = append(diff, "source currency "+t.SourceCurrency)
	}
	if len(diff) == 0 {
		return nil
	}
	return &fiat.Error{Kind: fiat.Inconsistent, Op: "create", Payout: t.payout(),
		Message: fmt.Sprintf("the provider's transfer %d under reference %q differs from the request (%s, not %s %s)",
			t.ID, req.Reference, strings.Join(diff, ", "), req.TargetAmount, req.TargetCurrency)}
}

// fund pays the transfer from the profile's balance and returns its new status. The transfer
// exists, so no failure here is Permanent: an unfunded transfer pays nothing, and the caller's
// next Create funds it.
func (c *Client) fund(ctx context.Context, id int64) (*transfer, error) {
	path := fmt.Sprintf("/v3/profiles/%d/transfers/%d/payments", c.cfg.ProfileID, id)
	var fr fundResponse
	// The provider funds a transfer once and refuses a repeat: repeatable.
	err := c.do(ctx, call{method: http.MethodPost, path: path, body: fundRequest{Type: "BALANCE"}, repeatable: true}, &fr)
	var fe *fiat.Error
	switch {
	case errors.As(err, &fe) && fe.StatusCode == http.StatusUnprocessableEntity && fe.Code == "transfer.invalid-state":
		// Funded already (by an earlier call whose answer was lost), or cancelled: the status
		// says which.
	case err != nil:
		return nil, narrow(err, fiat.Transient)
	case fr.Status != "COMPLETED":
		code := "unknown"
		if fr.ErrorCode != nil {
			code = *fr.ErrorCode
		}
		return nil, &fiat.Error{Kind: fiat.Transient, Op: "fund", Code: code,
			Message: fmt.Sprintf("the payout provider did not fund transfer %d (%s %s)", id, fr.Status, code)}
	}
	t, err := c.getTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status == statusIncomingPaymentWaiting {
		return nil, errorf(fiat.Transient, "fund", "transfer %d still waits for funds although the provider refused to fund it", id)
	}
	return t, nil
}

// narrow turns a Permanent error into kind: for calls about a transfer that exists or may
// exist, no refusal proves that no payout will be made.
func narrow(err error, kind fiat.Kind) error {
	var fe *fiat.Error
	if errors.As(err, &fe) && fe.Kind == fiat.Permanent {
		fe.Kind = kind
	}
	return err
}

// List returns the payouts this service made through the profile since a time, newest first:
// every page of the profile's transfers created since then (pageTransfers), those whose
// customerTransactionId is the key of their reference. The recovery check reads it after an etcd
// restore: the provider, not the restored objects, says which payouts were made. A list it could
// not read to its end is an error, never a shorter answer.
func (c *Client) List(ctx context.Context, since time.Time) ([]*fiat.Payout, error) {
	var out []*fiat.Payout
	ended, err := c.pageTransfers(ctx, url.Values{}, since.UTC(), maxFindPages, func(t *transfer) error {
		if p := t.payout(); t.CustomerTransactionID == CustomerTransactionID(p.Reference) {
			out = append(out, p)
		} // else not made by this service (another user of the profile)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ended {
		return nil, errorf(fiat.Transient, "list", "gave up after %d pages of the provider's transfers since %s without reaching their end", maxFindPages, since.UTC().Format(time.RFC3339))
	}
	return out, nil
}
