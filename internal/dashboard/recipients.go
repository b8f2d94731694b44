package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/stablepay/payout-operator/internal/bankaccount"
)

// The recipients pages (spec 4.2 to 4.8). They are rendered on the server from the REST API's
// own answers, called in process as the signed-in user (callAPI): the form of every currency
// and account type is built from GET and POST account-requirements, the endpoints integrators
// call, so all of the catalog's currencies work without a form written for any; the list,
// create, edit and delete are the API's, with its rules and its error messages. A page works
// without its script; the script only refreshes the form when a refresh-on-change field
// changes.

// recipientRow is a recipient of the list (spec 2.1).
type recipientRow struct {
	ID                int64          `json:"id"`
	AccountHolderName string         `json:"accountHolderName"`
	Currency          string         `json:"currency"`
	Type              string         `json:"type"`
	Details           map[string]any `json:"details"`
}

// Summary is the row's account in one line: its details but the address and legal type.
func (r recipientRow) Summary() string {
	flat := flatten(r.Details)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		if k != "legalType" && !strings.HasPrefix(k, "address.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + flat[k]
	}
	return strings.Join(parts, ", ")
}

// recipientForm is the create or edit form of one currency.
type recipientForm struct {
	Action   string // the form's URL, relative to the dashboard
	ID       int64  // the recipient edited; 0 for a new one
	Currency string
	Type     string
	Types    []bankaccount.AccountType
	Groups   []formGroup
	Holder   string
	Wallet   string
	// Errors are the API's messages by the form field they name ("" for the whole form).
	Errors map[string]string
}

type formGroup struct {
	Name   string
	Fields []formField
}

// formField is an account-requirements field with the value gathered so far.
type formField struct {
	bankaccount.Field
	Value string
	Error string
}

// ID is the field's HTML id.
func (f formField) ID() string { return "d-" + strings.ReplaceAll(f.Key, ".", "-") }

func (d *Dashboard) handleRecipients(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderRecipients(w, r, s, "", http.StatusOK)
}

func (d *Dashboard) renderRecipients(w http.ResponseWriter, r *http.Request, s *session, msg string, status int) {
	p := page{Title: "Recipients", Session: s, Currencies: d.cfg.Currencies, Error: msg}
	reply, err := d.callAPI(r.Context(), r, s, "GET", "/api/payouts/recipients", nil)
	if err != nil {
		d.unavailable(w, err, "listing recipients")
		return
	}
	var list struct {
		Data []recipientRow `json:"data"`
	}
	if reply.status != http.StatusOK || json.Unmarshal(reply.body, &list) != nil {
		if p.Error == "" {
			p.Error = reply.message()
		}
		status = max(status, reply.status)
	}
	p.Recipients = list.Data
	w.WriteHeader(status)
	d.render(w, "recipients", p)
}

// handleRecipientForm shows the form of a recipient (?id=) or of a new one of a currency
// (?currency=), for its first account type or the one asked (?type=).
func (d *Dashboard) handleRecipientForm(w http.ResponseWriter, r *http.Request, s *session) {
	if r.URL.Query().Has("id") {
		d.handleRecipientEdit(w, r, s)
		return
	}
	f := &recipientForm{Action: "recipient?currency=" + url.QueryEscape(r.URL.Query().Get("currency")),
		Currency: r.URL.Query().Get("currency"), Type: r.URL.Query().Get("type")}
	d.renderForm(w, r, s, f, nil, "", 0)
}

// handleRecipientPost saves or refreshes the form of a recipient (?id=) or a new one.
func (d *Dashboard) handleRecipientPost(w http.ResponseWriter, r *http.Request, s *session) {
	if r.URL.Query().Has("id") {
		d.handleRecipientUpdate(w, r, s)
		return
	}
	d.handleRecipientCreate(w, r, s)
}

// handleRecipientCreate refreshes the form (action=refresh: a refresh-on-change field or the
// type changed) or creates the recipient (POST recipients).
func (d *Dashboard) handleRecipientCreate(w http.ResponseWriter, r *http.Request, s *session) {
	f, details := formOf(r)
	f.Currency = r.URL.Query().Get("currency")
	f.Action = "recipient?currency=" + url.QueryEscape(f.Currency)
	if r.PostFormValue("action") != "save" {
		d.renderForm(w, r, s, f, details, "", 0)
		return
	}
	body := map[string]any{"currency": f.Currency, "type": f.Type, "accountHolderName": f.Holder, "details": details}
	if f.Wallet != "" {
		body["wallet"] = f.Wallet
	}
	reply, err := d.callAPI(r.Context(), r, s, "POST", "/api/payouts/recipients", body)
	if err != nil {
		d.unavailable(w, err, "creating a recipient")
		return
	}
	if reply.status != http.StatusCreated {
		d.renderForm(w, r, s, f, details, reply.message(), reply.status)
		return
	}
	d.cfg.Log.Info("recipient created from the dashboard", "account", s.account, "currency", f.Currency, "type", f.Type, "subject", s.subject)
	http.Redirect(w, r, d.path("recipients"), http.StatusSeeOther)
}

