package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/redact"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// transferJSON is the transfer of spec 2.5.
type transferJSON struct {
	ID             string                 `json:"id"`
	UserID         string                 `json:"user_id,omitempty"`
	Type           string                 `json:"type"`
	Amount         jsonDecimal            `json:"amount"`
	Currency       *string                `json:"currency"`
	Status         string                 `json:"status"`
	StatusLabel    string                 `json:"status_label"`
	RecipientID    int64                  `json:"recipientId"`
	Recipient      recipientSnapshotJSON  `json:"recipient"`
	CustomerUUID   *string                `json:"customerUuid"`
	CustomerEmail  *string                `json:"customerEmail"`
	SourceToken    *string                `json:"sourceToken"`
	SourceNetwork  *string                `json:"sourceNetwork"`
	Quote          *transferQuoteSnapshot `json:"quote"`
	WalletAddress  string                 `json:"wallet_address"`
	DepositAddress string                 `json:"deposit_address"`
	Error          *string                `json:"error"`
	RefundTxHash   *string                `json:"refund_tx_hash"`
	Reference      string                 `json:"reference"`
	Timestamp      string                 `json:"timestamp"`
	UpdatedAt      string                 `json:"updated_at,omitempty"`
}

type recipientSnapshotJSON struct {
	ID                int64          `json:"id"`
	AccountHolderName string         `json:"accountHolderName"`
	Currency          string         `json:"currency"`
	Type              string         `json:"type"`
	Country           *string        `json:"country"`
	Details           map[string]any `json:"details"`
}

type transferQuoteSnapshot struct {
	SourceAmount      jsonDecimal  `json:"sourceAmount"`
	ProviderCharge    *jsonDecimal `json:"providerCharge,omitempty"`
	ServiceFeePercent jsonDecimal  `json:"serviceFeePercent"`
	ServiceFeeFixed   *jsonDecimal `json:"serviceFeeFixed,omitempty"`
	TargetCurrency    string       `json:"targetCurrency"`
	USDToTargetRate   jsonDecimal  `json:"usdToTargetRate"`
	TargetAmount      jsonDecimal  `json:"targetAmount"`
	TransferFee       jsonDecimal  `json:"transferFee"`
	EstimatedDelivery string       `json:"estimatedDelivery"`
}

// statusLabels are the human texts of the public statuses.
var statusLabels = transfer.StatusLabels

// transferPhase is the transfer's status now, derived from its facts and spec (so a hash set a
// moment ago reads pending_match before the controller has written anything).
func transferPhase(t *payoutv1.Transfer) payoutv1.TransferPhase { return transfer.Phase(t) }

// lookupPhase is the status a lookup reports (transfer.LookupPhase).
func lookupPhase(t *payoutv1.Transfer) payoutv1.TransferPhase { return transfer.LookupPhase(t) }

func transferView(t *payoutv1.Transfer) transferJSON {
	phase := lookupPhase(t)
	currency := string(t.Spec.Quote.TargetCurrency)
	minor, _ := pricing.MinorUnits(currency)
	q := t.Spec.Quote
	v := transferJSON{
		ID: t.Name, Type: "payout",
		Amount:      fixed(mustDecimal(string(t.Spec.Amount)), 2),
		Currency:    strPtr(currency),
		Status:      string(phase),
		StatusLabel: statusLabels[phase],
		RecipientID: t.Spec.RecipientID,
		Recipient: recipientSnapshotJSON{
			ID: t.Spec.Recipient.ID, AccountHolderName: t.Spec.Recipient.AccountHolderName,
			Currency: string(t.Spec.Recipient.Currency), Type: t.Spec.Recipient.Type,
			Country: strPtr(string(t.Spec.Recipient.Country)), Details: detailsToAPI(t.Spec.Recipient.Details),
		},
		CustomerUUID:  strPtr(t.Spec.CustomerUUID),
		CustomerEmail: strPtr(t.Spec.CustomerEmail),
		SourceToken:   strPtr(string(t.Spec.SourceToken)),
		SourceNetwork: strPtr(string(t.Spec.SourceNetwork)),
		Quote: &transferQuoteSnapshot{
			SourceAmount: jsonDecimal(q.SourceAmount), ProviderCharge: optDecimal(q.ProviderCharge),
			ServiceFeePercent: jsonDecimal(q.ServiceFeePercent), ServiceFeeFixed: optDecimal(q.ServiceFeeFixed),
			TargetCurrency: string(q.TargetCurrency), USDToTargetRate: jsonDecimal(q.USDToTargetRate),
			TargetAmount:      fixed(mustDecimal(string(q.TargetAmount)), minor),
			TransferFee:       jsonDecimal(q.TransferFee),
			EstimatedDelivery: q.EstimatedDelivery.UTC().Format(time.RFC3339),
		},
		WalletAddress:  t.Spec.WalletAddress,
		DepositAddress: t.Spec.DepositAddress,
		Error:          strPtr(t.Status.ErrorText()),
		Reference:      t.Name,
		Timestamp:      t.CreationTimestamp.UTC().Format(time.RFC3339),
	}
	if phase == payoutv1.PhaseRefunded && t.Status.Refund != nil {
		v.RefundTxHash = strPtr(t.Status.Refund.TxHash)
	}
	updated := t.CreationTimestamp
	if t.Status.UpdatedAt != nil {
		updated = *t.Status.UpdatedAt
	}
	v.UpdatedAt = updated.UTC().Format(time.RFC3339)
	return v
}

