package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
)

// The facade's side of the transfer archive (internal/archive). With Config.Archive set,
// finished transfers and deleted recipients leave the API server after the retention; the
// facade answers for them from the archive on a cache miss, byte for byte as it answered
// before, and checks the archive for every globally unique key it hands out (customer_uuid,
// tx hash, recipient id) after claiming it, so that a key lives in a Claim, in the archive,
// or in both, and is never reused. An archive that cannot be reached fails those checks
// closed (503); reads of live objects never touch it.

// TransferLookupJSON is the "transfer" of GET /api/payouts/transfer/{id} for t: the archiver
// freezes it into the archive, and the facade serves it from there unchanged.
func TransferLookupJSON(t *payoutv1.Transfer) ([]byte, error) { return json.Marshal(transferView(t)) }

// RecipientLookupJSON is the body of GET /api/payouts/recipients/{id} for rc, frozen likewise.
func RecipientLookupJSON(rc *payoutv1.Recipient) ([]byte, error) {
	return json.Marshal(recipientView(rc))
}

// archiveDown is the answer when the archive cannot be reached: fail closed, retry later.
func (s *Server) archiveDown(err error) error {
	s.cfg.Log.Error(err, "the transfer archive cannot be reached")
	return apierror.Errorf(apierror.Unavailable, "the transfer archive cannot be reached at the moment; retry shortly")
}

// writeArchivedTransfer answers a lookup of a transfer that is not live from the archive: the
// same body as before it was archived, 404 for an id the archive does not hold either, 503
// when the archive cannot say. A key of another account gets it masked, as a live one.
func (s *Server) writeArchivedTransfer(ctx context.Context, w http.ResponseWriter, c *Caller, id string, notFound error) error {
	if s.cfg.Archive == nil {
		return notFound
	}
	lookup, ok, err := s.cfg.Archive.TransferLookup(ctx, id)
	if err != nil {
		return s.archiveDown(err)
	}
	if !ok {
		return notFound
	}
	a, found, err := s.cfg.Archive.Transfer(ctx, id)
	if err != nil {
		return s.archiveDown(err)
	}
	body, err := json.Marshal(map[string]any{"transfer": json.RawMessage(lookup)})
	if err == nil && (!found || a.Namespace != c.Namespace()) {
		body, err = maskLookup(body)
	}
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, append(body, '\n'))
	return nil
}

// checkArchivedUUID answers 409 for a customer_uuid an archived transfer holds. It runs after
// the uuid's claim succeeded: the archiver inserts a transfer before it deletes its claim, so
// a uuid is always in one of the two.
func (s *Server) checkArchivedUUID(ctx context.Context, uuid string) error {
	if s.cfg.Archive == nil {
		return nil
	}
	used, err := s.cfg.Archive.CustomerUUIDUsed(ctx, payoutv1.NormalizeClaimKey(payoutv1.ClaimCustomerUUID, uuid))
	if err != nil {
		return s.archiveDown(err)
	}
	if used {
		return apierror.Errorf(apierror.Conflict, "customer_uuid %s is already used by another transfer", uuid)
	}
	return nil
}

// checkArchivedHash answers 409 (rule 1) for a tx hash linked to an archived transfer: a v2
// transfer's confirmed hash or a v1 deposit's transaction.
func (s *Server) checkArchivedHash(ctx context.Context, hash string) error {
	if s.cfg.Archive == nil {
		return nil
	}
	used, err := s.cfg.Archive.TxHashUsed(ctx, hash)
	if err != nil {
		return s.archiveDown(err)
	}
	if used {
		return apierror.Errorf(apierror.Conflict, "tx_hash %s is already linked to a transfer", hash)
	}
	return nil
}

