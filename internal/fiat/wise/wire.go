package wise

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/fiat"
)

// Wise transfer statuses (https://docs.wise.com, "Tracking transfers").
const (
	statusIncomingPaymentWaiting   = "incoming_payment_waiting"
	statusIncomingPaymentInitiated = "incoming_payment_initiated"
	statusProcessing               = "processing"
	statusFundsConverted           = "funds_converted"
	statusOutgoingPaymentSent      = "outgoing_payment_sent"
	statusBouncedBack              = "bounced_back"
	statusCancelled                = "cancelled"
	statusFundsRefunded            = "funds_refunded"
	statusChargedBack              = "charged_back"
)

// stateOf maps a Wise transfer status to the payout's state.
//
// Only cancelled, funds_refunded and charged_back are Rejected: Wise can take a bounced_back
// transfer back to processing and send it again once the details are fixed, so a bounce alone
// does not prove that no money will reach the recipient. outgoing_payment_sent is Completed:
// Wise calls it the final state of the normal flow, though the recipient's bank may still return
// the money weeks later (outgoing_payment_sent ⇒ bounced_back ⇒ processing ⇒ cancelled ⇒
// funds_refunded), which the caller sees by asking, within Config.ReturnWindow, as Accepted and
// then Rejected. A status this client does not know is Accepted: in flight, never a reason to
// fail a transfer.
func stateOf(status string) fiat.State {
	switch status {
	case statusIncomingPaymentWaiting:
		return fiat.StatePending
	case statusOutgoingPaymentSent:
		return fiat.StateCompleted
	case statusCancelled, statusFundsRefunded, statusChargedBack:
		return fiat.StateRejected
	default: // incoming_payment_initiated, processing, funds_converted, bounced_back, ...
		return fiat.StateAccepted
	}
}

// keyNamespace derives customerTransactionIds from references. Changing it would change every
// key and make the provider create a second payout for a transfer in flight: never change it.
var keyNamespace = uuid.MustParse("20241dd9-300f-4cca-8351-04ccf5579d3a")

// CustomerTransactionID is the idempotency key sent for reference: Wise wants a UUID, the
// service's references are 24-character transfer ids, so the key is the name-based (SHA-1)
// UUID of the reference. The same reference always gives the same key.
func CustomerTransactionID(reference string) string {
	return uuid.NewSHA1(keyNamespace, []byte(reference)).String()
}

// number is a decimal written as a JSON number, never through float64.
type number string

func (n number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func num(d decimal.Decimal) number { return number(d.String()) }

// amount is a decimal read from a JSON number (or a string holding one), never through float64.
type amount decimal.Decimal

func (a *amount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = amount{}
		return nil
	}
	s := string(bytes.Trim(b, `"`))
	if len(s) > 40 || strings.ContainsAny(s, "eE") {
		return fmt.Errorf("amount %.40q is not a plain decimal", s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("amount %.40q: %w", s, err)
	}
	*a = amount(d)
	return nil
}

func (a amount) dec() decimal.Decimal { return decimal.Decimal(a) }

type quoteRequest struct {
	SourceCurrency string  `json:"sourceCurrency"`
	TargetCurrency string  `json:"targetCurrency"`
	TargetAmount   number  `json:"targetAmount"`
	PayOut         string  `json:"payOut"`
	PreferredPayIn string  `json:"preferredPayIn"`
	Rate           *number `json:"rate,omitempty"` // simulated-bank extension, see Config.OmitRate
}

type quoteResponse struct {
	ID           string `json:"id"`
	SourceAmount amount `json:"sourceAmount"`
	TargetAmount amount `json:"targetAmount"`
	Rate         amount `json:"rate"`
}

type accountRequest struct {
	Profile           int64          `json:"profile"`
	AccountHolderName string         `json:"accountHolderName"`
	Currency          string         `json:"currency"`
	Type              string         `json:"type"`
	Details           map[string]any `json:"details"`
}

type accountResponse struct {
	ID int64 `json:"id"`
}

type transferRequest struct {
	TargetAccount         int64           `json:"targetAccount"`
	QuoteUUID             string          `json:"quoteUuid"`
	CustomerTransactionID string          `json:"customerTransactionId"`
	Details               transferDetails `json:"details"`
}

type transferDetails struct {
	Reference string `json:"reference"`
	// SourceOfFunds is Wise's free-text source of funds: the deposit that pays the payout.
	SourceOfFunds string `json:"sourceOfFunds,omitempty"`
}

type fundRequest struct {
	Type string `json:"type"`
}

type fundResponse struct {
	Type      string  `json:"type"`
	Status    string  `json:"status"`
	ErrorCode *string `json:"errorCode"`
}

// transfer is Wise's standard transfer object, as far as this client reads it.
type transfer struct {
	ID                    int64           `json:"id"`
	Status                string          `json:"status"`
	Reference             string          `json:"reference"`
	Details               transferDetails `json:"details"`
	Rate                  amount          `json:"rate"`
	Created               string          `json:"created"`
	HasActiveIssues       bool            `json:"hasActiveIssues"`
	SourceCurrency        string          `json:"sourceCurrency"`
	SourceValue           amount          `json:"sourceValue"`
	TargetCurrency        string          `json:"targetCurrency"`
	TargetValue           amount          `json:"targetValue"`
	CustomerTransactionID string          `json:"customerTransactionId"`
	// FailureReason is the simulated bank's extension; Wise itself reports the cause of a
	// bounce or cancellation through support channels.
	FailureReason string `json:"failureReason"`
}

func (t *transfer) reference() string {
	if t.Details.Reference != "" {
		return t.Details.Reference
	}
	return t.Reference
}

func (t *transfer) payout() *fiat.Payout {
	p := &fiat.Payout{
		ProviderID:     fmt.Sprint(t.ID),
		Reference:      t.reference(),
		State:          stateOf(t.Status),
		ProviderStatus: t.Status,
		SourceCurrency: t.SourceCurrency,
		SourceAmount:   t.SourceValue.dec(),
		TargetCurrency: t.TargetCurrency,
		TargetAmount:   t.TargetValue.dec(),
		Rate:           t.Rate.dec(),
		Message:        t.FailureReason,
		Created:        parseCreated(t.Created),
		SourceOfFunds:  t.Details.SourceOfFunds,
	}
	if p.State == fiat.StateRejected && p.Message == "" {
		p.Message = "the payout provider cancelled the payout (status " + t.Status + ")"
	}
	return p
}

// parseCreated reads Wise's "2017-11-24 10:47:49" (UTC), or RFC 3339; zero when neither.
func parseCreated(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// nestDetails turns the boundary's dotted keys ("address.city") into the nested objects Wise
// expects ({"address": {"city": ...}}).
func nestDetails(flat map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for key, value := range flat {
		parts := strings.Split(key, ".")
		m := out
		for i, part := range parts {
			if part == "" {
				return nil, fmt.Errorf("details key %q has an empty part", key)
			}
			if i == len(parts)-1 {
				if _, taken := m[part]; taken {
					return nil, fmt.Errorf("details key %q clashes with another key", key)
				}
				m[part] = value
				break
			}
			next, ok := m[part]
			if !ok {
				nm := map[string]any{}
				m[part] = nm
				m = nm
				continue
			}
			if m, ok = next.(map[string]any); !ok {
				return nil, fmt.Errorf("details key %q clashes with another key", key)
			}
		}
	}
	return out, nil
}
