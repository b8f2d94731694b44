package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/text"
)

// recipientJSON is the recipient of spec 2.1.
type recipientJSON struct {
	ID                int64          `json:"id"`
	AccountHolderName string         `json:"accountHolderName"`
	Currency          string         `json:"currency"`
	Type              string         `json:"type"`
	Active            bool           `json:"active"`
	Details           map[string]any `json:"details"`
	Country           *string        `json:"country"`
}

func recipientView(rc *payoutv1.Recipient) recipientJSON {
	var country *string
	if rc.Spec.Country != "" {
		c := string(rc.Spec.Country)
		country = &c
	}
	return recipientJSON{
		ID: rc.Spec.ID, AccountHolderName: rc.Spec.AccountHolderName, Currency: string(rc.Spec.Currency),
		Type: rc.Spec.Type, Active: !rc.Spec.Deactivated, Details: detailsToAPI(rc.Spec.Details), Country: country,
	}
}

// maxHolderName bounds accountHolderName (the schema's limit).
const maxHolderName = 256

// maxRecipientPage bounds a page of the recipient list: the default page, and the largest limit.
// An account of at most this many active recipients (the default quota) gets them all in one
// response, as spec 4.4 describes.
const maxRecipientPage = 1000

// handleRecipientList serves GET /api/payouts/recipients (spec 4.4): the account's active
// recipients, oldest first, a page at a time (Stripe's convention): at most limit of them
// (1 to 1000, default 1000), after the recipient starting_after when given; has_more says whether
// more follow the page.
func (s *Server) handleRecipientList(w http.ResponseWriter, r *http.Request, c *Caller) error {
	limit, after, err := s.recipientPageQuery(r, c)
	if err != nil {
		return err
	}
	var page []recipientJSON
	var more bool
	if s.book != nil && s.book.synced() {
		page, more, err = s.recipientPage(r.Context(), c, after, limit)
	} else {
		page, more, err = s.recipientPageListed(r.Context(), c, after, limit)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, recipientListJSON{Data: page, HasMore: more})
	return nil
}

// recipientListJSON is the list of spec 4.4 with Stripe's has_more.
type recipientListJSON struct {
	Data    []recipientJSON `json:"data"`
	HasMore bool            `json:"has_more"`
}

// recipientPageQuery reads limit and starting_after; starting_after must name a recipient of the
// caller's account that the cache holds (active or not: a page may end at a recipient deleted
// since).
func (s *Server) recipientPageQuery(r *http.Request, c *Caller) (int, *bookEntry, error) {
	q := r.URL.Query()
	limit := maxRecipientPage
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxRecipientPage {
			return 0, nil, apierror.FieldErrorf("limit", "must be an integer from 1 to %d", maxRecipientPage)
		}
		limit = n
	}
	if !q.Has("starting_after") {
		return limit, nil, nil
	}
	idText := q.Get("starting_after")
	rc := &payoutv1.Recipient{}
	if !isIntegerText(idText) || s.cfg.Client.Get(r.Context(), client.ObjectKey{Namespace: c.Namespace(), Name: idText}, rc) != nil {
		return 0, nil, apierror.FieldErrorf("starting_after", "must be the id of a recipient of this account")
	}
	e := entryOf(rc)
	return limit, &e, nil
}

// recipientPage is a page from the book: only its recipients are read from the cache.
func (s *Server) recipientPage(ctx context.Context, c *Caller, after *bookEntry, limit int) ([]recipientJSON, bool, error) {
	ids, more := s.book.page(c.Namespace(), after, limit)
	data := make([]recipientJSON, 0, len(ids))
	rc := &payoutv1.Recipient{}
	for _, id := range ids {
		err := s.cfg.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace(), Name: strconv.FormatInt(id, 10)}, rc)
		if apierrors.IsNotFound(err) {
			continue // deleted since the book was read
		}
		if err != nil {
			return nil, false, err
		}
		if !rc.Spec.Deactivated {
			data = append(data, recipientView(rc))
		}
	}
	return data, more, nil
}

