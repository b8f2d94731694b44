package kycsite

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The KYC vendor's callback (docs/kyc-site.md):
//
//	POST /vendor/callback
//	X-KYC-Timestamp: <unix seconds>
//	X-KYC-Signature: <hex HMAC-SHA256(secret, timestamp + "." + body)>
//	{"event_id": "...", "session": "<the session the site sent>", "result": "approved"|"rejected"}
//
// The MAC covers the timestamp, which must be within CallbackSkew of the site's clock, and the
// event id is held that long: a callback replayed later is stale, one replayed sooner a repeat.
const (
	HeaderTimestamp = "X-KYC-Timestamp"
	HeaderSignature = "X-KYC-Signature"
)

// Callback is the body of a vendor callback.
type Callback struct {
	EventID string `json:"event_id"`
	Session string `json:"session"`
	Result  string `json:"result"`
}

// SignCallback is the signature header of a callback body at ts (the vendor's side; the
// simulated vendor and the tests use it).
func SignCallback(secret []byte, ts time.Time, body []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(strconv.FormatInt(ts.Unix(), 10) + "."))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) handleCallback(w http.ResponseWriter, r *http.Request) {
	res, err := s.callback(r)
	s.answer(w, res, err)
}

func (s *Server) callback(r *http.Request) (map[string]any, error) {
	if len(s.cfg.Vendor.Secret) == 0 {
		return nil, refuse(http.StatusNotFound, "no KYC vendor is configured")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the body could not be read")
	}
	unix, err := strconv.ParseInt(r.Header.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return nil, refuse(http.StatusUnauthorized, "the callback is not signed")
	}
	want := SignCallback(s.cfg.Vendor.Secret, time.Unix(unix, 0), body)
	if !hmac.Equal([]byte(r.Header.Get(HeaderSignature)), []byte(want)) {
		return nil, refuse(http.StatusUnauthorized, "the callback's signature does not match")
	}
	now, ts := s.cfg.Clock.Now(), time.Unix(unix, 0)
	if ts.Before(now.Add(-CallbackSkew)) || ts.After(now.Add(CallbackSkew)) {
		return nil, refuse(http.StatusUnauthorized, "the callback's timestamp is more than %v from now", CallbackSkew)
	}
	var cb Callback
	if err := json.Unmarshal(body, &cb); err != nil || cb.EventID == "" || len(cb.EventID) > 64 {
		return nil, refuse(http.StatusBadRequest, "the callback's body is not the JSON expected")
	}
	if err := s.cfg.Nonces.Put(r.Context(), "event:"+cb.EventID, Challenge{Expires: now.Add(2 * CallbackSkew)}); err != nil {
		if errors.Is(err, ErrNonceHeld) {
			return nil, refuse(http.StatusConflict, "the callback %s was already taken", cb.EventID)
		}
		return nil, err
	}
	account, wallet, err := readSession(s.cfg.LinkKey, cb.Session, now)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the callback's session: %s", err)
	}
	if cb.Result != "approved" {
		// A rejection changes nothing: the wallet stays proven and unverified.
		return map[string]any{"kyc_verified": false}, nil
	}
	rec := &payoutv1.Wallet{}
	key := client.ObjectKey{Namespace: payoutv1.AccountNamespace(account), Name: payoutv1.WalletName(wallet)}
	switch err := s.cfg.APIReader.Get(r.Context(), key, rec); {
	case apierrors.IsNotFound(err):
		return nil, refuse(http.StatusNotFound, "no proof of control is recorded for this wallet")
	case err != nil:
		return nil, err
	case rec.Spec.Proof == nil || rec.Spec.Proof.Signer != wallet:
		// An operator's record without a proof: the vendor's answer is about the proven owner.
		return nil, refuse(http.StatusConflict, "no proof of control is recorded for this wallet")
	}
	if !rec.Spec.KYCVerified {
		patch := client.MergeFrom(rec.DeepCopy())
		rec.Spec.KYCVerified, rec.Spec.VerifiedBy = true, "kyc-vendor event "+cb.EventID
		if err := s.cfg.Client.Patch(r.Context(), rec, patch); err != nil {
			return nil, err
		}
	}
	return map[string]any{"kyc_verified": true}, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
