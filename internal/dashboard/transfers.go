package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/skip2/go-qrcode"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// The quote and transfer pages (spec 4.1, 4.9 to 4.12). The quote and the create are the REST
// API's, called in process as the signed-in user (callAPI): a browser caller's quote has no
// quoteId (spec 5.6), so the create names none and the facade prices it as it would the quote
// shown (apiserver gatherTransfer), then admits it by the same rules as an integrator's. The
// transfer's own page reads the transfer from the cache (its account's namespace: another
// account's transfer is a missing one), with the deposit address as a QR code served from here
// and the status a script polls (transfer-status) until it ends.

// depositOption is an option of GET deposit-options (spec 2.3).
type depositOption struct {
	Token   string `json:"token"`
	Network string `json:"network"`
	Label   string `json:"label"`
	Status  string `json:"status"`
}

// Value is the option's form value, "token/network".
func (o depositOption) Value() string { return o.Token + "/" + o.Network }

// quoteShown is the API's quote (spec 2.4), its numbers as the API wrote them.
type quoteShown struct {
	SourceAmount      json.Number  `json:"sourceAmount"`
	ProviderCharge    *json.Number `json:"providerCharge"`
	ServiceFeePercent json.Number  `json:"serviceFeePercent"`
	ServiceFeeFixed   *json.Number `json:"serviceFeeFixed"`
	TargetCurrency    string       `json:"targetCurrency"`
	USDToTargetRate   json.Number  `json:"usdToTargetRate"`
	Quote             struct {
		TargetAmount      json.Number  `json:"targetAmount"`
		TransferFee       json.Number  `json:"transferFee"`
		FeeFxPercent      *json.Number `json:"feeFxPercent"`
		FeeFxAmount       *json.Number `json:"feeFxAmount"`
		FeePayoutAmount   *json.Number `json:"feePayoutAmount"`
		EstimatedDelivery string       `json:"estimatedDelivery"`
	} `json:"quote"`
}

// transferForm is the quote and create form with what was chosen so far.
type transferForm struct {
	Recipients []recipientRow
	Options    []depositOption
	// the choices
	RecipientID, Amount, Option, Method, Email, Wallet string
	Keep                                               bool
	// CustomerUUID is made when the form is shown: sending the form twice is the API's 409,
	// not a second transfer.
	CustomerUUID string
	Quote        *quoteShown
	// Errors are the API's messages by the field they name ("" for the whole form).
	Errors map[string]string
}

// transferFormOf reads the form's choices from the query (GET) or the posted form.
func transferFormOf(r *http.Request) *transferForm {
	_ = r.ParseForm() // a malformed body reads as an empty form, which the API refuses
	v := r.Form
	f := &transferForm{RecipientID: v.Get("recipientId"), Amount: strings.TrimSpace(v.Get("amount")), Option: v.Get("option"),
		Method: v.Get("method"), Email: strings.TrimSpace(v.Get("customer_email")), Wallet: strings.TrimSpace(v.Get("wallet_address")),
		Keep: v.Get("keep_recipient") == "on", CustomerUUID: v.Get("customer_uuid"), Errors: map[string]string{}}
	if f.Method != "v2" {
		f.Method = "v1"
	}
	if _, err := uuid.Parse(f.CustomerUUID); err != nil {
		f.CustomerUUID = uuid.NewString()
	}
	return f
}

// recipient is the chosen recipient of the list, nil when none is.
func (f *transferForm) recipient() *recipientRow {
	for i := range f.Recipients {
		if strconv.FormatInt(f.Recipients[i].ID, 10) == f.RecipientID {
			return &f.Recipients[i]
		}
	}
	return nil
}

// handleTransferNew shows the form (choices may be given in the query), and the API's quote for
// them with action=quote.
func (d *Dashboard) handleTransferNew(w http.ResponseWriter, r *http.Request, s *session) {
	f := transferFormOf(r)
	d.renderTransferForm(w, r, s, f, r.Form.Get("action") == "quote", http.StatusOK)
}

// renderTransferForm reads the account's recipients and the deposit options, and the quote
// when asked, and renders the form.
func (d *Dashboard) renderTransferForm(w http.ResponseWriter, r *http.Request, s *session, f *transferForm, quote bool, status int) {
	var recipients struct {
		Data []recipientRow `json:"data"`
	}
	var options struct {
		Options []depositOption `json:"options"`
	}
	for _, call := range []struct {
		path string
		into any
	}{{"/api/payouts/recipients", &recipients}, {"/api/payouts/deposit-options", &options}} {
		reply, err := d.callAPI(r.Context(), r, s, "GET", call.path, nil)
		if err != nil {
			d.unavailable(w, err, "reading the transfer form's choices")
			return
		}
		if reply.status != http.StatusOK || json.Unmarshal(reply.body, call.into) != nil {
			f.Errors[""] = reply.message()
			status = max(status, reply.status)
		}
	}
	f.Recipients, f.Options = recipients.Data, options.Options
	if quote && f.Errors[""] == "" {
		status = max(status, d.quote(r, s, f))
	}
	w.WriteHeader(status)
	d.render(w, "transfer-new", page{Title: "New transfer", Session: s, Transfer: f})
}

