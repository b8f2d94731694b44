package dashboard

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// The transfers list. The API has no list endpoint (spec 4), so the list is read from the
// informer cache: the transfers in the account's namespace, so no other account's can appear.
// It is ordered newest first, then by id, and paged with a cursor naming the last row shown:
// a transfer made meanwhile does not shift the pages already seen.

const (
	defaultPageSize = 25
	maxPageSize     = 100
)

// transferRow is a transfer of the list.
type transferRow struct {
	ID, Status, StatusLabel, Amount, Currency, Network, Method string
	RecipientID                                                int64
	Holder                                                     string
	Created                                                    time.Time
}

// transferList is the list page: the filters as given, the rows, and the next page's query.
type transferList struct {
	Status, From, To, Recipient string
	Size                        int
	Rows                        []transferRow
	Next                        string
	Statuses                    []payoutv1.TransferPhase
}

// listStatuses are the statuses a lookup reports (transfer.LookupPhase), the filter's choices.
var listStatuses = []payoutv1.TransferPhase{payoutv1.PhaseReadyToProcess, payoutv1.PhaseProcessing, payoutv1.PhaseTransferCreated,
	payoutv1.PhaseCompleted, payoutv1.PhaseFailed, payoutv1.PhaseRefunded}

// cursor is the position after which a page starts: the last row of the page before.
type cursor struct {
	Created time.Time `json:"c"`
	Name    string    `json:"n"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	return c, err == nil && json.Unmarshal(b, &c) == nil && c.Name != ""
}

// before says whether a comes before b in the list: newer first, then by id.
func before(a, b cursor) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	return a.Name < b.Name
}

// listFilter is the list's query, checked.
type listFilter struct {
	status    string
	from, to  time.Time // to is exclusive: the day after the last day asked
	recipient int64
	size      int
	after     *cursor
}

// parseListFilter reads the query; a malformed value is a message for the user.
func parseListFilter(q url.Values) (listFilter, string) {
	f := listFilter{status: q.Get("status"), size: defaultPageSize}
	if f.status != "" && !slices.Contains(listStatuses, payoutv1.TransferPhase(f.status)) {
		return f, "status: not a status of a transfer"
	}
	for _, d := range []struct {
		name string
		into *time.Time
		add  int
	}{{"from", &f.from, 0}, {"to", &f.to, 1}} {
		if v := q.Get(d.name); v != "" {
			t, err := time.Parse(time.DateOnly, v)
			if err != nil {
				return f, d.name + ": a date is written 2006-01-02"
			}
			*d.into = t.AddDate(0, 0, d.add)
		}
	}
	if v := q.Get("recipient"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return f, "recipient: a recipient id is a positive integer"
		}
		f.recipient = id
	}
	if v := q.Get("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return f, "size: from 1 to " + strconv.Itoa(maxPageSize) + " transfers a page"
		}
		f.size = n
	}
	if v := q.Get("after"); v != "" {
		c, ok := decodeCursor(v)
		if !ok {
			return f, "after: this page's link is broken; start from the first page"
		}
		f.after = &c
	}
	return f, ""
}

func (f listFilter) keeps(t *payoutv1.Transfer, status payoutv1.TransferPhase) bool {
	created := t.CreationTimestamp.Time
	switch {
	case f.status != "" && string(status) != f.status:
		return false
	case !f.from.IsZero() && created.Before(f.from):
		return false
	case !f.to.IsZero() && !created.Before(f.to):
		return false
	case f.recipient != 0 && t.Spec.RecipientID != f.recipient:
		return false
	case f.after != nil && !before(*f.after, cursor{Created: created, Name: t.Name}):
		return false
	}
	return true
}

func (d *Dashboard) handleTransfers(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	l := &transferList{Status: q.Get("status"), From: q.Get("from"), To: q.Get("to"), Recipient: q.Get("recipient"), Statuses: listStatuses}
	f, msg := parseListFilter(q)
	l.Size = f.size
	if msg != "" {
		w.WriteHeader(http.StatusBadRequest)
		d.render(w, "transfers", page{Title: "Transfers", Session: s, Error: msg, Transfers: l})
		return
	}
	var list payoutv1.TransferList
	if err := d.cfg.Client.List(r.Context(), &list, client.InNamespace(payoutv1.AccountNamespace(s.account))); err != nil {
		d.unavailable(w, err, "listing an account's transfers")
		return
	}
	var rows []transferRow
	for i := range list.Items {
		t := &list.Items[i]
		status := transfer.LookupPhase(t)
		if t.Spec.Account != s.account || !f.keeps(t, status) {
			continue
		}
		rows = append(rows, transferRow{ID: t.Name, Status: string(status), StatusLabel: transfer.StatusLabels[status],
			Amount: string(t.Spec.Amount), Currency: string(t.Spec.Quote.TargetCurrency), Network: string(t.Spec.SourceNetwork),
			Method: string(t.Spec.Method), RecipientID: t.Spec.RecipientID, Holder: t.Spec.Recipient.AccountHolderName,
			Created: t.CreationTimestamp.UTC()})
	}
	slices.SortFunc(rows, func(a, b transferRow) int {
		if before(cursor{a.Created, a.ID}, cursor{b.Created, b.ID}) {
			return -1
		}
		return 1
	})
	if len(rows) > f.size {
		rows = rows[:f.size]
		last := rows[len(rows)-1]
		next := url.Values{}
		for _, k := range []string{"status", "from", "to", "recipient", "size"} {
			if v := q.Get(k); v != "" {
				next.Set(k, v)
			}
		}
		next.Set("after", cursor{Created: last.Created, Name: last.ID}.encode())
		l.Next = "transfers?" + next.Encode()
	}
	l.Rows = rows
	d.render(w, "transfers", page{Title: "Transfers", Session: s, Transfers: l})
}

// statusText is a status's label for the filter's choices.
func statusText(p payoutv1.TransferPhase) string { return transfer.StatusLabels[p] }