// recipientPageListed is a page from a list of the account's active recipients, for a facade
// without the book (or before it has synced): it copies every one of them.
func (s *Server) recipientPageListed(ctx context.Context, c *Caller, after *bookEntry, limit int) ([]recipientJSON, bool, error) {
	list := &payoutv1.RecipientList{}
	if err := s.cfg.Client.List(ctx, list, client.InNamespace(c.Namespace()), client.MatchingFields{index.RecipientActive: "true"}); err != nil {
		return nil, false, err
	}
	items := list.Items
	slices.SortFunc(items, func(a, b payoutv1.Recipient) int { return entryOf(&a).compare(entryOf(&b)) })
	if after != nil {
		i, _ := slices.BinarySearchFunc(items, *after, func(rc payoutv1.Recipient, e bookEntry) int { return entryOf(&rc).compare(e) })
		if i < len(items) && entryOf(&items[i]) == *after {
			i++
		}
		items = items[i:]
	}
	more := len(items) > limit
	items = items[:min(limit, len(items))]
	data := make([]recipientJSON, 0, len(items))
	for i := range items {
		data = append(data, recipientView(&items[i]))
	}
	return data, more, nil
}

// handleRecipientCreate serves POST /api/payouts/recipients (spec 4.5): KYC wallet (rule 1),
// details (rule 2 and the account type's formats), sanctions screening (rule 3), then create.
func (s *Server) handleRecipientCreate(w http.ResponseWriter, r *http.Request, c *Caller) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	currency, err := b.requiredStr("currency")
	if err != nil {
		return err
	}
	typ, err := b.requiredStr("type")
	if err != nil {
		return err
	}
	name, err := holderName(b)
	if err != nil {
		return err
	}
	details, ok, err := b.object("details")
	if err != nil {
		return err
	}
	if !ok {
		return apierror.FieldErrorf("details", "is required")
	}
	wallet, walletGiven, err := b.str("wallet")
	if err != nil {
		return err
	}
	if err := b.unknown(); err != nil {
		return err
	}
	if err := s.checkWallet(r.Context(), c, "wallet", wallet, walletGiven); err != nil {
		return err
	}
	valid, err := s.cfg.Catalog.Validate(currency, typ, details)
	if err != nil {
		return err
	}
	if err := s.screen(r.Context(), c, name, valid.Address); err != nil {
		return err
	}
	stored, err := detailsFromAPI(details)
	if err != nil {
		return err
	}
	rc := &payoutv1.Recipient{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace()},
		Spec: payoutv1.RecipientSpec{
			AccountHolderName: name, Currency: payoutv1.CurrencyCode(valid.Currency), Type: valid.Type,
			Details: stored, Country: payoutv1.CountryCode(valid.Country), Wallet: payoutv1.NormalizeWallet(wallet),
		},
	}
	free, err := s.reserveActiveRecipient(r.Context(), c)
	if err != nil {
		return err
	}
	if _, err := s.createRecipient(r.Context(), c, rc); err != nil {
		free()
		return err
	}
	s.freeWhenCounted(r.Context(), rc, free)
	writeJSON(w, http.StatusCreated, recipientView(rc))
	return nil
}