// handleRecipientEdit shows the form of a recipient with its details.
func (d *Dashboard) handleRecipientEdit(w http.ResponseWriter, r *http.Request, s *session) {
	rc, ok := d.recipient(w, r, s)
	if !ok {
		return
	}
	f := &recipientForm{Action: "recipient?id=" + strconv.FormatInt(rc.ID, 10), ID: rc.ID, Currency: rc.Currency, Type: rc.Type, Holder: rc.AccountHolderName}
	d.renderForm(w, r, s, f, rc.Details, "", 0)
}

// recipient reads the recipient of ?id= (GET recipients/{id}); when the API refuses, the list
// page with its message is the answer.
func (d *Dashboard) recipient(w http.ResponseWriter, r *http.Request, s *session) (recipientRow, bool) {
	var rc recipientRow
	id, ok := recipientID(w, r)
	if !ok {
		return rc, false
	}
	reply, err := d.callAPI(r.Context(), r, s, "GET", "/api/payouts/recipients/"+strconv.FormatInt(id, 10), nil)
	if err != nil {
		d.unavailable(w, err, "reading a recipient")
		return rc, false
	}
	if reply.status != http.StatusOK || json.Unmarshal(reply.body, &rc) != nil {
		d.renderRecipients(w, r, s, reply.message(), reply.status)
		return rc, false
	}
	return rc, true
}

// handleRecipientUpdate refreshes the form or saves it (PATCH recipients/{id}: the holder and
// every detail, as spec 4.7 asks). The recipient's currency and type are its own, not the form's.
func (d *Dashboard) handleRecipientUpdate(w http.ResponseWriter, r *http.Request, s *session) {
	rc, ok := d.recipient(w, r, s)
	if !ok {
		return
	}
	id := rc.ID
	path := "/api/payouts/recipients/" + strconv.FormatInt(id, 10)
	f, details := formOf(r)
	f.Action, f.ID, f.Currency, f.Type = "recipient?id="+strconv.FormatInt(id, 10), id, rc.Currency, rc.Type
	if r.PostFormValue("action") != "save" {
		d.renderForm(w, r, s, f, details, "", 0)
		return
	}
	body := map[string]any{"accountHolderName": f.Holder, "details": details}
	if f.Wallet != "" {
		body["wallet"] = f.Wallet
	}
	reply, err := d.callAPI(r.Context(), r, s, "PATCH", path, body)
	if err != nil {
		d.unavailable(w, err, "updating a recipient")
		return
	}
	if reply.status != http.StatusOK {
		d.renderForm(w, r, s, f, details, reply.message(), reply.status)
		return
	}
	d.cfg.Log.Info("recipient updated from the dashboard", "account", s.account, "recipient", id, "subject", s.subject)
	http.Redirect(w, r, d.path("recipients"), http.StatusSeeOther)
}

// handleRecipientDelete deletes a recipient (?id=; DELETE recipients/{id}, with the wallet when
// given).
func (d *Dashboard) handleRecipientDelete(w http.ResponseWriter, r *http.Request, s *session) {
	id, ok := recipientID(w, r)
	if !ok {
		return
	}
	path := "/api/payouts/recipients/" + strconv.FormatInt(id, 10)
	if wallet := strings.TrimSpace(r.PostFormValue("wallet")); wallet != "" {
		path += "?wallet=" + url.QueryEscape(wallet)
	}
	reply, err := d.callAPI(r.Context(), r, s, "DELETE", path, nil)
	if err != nil {
		d.unavailable(w, err, "deleting a recipient")
		return
	}
	if reply.status != http.StatusOK {
		d.renderRecipients(w, r, s, reply.message(), reply.status)
		return
	}
	d.cfg.Log.Info("recipient deleted from the dashboard", "account", s.account, "recipient", id, "subject", s.subject)
	http.Redirect(w, r, d.path("recipients"), http.StatusSeeOther)
}

func recipientID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil || id <= 0 {
		http.Error(w, "no such recipient", http.StatusNotFound)
		return 0, false
	}
	return id, true
}

