package apiserver

import (
	"net/http"
	"sort"
	"strings"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// The rate-limit budgets of spec 8.1: one per row of its table, shared by the methods the row
// lists.
const (
	budgetRequirements = "account-requirements"
	budgetDepositOpts  = "deposit-options"
	budgetFee          = "fee"
	budgetAmountLimits = "amount-limits"
	budgetQuote        = "quote"
	budgetTransferV1   = "transfer"
	budgetTransferV2   = "transfer-v2"
	budgetConfirm      = "confirm-transfer"
	budgetLookup       = "transfer-lookup"
	budgetRecipients   = "recipients"
	budgetRecipient    = "recipient"
)

// budgets are the per-minute limits of each budget.
var budgets = map[string]int64{
	budgetRequirements: 500,
	budgetDepositOpts:  60,
	budgetFee:          60,
	budgetAmountLimits: 60,
	budgetQuote:        20,
	budgetTransferV1:   20,
	budgetTransferV2:   20,
	budgetConfirm:      20,
	budgetLookup:       30,
	budgetRecipients:   30,
	budgetRecipient:    30,
}

// route is one endpoint of spec 4.
type route struct {
	method, path string
	budget       string
	handle       handlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"GET", "/api/payouts/deposit-options", budgetDepositOpts, s.handleDepositOptions},
		{"GET", "/api/payouts/account-requirements", budgetRequirements, s.handleRequirements},
		{"POST", "/api/payouts/account-requirements", budgetRequirements, s.handleRequirementsRefresh},
		{"GET", "/api/payouts/recipients", budgetRecipients, s.handleRecipientList},
		{"POST", "/api/payouts/recipients", budgetRecipients, s.handleRecipientCreate},
		{"GET", "/api/payouts/recipients/{id}", budgetRecipient, s.handleRecipientGet},
		{"PATCH", "/api/payouts/recipients/{id}", budgetRecipient, s.handleRecipientPatch},
		{"DELETE", "/api/payouts/recipients/{id}", budgetRecipient, s.handleRecipientDelete},
		{"GET", "/api/payouts/quote", budgetQuote, s.handleQuote},
		{"POST", "/api/payouts/transfer", budgetTransferV1, s.handleTransferV1},
		{"POST", "/api/payouts/transfer/v2", budgetTransferV2, s.handleTransferV2},
		{"POST", "/api/payouts/transfer/v2/confirm-transfer", budgetConfirm, s.handleConfirm},
		{"GET", "/api/payouts/transfer/{transfer_id}", budgetLookup, s.handleTransferGet},
		{"GET", "/api/payouts/amount-limits", budgetAmountLimits, s.handleAmountLimits},
		{"GET", "/api/payouts/fee", budgetFee, s.handleFee},
	}
}

// newMux routes the API and answers everything else with the error body: 405 with Allow for a
// known path and another method, 404 for an unknown path.
func (s *Server) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	paths := http.NewServeMux()
	allow := map[string][]string{}
	for _, rt := range s.routes() {
		mux.Handle(rt.method+" "+rt.path, s.guarded(rt.budget, rt.handle))
		allow[rt.path] = append(allow[rt.path], rt.method)
	}
	for path, methods := range allow {
		sort.Strings(methods)
		header := strings.Join(methods, ", ")
		paths.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", header)
			writeError(w, r, apierror.Errorf(apierror.MethodNotAllowed, "method %s is not allowed here; use %s", r.Method, header))
		})
	}
	paths.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, apierror.Errorf(apierror.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.HandleFunc("GET /readyz", s.handleReadyz)
	mux.HandleFunc("GET /openapi.json", s.handleOpenAPI)
	for _, m := range []string{"GET", "POST", "DELETE"} {
		mux.Handle(m+" "+MCPPath, s.mcp)
	}
	if s.cfg.Dashboard != nil {
		mux.Handle(DashboardPath, s.cfg.Dashboard)
	}
	mux.Handle("/", paths)
	return mux
}