// handleRecipientGet serves GET /api/payouts/recipients/{id} (spec 4.6). A deleted recipient
// stays readable, inactive.
func (s *Server) handleRecipientGet(w http.ResponseWriter, r *http.Request, c *Caller) error {
	rc, err := s.findRecipient(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if isArchived(rc) {
		return s.writeArchivedRecipient(r.Context(), w, rc)
	}
	writeJSON(w, http.StatusOK, recipientView(rc))
	return nil
}

// handleRecipientPatch serves PATCH /api/payouts/recipients/{id} (spec 4.7). Recipients are
// immutable, as bank accounts at a payout provider are: an update creates a new recipient with
// a new id and deactivates the old one, so transfers in flight keep the recipient they were
// created for. Any change is re-screened (a new address can complete a sanctions match as
// surely as a new name), and a refused update changes nothing.
func (s *Server) handleRecipientPatch(w http.ResponseWriter, r *http.Request, c *Caller) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	name, nameGiven, err := b.str("accountHolderName")
	if err != nil {
		return err
	}
	details, detailsGiven, err := b.object("details")
	if err != nil {
		return err
	}
	wallet, walletGiven, err := b.str("wallet")
	if err != nil {
		return err
	}
	if err := b.unknown(); err != nil {
		return err
	}
	if !nameGiven && !detailsGiven {
		return apierror.Errorf(apierror.Invalid, "at least one of accountHolderName and details is required")
	}
	if nameGiven {
		if name, err = checkHolderName(name); err != nil {
			return err
		}
	}
	old, err := s.findRecipient(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.checkWallet(r.Context(), c, "wallet", wallet, walletGiven); err != nil {
		return err
	}
	if old.Spec.Deactivated {
		return s.superseded(r.Context(), old)
	}

	next := old.Spec.DeepCopy()
	next.ID, next.Deactivated, next.ReplacedBy = 0, false, nil
	if walletGiven {
		next.Wallet = payoutv1.NormalizeWallet(wallet)
	}
	if nameGiven {
		next.AccountHolderName = name
	}
	address, country := storedAddress(old), string(old.Spec.Country)
	if detailsGiven {
		valid, err := s.cfg.Catalog.Validate(string(old.Spec.Currency), old.Spec.Type, details)
		if err != nil {
			return err
		}
		if next.Details, err = detailsFromAPI(details); err != nil {
			return err
		}
		// Screening takes the address from the new details if they have one, else from the
		// stored recipient; an update that does not touch the address keeps the stored
		// country (spec 4.7).
		if valid.Address != nil {
			address = valid.Address
		}
		if valid.Address != nil || old.Spec.Country == "" {
			country = valid.Country
		}
	}
	next.Country = payoutv1.CountryCode(country)
	if err := s.screen(r.Context(), c, next.AccountHolderName, address); err != nil {
		return err
	}

	// The replacement exists before the old recipient is retired: a crash in between leaves a
	// duplicate, never a recipient lost. A request that cannot retire it (another update or a
	// delete won the race, or the write failed) withdraws its replacement, so that no second
	// active recipient and no claim of it remain.
	rc := &payoutv1.Recipient{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(),
		Labels: map[string]string{payoutv1.RecipientLineageLabel: old.Lineage()}}, Spec: *next}
	claim, err := s.createRecipient(r.Context(), c, rc)
	if err != nil {
		return err
	}
	if err := s.retire(r.Context(), old, rc); err != nil {
		s.withdraw(r.Context(), rc, claim)
		return err
	}
	writeJSON(w, http.StatusOK, recipientView(rc))
	return nil
}

// retire deactivates old in favour of its replacement. The write carries the resourceVersion
// it was computed from: of two updates racing on one recipient only one retires it, and the
// other is answered as a PATCH of a retired recipient (superseded). A conflict from any other
// change (a status write) is retried on a fresh read, a bounded number of times with backoff.
func (s *Server) retire(ctx context.Context, old, replacement *payoutv1.Recipient) error {
	cur := old.DeepCopy()
	var lost *payoutv1.Recipient
	err := retryConflict(ctx, func() error {
		retired := cur.DeepCopy()
		retired.Spec.Deactivated, retired.Spec.ReplacedBy = true, &replacement.Spec.ID
		err := s.cfg.Client.Patch(ctx, retired, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			fresh := &payoutv1.Recipient{}
			if gerr := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(cur), fresh); gerr != nil {
				return gerr
			}
			if fresh.Spec.Deactivated {
				lost = fresh
				return nil
			}
			cur = fresh
			return err
		}
		if err != nil {
			return err
		}
		s.awaitCached(ctx, retired)
		return nil
	})
	if err != nil {
		return err
	}
	if lost != nil {
		return s.superseded(ctx, lost)
	}
	return nil
}