// quote asks the API for the quote of the form's amount in the chosen recipient's currency
// (GET quote, an e-mail recipient's without the transfer fee); its refusal is shown at the
// field it names, and its status is the page's.
func (d *Dashboard) quote(r *http.Request, s *session, f *transferForm) int {
	rc := f.recipient()
	if rc == nil {
		f.Errors["recipientId"] = "recipientId: choose a recipient"
		return http.StatusBadRequest
	}
	q := url.Values{"targetCurrency": {rc.Currency}, "sourceAmount": {f.Amount}}
	if rc.Type == bankaccount.EmailRecipientType {
		q.Set("recipientType", rc.Type)
	}
	reply, err := d.callAPI(r.Context(), r, s, "GET", "/api/payouts/quote?"+q.Encode(), nil)
	if err != nil {
		d.cfg.Log.Error(err, "asking for a quote")
		f.Errors[""] = "the quote could not be asked for; retry shortly"
		return http.StatusServiceUnavailable
	}
	var shown quoteShown
	if reply.status != http.StatusOK || json.Unmarshal(reply.body, &shown) != nil {
		f.setError(reply.message())
		return reply.status
	}
	f.Quote = &shown
	return http.StatusOK
}

// setError puts an API message beside the field it names (sourceAmount is the form's amount).
func (f *transferForm) setError(msg string) {
	field := fieldOf(msg)
	switch field {
	case "sourceAmount":
		field = "amount"
	case "amount", "recipientId", "customer_email", "wallet_address", "source_token", "source_network":
	default:
		field = ""
	}
	if field == "source_token" || field == "source_network" {
		field = "option"
	}
	f.Errors[field] = msg
}

// handleTransferCreate shows the quote of the posted form (action=quote), or creates its
// transfer (action=create: POST transfer or transfer/v2, the REST handler and its admission)
// and goes to its page; a refusal shows the form again with the API's message.
func (d *Dashboard) handleTransferCreate(w http.ResponseWriter, r *http.Request, s *session) {
	f := transferFormOf(r)
	if r.PostFormValue("action") != "create" {
		// the form's default button (Enter in a field) asks for the quote: it creates nothing
		d.renderTransferForm(w, r, s, f, true, http.StatusOK)
		return
	}
	token, network, _ := strings.Cut(f.Option, "/")
	body := map[string]any{"customer_uuid": f.CustomerUUID,
		"source_token": token, "source_network": network, "keep_recipient": f.Keep}
	// what is not a number goes as typed, so that the API's decoding answers it
	if id, err := strconv.ParseInt(f.RecipientID, 10, 64); err == nil {
		body["recipientId"] = id
	} else if f.RecipientID != "" {
		body["recipientId"] = f.RecipientID
	}
	if a, err := decimal.NewFromString(f.Amount); err == nil {
		body["amount"] = json.Number(a.String())
	} else if f.Amount != "" {
		body["amount"] = f.Amount
	} else {
		delete(body, "amount")
	}
	if f.Email != "" || f.Method == "v1" {
		body["customer_email"] = f.Email
	}
	if f.Wallet != "" || f.Method == "v1" {
		body["wallet_address"] = f.Wallet
	}
	path := "/api/payouts/transfer"
	if f.Method == "v2" {
		path += "/v2"
	}
	reply, err := d.callAPI(r.Context(), r, s, "POST", path, body)
	if err != nil {
		d.unavailable(w, err, "creating a transfer")
		return
	}
	if reply.status != http.StatusOK {
		f.setError(reply.message())
		d.renderTransferForm(w, r, s, f, false, reply.status)
		return
	}
	var made struct {
		TransferID string `json:"transfer_id"`
		Transfer   struct {
			ID string `json:"id"`
		} `json:"transfer"`
	}
	_ = json.Unmarshal(reply.body, &made)
	id := made.Transfer.ID + made.TransferID
	d.cfg.Log.Info("transfer created from the dashboard", "account", s.account, "transfer", id, "method", f.Method, "subject", s.subject)
	http.Redirect(w, r, d.path("transfer?id="+url.QueryEscape(id)), http.StatusSeeOther)
}

// ownTransfer reads the transfer of ?id= of the session's account: from the cache, or past it
// for one made a moment ago. Another account's transfer, like a missing one, is 404: the API's
// lookup is global (spec 4.15), but these pages are the account's own.
func (d *Dashboard) ownTransfer(w http.ResponseWriter, r *http.Request, s *session) (*payoutv1.Transfer, bool) {
	id := r.URL.Query().Get("id")
	key := client.ObjectKey{Namespace: payoutv1.AccountNamespace(s.account), Name: id}
	t := &payoutv1.Transfer{}
	err := d.cfg.Client.Get(r.Context(), key, t)
	if client.IgnoreNotFound(err) == nil && err != nil {
		err = d.cfg.Reader.Get(r.Context(), key, t)
	}
	if client.IgnoreNotFound(err) != nil {
		d.unavailable(w, err, "reading a transfer")
		return nil, false
	}
	if err != nil || t.Spec.Account != s.account {
		http.Error(w, "no such transfer", http.StatusNotFound)
		return nil, false
	}
	return t, true
}

