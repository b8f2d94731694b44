package pricing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// RateSource supplies the USD exchange rates a quote is priced with. Implementations return an
// *apierror.Error with code Unavailable when they cannot vouch for current rates, so that the
// quote endpoint fails closed (503) instead of pricing with an old rate.
type RateSource interface {
	Rates(ctx context.Context) (*RateTable, error)
}

// RateTable is one consistent set of mid-market rates from 1 USD to every supported currency.
// It is immutable once built and safe to share between goroutines.
type RateTable struct {
	rates map[string]decimal.Decimal
	// AsOf is the time the rates are valid for, as stated by their publisher (the start of the
	// "date" day, UTC, for daily sources).
	AsOf time.Time
	// FetchedAt is when a live source last confirmed these rates; zero for a built-in snapshot.
	FetchedAt time.Time
	// Source says where the rates come from, for logs and audit records.
	Source string
}

// Rate returns the number of units of code per 1 USD.
func (t *RateTable) Rate(code string) (decimal.Decimal, error) {
	r, ok := t.rates[code]
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("pricing: rate table from %q has no rate for %s", t.Source, code)
	}
	return r, nil
}

// Sanity bounds on a rate. Every supported currency lies well inside them (the extremes are KWD
// about 0.3 and VND about 26000); a value outside means a broken feed, not a market move.
var (
	minRate = decimal.New(1, -4)
	maxRate = decimal.New(1, 7)
)

// maxRateExponent bounds the decimal exponent of a parsed rate before any comparison: decimal
// arithmetic on "1e2000000000" would allocate a number with two billion digits.
const maxRateExponent = 30

// NewRateTable validates rates (units per USD, keyed by upper-case code) and builds a table. It
// insists on a rate for every supported currency and on USD = 1: a partial table would let
// quotes for some currencies run on a different day's data than others, and a feed that gets USD
// wrong is not a USD-based feed.
func NewRateTable(rates map[string]decimal.Decimal, asOf time.Time, source string) (*RateTable, error) {
	t := &RateTable{rates: make(map[string]decimal.Decimal, len(minorUnits)), AsOf: asOf.UTC(), Source: source}
	var missing []string
	for code := range minorUnits {
		r, ok := rates[code]
		if !ok {
			missing = append(missing, code)
			continue
		}
		if err := checkRate(code, r); err != nil {
			return nil, err
		}
		t.rates[code] = r
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("pricing: rates from %q lack %d supported currencies: %s", source, len(missing), strings.Join(missing, ", "))
	}
	if !t.rates["USD"].Equal(decimal.New(1, 0)) {
		return nil, fmt.Errorf("pricing: rates from %q give USD = %s, want 1", source, t.rates["USD"])
	}
	return t, nil
}

func checkRate(code string, r decimal.Decimal) error {
	if e := r.Exponent(); e > maxRateExponent || e < -maxRateExponent {
		return fmt.Errorf("pricing: rate for %s has an implausible exponent %d", code, e)
	}
	if r.LessThan(minRate) || r.GreaterThan(maxRate) {
		return fmt.Errorf("pricing: rate for %s is %s, outside the plausible range %s..%s", code, r, minRate, maxRate)
	}
	return nil
}

// maxRateNumberLen bounds the text of one rate; the reference data has at most 14 characters.
const maxRateNumberLen = 40

// ParseRates reads the JSON rate documents the service knows, taking every number from its text
// (never through float64):
//
//   - the service snapshot: {"base":"USD","date":"2026-09-29","rates":{"EUR":0.88,...}}
//   - the fawazahmed0 currency API: {"date":"2026-09-29","usd":{"eur":0.88,"btc":...,...}}
//
// Keys are matched case-insensitively; codes the service does not pay out in are ignored. "date"
// is a calendar day (taken as 00:00 UTC) or an RFC 3339 time. source is recorded on the table.
func ParseRates(data []byte, source string) (*RateTable, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("pricing: rates from %q are not a JSON object: %w", source, err)
	}
	if raw, ok := doc["base"]; ok {
		var base string
		if err := json.Unmarshal(raw, &base); err != nil || !strings.EqualFold(base, "USD") {
			return nil, fmt.Errorf("pricing: rates from %q have base %s, want USD", source, raw)
		}
	}
	asOf, err := parseRateDate(doc["date"])
	if err != nil {
		return nil, fmt.Errorf("pricing: rates from %q: %w", source, err)
	}
	rawRates, ok := doc["rates"]
	if !ok {
		rawRates, ok = doc["usd"]
	}
	if !ok {
		return nil, fmt.Errorf(`pricing: rates from %q have neither a "rates" nor a "usd" object`, source)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(rawRates, &entries); err != nil {
		return nil, fmt.Errorf("pricing: rates from %q: the rate object is not a JSON object: %w", source, err)
	}
	rates := make(map[string]decimal.Decimal, len(minorUnits))
	for key, raw := range entries {
		code := strings.ToUpper(key)
		if !Supported(code) {
			continue
		}
		if _, dup := rates[code]; dup {
			return nil, fmt.Errorf("pricing: rates from %q list %s twice (keys differing in case)", source, code)
		}
		r, err := parseRateNumber(raw)
		if err != nil {
			return nil, fmt.Errorf("pricing: rates from %q, %s: %w", source, code, err)
		}
		rates[code] = r
	}
	return NewRateTable(rates, asOf, source)
}

// parseRateNumber converts a JSON number token to a decimal from its text. Strings, null and
// other JSON values are refused: a feed that quotes its numbers has changed format.
func parseRateNumber(raw json.RawMessage) (decimal.Decimal, error) {
	text := string(bytes.TrimSpace(raw))
	if len(text) > maxRateNumberLen {
		return decimal.Decimal{}, errors.New("rate number is too long")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return decimal.Decimal{}, fmt.Errorf("rate %s is not valid JSON: %w", text, err)
	}
	num, ok := v.(json.Number)
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("rate %s is not a JSON number", text)
	}
	d, err := decimal.NewFromString(num.String())
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("rate %s: %w", text, err)
	}
	return d, nil
}

func parseRateDate(raw json.RawMessage) (time.Time, error) {
	if raw == nil {
		return time.Time{}, errors.New(`no "date"`)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf(`"date" is not a string: %s`, raw)
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf(`"date" %q is neither YYYY-MM-DD nor RFC 3339`, s)
	}
	return t.UTC(), nil
}