// confirmArchived answers confirm-transfer for a transfer that is not live: from the archive,
// by the rules of spec 4.12. An archived transfer is closed: its own hash again reports its
// status (rules 2 and 4), another transfer's hash or a second hash is a conflict (rules 1 and
// 3), and a hash for an archived v2 transfer that never had one changes nothing and reports
// the status (rule 4: nothing is recorded on a closed transfer).
func (s *Server) confirmArchived(ctx context.Context, w http.ResponseWriter, c *Caller, id, hash string, notFound error) error {
	if s.cfg.Archive == nil {
		return notFound
	}
	a, ok, err := s.cfg.Archive.Transfer(ctx, id)
	if err != nil {
		return s.archiveDown(err)
	}
	if !ok {
		return notFound
	}
	if a.Namespace != c.Namespace() {
		return apierror.Errorf(apierror.Forbidden, "transfer %s belongs to another account", id)
	}
	if a.Method != string(payoutv1.TransferV2) {
		return apierror.FieldErrorf("transfer_id", "transfer %s is a v1 transfer: its deposit is detected without a confirmation", id)
	}
	if (a.Network == string(payoutv1.NetworkSolana)) != chain.IsSolanaSignature(hash) {
		return apierror.FieldErrorf("tx_hash", "is not a transaction hash of %s", a.Network)
	}
	hash = payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, hash)
	message := "The transfer is closed and archived; nothing was recorded."
	if a.TxHash != hash {
		used, err := s.hashOfDeposit(ctx, hash)
		if err == nil && !used {
			used, err = s.hashClaimed(ctx, hash)
		}
		if err != nil {
			return err
		}
		if used {
			return apierror.Errorf(apierror.Conflict, "tx_hash %s is already linked to a transfer", hash) // rule 1
		}
		if err := s.checkArchivedHash(ctx, hash); err != nil {
			return err // rule 1
		}
		if a.TxHash != "" {
			return apierror.Errorf(apierror.Conflict, "transfer %s is already confirmed with another transaction hash; a hash cannot be replaced", id) // rule 3
		}
	} else {
		message = confirmMessages[payoutv1.TransferPhase(a.Phase)]
	}
	writeJSON(w, http.StatusOK, struct {
		TransferID string `json:"transfer_id"`
		Status     string `json:"status"`
		Message    string `json:"message"`
	}{id, a.Phase, message})
	return nil
}

// hashClaimed reports whether a live claim holds the hash; a claim that cannot be read is a 503
// (rule 1 fails closed).
func (s *Server) hashClaimed(ctx context.Context, hash string) (bool, error) {
	err := s.cfg.APIReader.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, hash)}, &payoutv1.Claim{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	s.cfg.Log.Error(err, "reading the claim of a transaction hash", "hash", hash)
	return false, errHashUnknown
}

// archivedAnnotation marks, in memory only, a recipient read from the archive: it is never
// written back (an archived recipient is deactivated, and nothing writes a deactivated one).
const archivedAnnotation = "payout.stablepay.dev/archived"

func isArchived(rc *payoutv1.Recipient) bool { return rc.Annotations[archivedAnnotation] != "" }

// archivedRecipient finds a recipient that is not live in the archive: the caller's own, 403
// for another account's, notFound when the archive does not hold it either.
func (s *Server) archivedRecipient(ctx context.Context, c *Caller, id int64, notFound error) (*payoutv1.Recipient, error) {
	if s.cfg.Archive == nil {
		return nil, notFound
	}
	a, ok, err := s.cfg.Archive.Recipient(ctx, id)
	if err != nil {
		return nil, s.archiveDown(err)
	}
	if !ok {
		return nil, notFound
	}
	if a.Namespace != c.Namespace() {
		return nil, apierror.Errorf(apierror.Forbidden, "recipient %d belongs to another account", id)
	}
	return archivedStub(a.Namespace, id, a.ReplacedBy), nil
}

func archivedStub(namespace string, id int64, replacedBy *int64) *payoutv1.Recipient {
	idText := strconv.FormatInt(id, 10)
	return &payoutv1.Recipient{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: idText, Annotations: map[string]string{archivedAnnotation: "true"}},
		Spec:       payoutv1.RecipientSpec{ID: id, Deactivated: true, ReplacedBy: replacedBy},
	}
}

// writeArchivedRecipient answers GET recipient for an archived one: its body as archived.
func (s *Server) writeArchivedRecipient(ctx context.Context, w http.ResponseWriter, rc *payoutv1.Recipient) error {
	a, ok, err := s.cfg.Archive.Recipient(ctx, rc.Spec.ID)
	if err != nil {
		return s.archiveDown(err)
	}
	if !ok {
		return apierror.Errorf(apierror.NotFound, "recipient %d not found", rc.Spec.ID)
	}
	writeJSON(w, http.StatusOK, json.RawMessage(a.Lookup))
	return nil
}

// recipientIDArchived reports whether an archived recipient had the id: a fresh id must not be
// one of them (ids are random, so this is all but never true).
func (s *Server) recipientIDArchived(ctx context.Context, id int64) (bool, error) {
	if s.cfg.Archive == nil {
		return false, nil
	}
	_, ok, err := s.cfg.Archive.Recipient(ctx, id)
	if err != nil {
		return false, s.archiveDown(err)
	}
	return ok, nil
}

// archivedReplacement is the archived recipient that replaced another, for latestRecipient.
func (s *Server) archivedReplacement(ctx context.Context, namespace string, id int64) (*payoutv1.Recipient, bool) {
	if s.cfg.Archive == nil {
		return nil, false
	}
	a, ok, err := s.cfg.Archive.Recipient(ctx, id)
	if err != nil || !ok || a.Namespace != namespace {
		return nil, false
	}
	return archivedStub(namespace, id, a.ReplacedBy), true
}