// superseded answers an update of a recipient that is no longer active: 409 naming the
// recipient's latest id when an update replaced it (spec 2.1: always use the id from the
// latest response), 400 when it was deleted.
func (s *Server) superseded(ctx context.Context, rc *payoutv1.Recipient) error {
	if rc.Spec.ReplacedBy == nil {
		return apierror.Errorf(apierror.Invalid, "recipient %d is deleted and cannot be updated", rc.Spec.ID)
	}
	latest := s.latestRecipient(ctx, rc)
	replaced := fmt.Sprintf("recipient %d was replaced by recipient %d in an update", rc.Spec.ID, *rc.Spec.ReplacedBy)
	if latest.Spec.Deactivated && latest.Spec.ReplacedBy == nil {
		return apierror.Errorf(apierror.Conflict, "%s; its latest id %d is deleted", replaced, latest.Spec.ID)
	}
	return apierror.Errorf(apierror.Conflict, "%s; use its latest id %d", replaced, latest.Spec.ID)
}

// maxReplacements bounds the walk along replacedBy: an update chain longer than this is named
// by the last id reached, still a newer one than the caller's.
const maxReplacements = 32

// latestRecipient follows replacedBy from rc to the newest recipient of its lineage that the
// reads reach. The latest update may not be cached yet: it is read past the cache.
func (s *Server) latestRecipient(ctx context.Context, rc *payoutv1.Recipient) *payoutv1.Recipient {
	latest := rc
	for range maxReplacements {
		if latest.Spec.ReplacedBy == nil {
			break
		}
		next := &payoutv1.Recipient{}
		key := client.ObjectKey{Namespace: latest.Namespace, Name: strconv.FormatInt(*latest.Spec.ReplacedBy, 10)}
		if err := s.cfg.APIReader.Get(ctx, key, next); err != nil {
			if archived, ok := s.archivedReplacement(ctx, key.Namespace, *latest.Spec.ReplacedBy); ok {
				latest = archived
				continue
			}
			// a replacement that is not there (yet or any more) is still the latest id known
			return &payoutv1.Recipient{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Spec: payoutv1.RecipientSpec{ID: *latest.Spec.ReplacedBy}}
		}
		latest = next
	}
	return latest
}

// withdraw removes a replacement that an update created but could not put in place, and then
// its id's claim: the object first, so that the id is never free while a recipient holds it.
// Best effort, on a context of its own, since the caller may be gone: a replacement that
// cannot be deleted is logged and keeps its claim.
func (s *Server) withdraw(ctx context.Context, rc *payoutv1.Recipient, claim *payoutv1.Claim) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	uid := rc.UID
	if err := s.cfg.Client.Delete(ctx, rc, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		s.cfg.Log.Error(err, "withdrawing the replacement of a recipient update that lost", "recipient", rc.Name, "namespace", rc.Namespace)
		return
	}
	s.awaitGone(ctx, rc)
	s.release(ctx, claim)
}