func (d *Dashboard) unavailable(w http.ResponseWriter, err error, what string) {
	d.cfg.Log.Error(err, what)
	http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
}

// formOf reads a posted form: the type, holder and wallet, and the details (fields "d.<key>",
// a dotted key a member of a nested object); empty fields are not given.
func formOf(r *http.Request) (*recipientForm, map[string]any) {
	f := &recipientForm{Type: r.PostFormValue("type"), Holder: strings.TrimSpace(r.PostFormValue("accountHolderName")),
		Wallet: strings.TrimSpace(r.PostFormValue("wallet"))}
	details := map[string]any{}
	for name, vs := range r.PostForm {
		key, ok := strings.CutPrefix(name, "d.")
		if !ok || len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if parent, child, nested := strings.Cut(key, "."); nested {
			m, _ := details[parent].(map[string]any)
			if m == nil {
				m = map[string]any{}
				details[parent] = m
			}
			m[child] = v
			continue
		}
		details[key] = v
	}
	return f, details
}

// flatten keys details as the requirements do ("address.city").
func flatten(details map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range details {
		switch v := v.(type) {
		case string:
			out[k] = v
		case map[string]any:
			for ck, cv := range v {
				if s, ok := cv.(string); ok {
					out[k+"."+ck] = s
				}
			}
		}
	}
	return out
}

// emailType is spec 2.1.1's e-mail recipient: EUR only, no account requirements (4.2 does not
// list it and 4.3 refuses it), its one field fixed by the spec.
var emailType = bankaccount.AccountType{Type: bankaccount.EmailRecipientType, Title: "E-mail recipient",
	Fields: []bankaccount.FieldGroup{{Name: "E-mail", Group: []bankaccount.Field{{Key: "email", Name: "E-mail address", Type: "text", Required: true}}}}}

// renderForm asks the API for the currency's account types, with f.Type's fields resolved for
// the details gathered so far (POST account-requirements) once there are any, and renders the
// form with them; msg is an API error of the last save, shown beside the field it names.
func (d *Dashboard) renderForm(w http.ResponseWriter, r *http.Request, s *session, f *recipientForm, details map[string]any, msg string, status int) {
	q := "/api/payouts/account-requirements?currency=" + url.QueryEscape(f.Currency)
	var (
		reply apiReply
		err   error
	)
	if f.Type == "" || f.Type == bankaccount.EmailRecipientType || len(details) == 0 {
		reply, err = d.callAPI(r.Context(), r, s, "GET", q, nil)
	} else {
		reply, err = d.callAPI(r.Context(), r, s, "POST", q, map[string]any{"type": f.Type, "details": details})
	}
	if err != nil {
		d.unavailable(w, err, "reading account requirements")
		return
	}
	var reqs struct {
		Data []bankaccount.AccountType `json:"data"`
	}
	if reply.status != http.StatusOK || json.Unmarshal(reply.body, &reqs) != nil {
		if f.ID == 0 {
			// an unknown currency or type: the API's word on the list page
			d.renderRecipients(w, r, s, reply.message(), reply.status)
			return
		}
		msg, status = reply.message(), reply.status
	}
	f.Types = reqs.Data
	if f.Currency == "EUR" {
		f.Types = append(f.Types, emailType)
	}
	var chosen *bankaccount.AccountType
	for i := range f.Types {
		if f.Types[i].Type == f.Type {
			chosen = &f.Types[i]
		}
	}
	if chosen == nil && len(f.Types) > 0 {
		chosen = &f.Types[0]
		f.Type = chosen.Type
	}
	f.Errors = map[string]string{}
	if msg != "" {
		field := strings.TrimPrefix(fieldOf(msg), "details.")
		f.Errors[field] = msg
	}
	values := flatten(details)
	if chosen != nil {
		for _, g := range chosen.Fields {
			fg := formGroup{Name: g.Name}
			for _, fd := range g.Group {
				fg.Fields = append(fg.Fields, formField{Field: fd, Value: values[fd.Key], Error: f.Errors[fd.Key]})
				delete(f.Errors, fd.Key)
			}
			f.Groups = append(f.Groups, fg)
		}
	}
	// a message about no field of the form is the form's
	for k, v := range f.Errors {
		if k != "accountHolderName" && k != "wallet" && k != "type" && k != "" {
			f.Errors[""] = v
			delete(f.Errors, k)
		}
	}
	title := "New recipient"
	if f.ID != 0 {
		title = "Edit recipient " + strconv.FormatInt(f.ID, 10)
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	d.render(w, "recipient", page{Title: title, Session: s, Form: f})
}
