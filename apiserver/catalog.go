package apiserver

import (
	"context"
	"encoding/json"
	"net/http"

	"sort"
	"strings"
	"sync/atomic"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/bankaccount"
)

// depositOption is one entry of spec 2.3.
type depositOption struct {
	Token        string `json:"token"`
	Network      string `json:"network"`
	Label        string `json:"label"`
	TokenLabel   string `json:"tokenLabel"`
	NetworkLabel string `json:"networkLabel"`
	Status       string `json:"status"`
}

var networkLabels = map[payoutv1.Network]string{
	payoutv1.NetworkArbitrum: "Arbitrum", payoutv1.NetworkAvalanche: "Avalanche", payoutv1.NetworkBase: "Base",
	payoutv1.NetworkEthereum: "Ethereum", payoutv1.NetworkPolygon: "Polygon", payoutv1.NetworkSolana: "Solana",
	payoutv1.NetworkTron: "Tron",
}

// handleDepositOptions serves GET /api/payouts/deposit-options (spec 4.1) from the
// DepositOption resources: an option is available when an operator has it enabled and its
// controller found the network watched.
func (s *Server) handleDepositOptions(w http.ResponseWriter, r *http.Request, _ *Caller) error {
	body, err := s.options.body(r.Context(), s.stores)
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, body)
	return nil
}

// optionsBody keeps the encoded answer of GET deposit-options: it is a function of the
// DepositOption objects alone, which change a few times a day while every caller polls it, so it
// is encoded once per change the options' informer reports (stores.optionsGen) rather than read
// and encoded per request.
type optionsBody struct {
	encoded atomic.Pointer[encodedOptions]
}

type encodedOptions struct {
	gen  uint64 // the change count the body was read at
	body []byte
}

// body is the `{"options": [...]}` answer of spec 4.1. The change count is read before the
// options: a change that lands after that read counts again, so a body read from older options
// is never taken for the newer ones (at worst it is encoded once more).
func (o *optionsBody) body(ctx context.Context, st *stores) ([]byte, error) {
	gen := st.optionsGen.Load()
	if e := o.encoded.Load(); e != nil && e.gen == gen {
		return e.body, nil
	}
	items, err := st.depositOptions(ctx)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(map[string]any{"options": depositOptions(items)})
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	o.encoded.Store(&encodedOptions{gen: gen, body: b})
	return b, nil
}

// depositOptions are the entries of spec 2.3, by token then network: an option is available
// when an operator has it enabled and its controller found the network watched.
func depositOptions(items []payoutv1.DepositOption) []depositOption {
	opts := make([]depositOption, 0, len(items))
	for _, o := range items {
		tokenLabel := strings.ToUpper(string(o.Spec.Token))
		networkLabel := networkLabels[o.Spec.Network]
		label := o.Spec.Label
		if label == "" {
			label = tokenLabel + " on " + networkLabel
		}
		status := "unavailable"
		if o.Spec.Enabled && o.Status.Available {
			status = "available"
		}
		opts = append(opts, depositOption{Token: string(o.Spec.Token), Network: string(o.Spec.Network),
			Label: label, TokenLabel: tokenLabel, NetworkLabel: networkLabel, Status: status})
	}
	sort.Slice(opts, func(i, j int) bool {
		if opts[i].Token != opts[j].Token {
			return opts[i].Token < opts[j].Token
		}
		return opts[i].Network < opts[j].Network
	})
	return opts
}

// requirementsResponse is the body of spec 4.2 and 4.3.
type requirementsResponse struct {
	Data []bankaccount.AccountType `json:"data"`
}

// handleRequirements serves GET /api/payouts/account-requirements?currency= (spec 4.2). The
// other listing's source, target and sourceAmount parameters are accepted and ignored: the
// fields depend on the target currency only.
func (s *Server) handleRequirements(w http.ResponseWriter, r *http.Request, _ *Caller) error {
	currency, err := requirementsCurrency(r)
	if err != nil {
		return err
	}
	types, err := s.cfg.Catalog.Requirements(currency)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, requirementsResponse{Data: types})
	return nil
}

// handleRequirementsRefresh serves POST /api/payouts/account-requirements?currency= (spec 4.3):
// the field list for the details gathered so far.
func (s *Server) handleRequirementsRefresh(w http.ResponseWriter, r *http.Request, _ *Caller) error {
	currency, err := requirementsCurrency(r)
	if err != nil {
		return err
	}
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	typ, err := b.requiredStr("type")
	if err != nil {
		return err
	}
	details, _, err := b.object("details")
	if err != nil {
		return err
	}
	if err := b.unknown(); err != nil {
		return err
	}
	types, err := s.cfg.Catalog.Refresh(currency, typ, details)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, requirementsResponse{Data: types})
	return nil
}

func requirementsCurrency(r *http.Request) (string, error) {
	q := r.URL.Query()
	currency := q.Get("currency")
	if currency == "" {
		currency = q.Get("target")
	}
	if currency == "" {
		return "", apierror.FieldErrorf("currency", "is required (an ISO 4217 code of a supported currency)")
	}
	return currency, nil
}