// transferStatus is the status of a transfer as its page shows it and its script polls it.
type transferStatus struct {
	Status       string       `json:"status"`
	StatusLabel  string       `json:"statusLabel"`
	Ended        bool         `json:"ended"`
	Error        string       `json:"error,omitempty"`
	RefundTxHash string       `json:"refundTxHash,omitempty"`
	UpdatedAt    string       `json:"updatedAt"`
	History      []statusLine `json:"history"`
}

type statusLine struct {
	Status  string `json:"status"`
	Label   string `json:"label"`
	At      string `json:"at"`
	Message string `json:"message,omitempty"`
}

// statusOf is the public status of t (transfer.LookupPhase, the API's lookup) and its history.
func statusOf(t *payoutv1.Transfer) transferStatus {
	phase := transfer.LookupPhase(t)
	st := transferStatus{Status: string(phase), StatusLabel: transfer.StatusLabels[phase], Error: t.Status.ErrorText(),
		UpdatedAt: t.CreationTimestamp.UTC().Format(timeFormat), History: []statusLine{}}
	if t.Status.UpdatedAt != nil {
		st.UpdatedAt = t.Status.UpdatedAt.UTC().Format(timeFormat)
	}
	switch phase {
	case payoutv1.PhaseCompleted, payoutv1.PhaseFailed, payoutv1.PhaseRefunded:
		st.Ended = true
	}
	if phase == payoutv1.PhaseRefunded && t.Status.Refund != nil {
		st.RefundTxHash = t.Status.Refund.TxHash
	}
	for _, h := range t.Status.History {
		st.History = append(st.History, statusLine{Status: string(h.Status), Label: transfer.StatusLabels[h.Status],
			At: h.At.UTC().Format(timeFormat), Message: h.Message})
	}
	return st
}

const timeFormat = "2006-01-02 15:04:05 UTC"

// transferPage is a transfer's page.
type transferPage struct {
	T      *payoutv1.Transfer
	Status transferStatus
	// ConfirmError is the API's refusal of a v2 hash.
	ConfirmError, TxHash string
}

// V2 says whether the transfer is v2 (a fixed address and a hash to confirm).
func (p transferPage) V2() bool { return p.T.Spec.Method == payoutv1.TransferV2 }

func (d *Dashboard) handleTransfer(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := d.ownTransfer(w, r, s)
	if !ok {
		return
	}
	d.renderTransfer(w, s, &transferPage{T: t, Status: statusOf(t), TxHash: t.Spec.TxHash}, http.StatusOK)
}

func (d *Dashboard) renderTransfer(w http.ResponseWriter, s *session, p *transferPage, status int) {
	w.WriteHeader(status)
	d.render(w, "transfer", page{Title: "Transfer " + p.T.Name, Session: s, TransferPage: p})
}

// handleTransferStatus is the transfer's status as JSON, for its page's script.
func (d *Dashboard) handleTransferStatus(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := d.ownTransfer(w, r, s)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(statusOf(t))
}

// qrSize is the QR code's side in pixels: a phone's camera reads it off a laptop's screen.
const qrSize = 256

// handleTransferQR is the deposit address as a QR code (PNG), served from the dashboard's own
// origin (the CSP's img-src 'self'): the address alone, which every wallet's scanner reads.
func (d *Dashboard) handleTransferQR(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := d.ownTransfer(w, r, s)
	if !ok {
		return
	}
	png, err := qrcode.Encode(t.Spec.DepositAddress, qrcode.Medium, qrSize)
	if err != nil {
		d.cfg.Log.Error(err, "drawing a deposit address's QR code", "transfer", t.Name)
		http.Error(w, "the QR code could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(png)
}

// handleTransferConfirm confirms a v2 transfer's deposit hash (POST confirm-transfer).
func (d *Dashboard) handleTransferConfirm(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := d.ownTransfer(w, r, s)
	if !ok {
		return
	}
	hash := strings.TrimSpace(r.PostFormValue("tx_hash"))
	reply, err := d.callAPI(r.Context(), r, s, "POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": t.Name, "tx_hash": hash})
	if err != nil {
		d.unavailable(w, err, "confirming a transfer's hash")
		return
	}
	if reply.status != http.StatusOK {
		d.renderTransfer(w, s, &transferPage{T: t, Status: statusOf(t), TxHash: hash, ConfirmError: reply.message()}, reply.status)
		return
	}
	d.cfg.Log.Info("v2 hash confirmed from the dashboard", "account", s.account, "transfer", t.Name, "subject", s.subject)
	http.Redirect(w, r, d.path("transfer?id="+url.QueryEscape(t.Name)), http.StatusSeeOther)
}