// handleRecipientDelete serves DELETE /api/payouts/recipients/{id} (spec 4.8). The recipient is
// marked deleted first, under the resourceVersion read past the cache, so that no transfer can be
// created for it afterwards (creation re-reads the recipient past the cache); then every
// transfer of the recipient, under any of its ids, that is still in progress is asked to stop.
// transfers_failed counts the requests recorded by this call: the transfer controller fails each
// of them, because a cancellation recorded before the payout intent always wins. A transfer
// whose payout was already handed to the provider is not stopped (the money is at the bank) and
// is not counted; it completes with its recipient snapshot.
//
// Deleting the newest id again finishes what an interrupted deletion left and answers the
// transfers it stopped (0 when the first deletion did its work); deleting an id an update
// replaced changes nothing and answers 0.
func (s *Server) handleRecipientDelete(w http.ResponseWriter, r *http.Request, c *Caller) error {
	q := r.URL.Query()
	if err := s.checkWallet(r.Context(), c, "wallet", q.Get("wallet"), q.Has("wallet")); err != nil {
		return err
	}
	rc, err := s.findRecipient(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	failed := 0
	if rc.Spec.ReplacedBy == nil && !isArchived(rc) { // an archived recipient was deleted long ago
		head, err := s.markDeleted(r.Context(), rc)
		if err != nil {
			return err
		}
		if head {
			msg := "recipient " + strconv.FormatInt(rc.Spec.ID, 10) + " was deleted"
			if failed, err = s.cancelOpenTransfers(r.Context(), rc, msg); err != nil {
				return err
			}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Deleted         bool   `json:"deleted"`
		ID              string `json:"id"`
		TransfersFailed int    `json:"transfers_failed"`
	}{true, strconv.FormatInt(rc.Spec.ID, 10), failed})
	return nil
}

// markDeleted deactivates rc and records the time of its deletion through the API, under the
// resourceVersion read past the cache. It reports whether rc is (still) the newest recipient of
// its lineage: false when an update replaced it meanwhile.
func (s *Server) markDeleted(ctx context.Context, rc *payoutv1.Recipient) (bool, error) {
	head := false
	err := retryConflict(ctx, func() error {
		cur := &payoutv1.Recipient{}
		if err := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(rc), cur); err != nil {
			return err
		}
		head = cur.Spec.ReplacedBy == nil
		if _, deleted := cur.DeletedAt(); !head || deleted {
			return nil
		}
		next := cur.DeepCopy()
		next.Spec.Deactivated = true
		if next.Spec.Deletion == nil {
			next.Spec.Deletion = &payoutv1.RecipientDeletion{}
		}
		at := metav1.NewMicroTime(s.cfg.Clock.Now())
		next.Spec.Deletion.At = &at
		if err := s.cfg.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		s.awaitCached(ctx, next)
		return nil
	})
	return head, err
}

func holderName(b *body) (string, error) {
	name, err := b.requiredStr("accountHolderName")
	if err != nil {
		return "", err
	}
	return checkHolderName(name)
}

func checkHolderName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", apierror.FieldErrorf("accountHolderName", "must not be blank")
	}
	if len(name) > maxHolderName {
		return "", apierror.FieldErrorf("accountHolderName", "must be at most %d bytes", maxHolderName)
	}
	// the name is shown by kubectl payout describe, in events and in mails
	if err := text.Check(name); err != nil {
		return "", apierror.FieldErrorf("accountHolderName", "%s", err)
	}
	return name, nil
}