// strPtr is nil for "", so empty optional fields read as null.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// handleTransferGet serves GET /api/payouts/transfer/{transfer_id} (spec 4.15). Lookup is
// global: any valid key reads any transfer whose id it knows; a transfer that left the API server
// is answered from the archive, as it was answered before.
//
// The transfer id travels as the bank reference and in mails, so knowing it proves nothing: a
// key of another account gets every field, the personal and bank ones masked (maskLookup).
func (s *Server) handleTransferGet(w http.ResponseWriter, r *http.Request, c *Caller) error {
	id := r.PathValue("transfer_id")
	if e := s.transferBook.get(id); e != nil {
		writeBody(w, http.StatusOK, e.body(e.t.Namespace != c.Namespace()))
		return nil
	}
	// not in the book: one the cache holds and its handler has not told the book of yet, or one
	// that left the API server
	t, err := s.cachedTransfer(r.Context(), id)
	if apierror.CodeOf(err) == apierror.NotFound {
		return s.writeArchivedTransfer(r.Context(), w, c, id, err)
	}
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, lookupBody(t, t.Namespace != c.Namespace()))
	return nil
}

// findTransfer finds a transfer by id in any account (ids are global); 404 when there is none.
// It reads the transfer book, where a create files its transfer before the informer has it,
// then the cache, which the book can trail by a moment. The transfer is the cache's own object
// or the one a create stored (no copy): read it, never change it.
func (s *Server) findTransfer(ctx context.Context, id string) (*payoutv1.Transfer, error) {
	if e := s.transferBook.get(id); e != nil {
		return e.t, nil
	}
	return s.cachedTransfer(ctx, id)
}

// cachedTransfer is findTransfer without the book: the cache's transfer with id, 404 when there
// is none.
func (s *Server) cachedTransfer(ctx context.Context, id string) (*payoutv1.Transfer, error) {
	t, err := s.stores.transfer(ctx, id)
	if err == nil && t == nil {
		err = apierror.Errorf(apierror.NotFound, "transfer not found")
	}
	return t, err
}

// maskLookup masks the personal and bank fields (redact.Field) of an encoded lookup answer,
// `{"transfer": ...}`, live or archived alike; every field stays, with its type. Numbers keep
// their digits (json.Number).
func maskLookup(body []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	t, _ := m["transfer"].(map[string]any)
	for _, k := range []string{"customerEmail", "wallet_address"} {
		maskString(t, k, k)
	}
	if rc, ok := t["recipient"].(map[string]any); ok {
		maskString(rc, "accountHolderName", "recipient.accountHolderName")
		details, _ := rc["details"].(map[string]any)
		for k := range details {
			maskString(details, k, "recipient.details."+k)
		}
		addr, _ := details["address"].(map[string]any)
		for k := range addr {
			maskString(addr, k, "recipient.details.address."+k)
		}
	}
	return json.Marshal(m)
}

// maskString masks m[k], the field at path, when it is a string.
func maskString(m map[string]any, k, path string) {
	if s, ok := m[k].(string); ok {
		m[k] = redact.Field(path, s)
	}
}