// findRecipient finds a recipient by its public id anywhere, then applies ownership: another
// account's recipient is 403 (spec 4.6), an unknown id 404. Any integer names a recipient or
// none: 0, a negative id, one past 2^53-1 or one written with leading zeros is an unknown
// recipient (404); only a path id that is not an integer at all is a 400.
func (s *Server) findRecipient(ctx context.Context, c *Caller, idText string) (*payoutv1.Recipient, error) {
	if !isIntegerText(idText) {
		return nil, apierror.FieldErrorf("id", "must be a recipient id (an integer)")
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id <= 0 || id > payoutv1.MaxRecipientID || strconv.FormatInt(id, 10) != idText {
		return nil, apierror.Errorf(apierror.NotFound, "recipient %s not found", clipKey(idText))
	}
	list := &payoutv1.RecipientList{}
	if err := s.cfg.Client.List(ctx, list, client.MatchingFields{index.Name: idText}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Namespace == c.Namespace() {
			return &list.Items[i], nil
		}
	}
	if len(list.Items) > 0 {
		return nil, apierror.Errorf(apierror.Forbidden, "recipient %d belongs to another account", id)
	}
	return s.archivedRecipient(ctx, c, id, apierror.Errorf(apierror.NotFound, "recipient %d not found", id))
}

// isIntegerText reports whether s is an optionally signed run of ASCII digits.
func isIntegerText(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// createRecipient gives rc a fresh random id, claims it cluster-wide and creates it, and
// returns the claim. Ids are random in [10^12, 2^53) so that they are exact in JSON and cannot
// be guessed across accounts.
func (s *Server) createRecipient(ctx context.Context, c *Caller, rc *payoutv1.Recipient) (*payoutv1.Claim, error) {
	for range 8 {
		id := randomRecipientID()
		idText := strconv.FormatInt(id, 10)
		claim, err := s.claim(ctx, c, payoutv1.ClaimRecipientID, idText, payoutv1.ObjectRef{Namespace: rc.Namespace, Name: idText})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if archived, err := s.recipientIDArchived(ctx, id); err != nil || archived {
			s.release(ctx, claim)
			if err != nil {
				return nil, err
			}
			continue // the id of an archived recipient stays retired
		}
		rc.Name, rc.Spec.ID = idText, id
		if rc.Labels[payoutv1.RecipientLineageLabel] == "" {
			if rc.Labels == nil {
				rc.Labels = map[string]string{}
			}
			rc.Labels[payoutv1.RecipientLineageLabel] = idText
		}
		if err := s.createOwned(ctx, c, rc); err != nil {
			// The claim is given back only when the recipient certainly does not exist: a
			// create that timed out after etcd committed it would otherwise free its id.
			stored := &payoutv1.Recipient{}
			// the id's claim is this request's, so a recipient under the id is the one it made
			switch s.settleCreate(ctx, rc, stored, err, func() bool { return true }) {
			case createStored:
				*rc = *stored // only the answer was lost
			case createRefused:
				s.release(ctx, claim)
				return nil, err
			default: // kept for the claim controller, which releases it if no recipient appears
				return nil, err
			}
		}
		s.awaitCached(ctx, rc)
		return claim, nil
	}
	return nil, apierror.Errorf(apierror.Internal, "no free recipient id after 8 attempts")
}

func randomRecipientID() int64 {
	const lo, span = int64(1e12), payoutv1.MaxRecipientID - int64(1e12)
	var b [8]byte
	_, _ = rand.Read(b[:])
	return lo + int64(binary.BigEndian.Uint64(b[:])%uint64(span))
}

// storedAddress is a stored recipient's address as the screener reads it.
func storedAddress(rc *payoutv1.Recipient) *bankaccount.Address {
	a := rc.Spec.Details.Address
	if a == nil {
		return nil
	}
	return &bankaccount.Address{Country: string(a.Country), City: a.City, FirstLine: a.FirstLine, PostCode: a.PostCode, State: a.State}
}

// screen applies sanctions screening (spec 4.5 rule 3) to a holder name and, when the recipient
// has details.address, its country and address. A match is logged for the audit trail and
// answered 403; unavailable data is answered 503.
func (s *Server) screen(_ context.Context, c *Caller, name string, addr *bankaccount.Address) error {
	subj := sanctions.Subject{Name: name}
	if addr != nil {
		subj.Country = addr.Country
		subj.Address = &sanctions.Address{Street: addr.FirstLine, City: addr.City, PostCode: addr.PostCode, State: addr.State}
	}
	m, err := s.cfg.Sanctions.Screen(subj)
	if err != nil {
		return err
	}
	if m != nil {
		s.cfg.Log.Info("recipient refused by sanctions screening", "account", c.Account.Name, "entNum", m.EntNum,
			"sdnName", m.Name, "program", m.Program, "signals", m.Signals, "list", m.Source)
		return m.APIError()
	}
	return nil
}
