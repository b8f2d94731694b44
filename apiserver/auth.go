package apiserver

import (
	"context"
	"net/http"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/apikey"
)

// Caller is an authenticated API-key caller.
type Caller struct {
	// Account is the caller's account as cached: read it, never change it.
	Account *payoutv1.PayoutAccount
	KeyID   string
	IP      netip.Addr
}

// Namespace is the namespace of the caller's account.
func (c *Caller) Namespace() string { return payoutv1.AccountNamespace(c.Account.Name) }

// handlerFunc is an API handler: it writes its success response itself and returns errors for
// writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *Caller) error

// guarded puts a handler behind the door every API request passes: the per-address
// brute-force limits, API-key authentication, the account's IP allow-list and the per-key rate
// limit of the route's budget, in that order. The allow-list comes before the rate limit so
// that refused addresses cannot spend the key's budget.
func (s *Server) guarded(budget string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recordOf(r)
		ip := clientIP(r, s.cfg.TrustedProxies)
		rec.ip = ip.String()
		if s.guard.blocked(ip) {
			writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgBlocked))
			return
		}
		caller, msg, kind := s.authenticate(r.Context(), r.Header.Get("Authorization"))
		if caller == nil {
			if s.guard.fail(ip, kind) {
				writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgBlocked))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="payouts"`)
			writeError(w, r, apierror.Errorf(apierror.Unauthorized, "%s", msg))
			return
		}
		caller.IP = ip
		rec.account, rec.keyID = caller.Account.Name, caller.KeyID
		if !allowed(caller.Account, ip) {
			writeError(w, r, apierror.Errorf(apierror.Forbidden, msgIPNotAllowed))
			return
		}
		ok, err := s.limits.take(r.Context(), w, budget, caller.KeyID)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if !ok {
			writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgRateLimited))
			return
		}
		if err := h(w, r, caller); err != nil {
			writeError(w, r, err)
		}
	})
}

// authenticate resolves an Authorization header to a caller. On failure it returns the message
// for the 401 and the kind of failure for the brute-force limits. Unknown, unmatched and
// revoked keys, and keys of a deleted account, all get msgBadKey.
func (s *Server) authenticate(ctx context.Context, header string) (*Caller, string, failure) {
	cred, keyID, full := apikey.ParseAuthorization(header)
	switch cred {
	case apikey.Missing:
		return nil, msgMissingKey, noCredential
	case apikey.Malformed:
		return nil, msgMalformedKey, badCredential
	}
	key := &payoutv1.APIKey{}
	err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: keyID}, key)
	if err != nil {
		// Hash anyway, so that an unknown key id costs the same time as a known one.
		apikey.Matches("", full)
		return nil, msgBadKey, badCredential
	}
	if !apikey.Matches(key.Spec.SecretHash, full) || key.Spec.Revoked {
		return nil, msgBadKey, badCredential
	}
	acct := &payoutv1.PayoutAccount{}
	if err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: key.Spec.Account}, acct); err != nil {
		if !apierrors.IsNotFound(err) {
			s.cfg.Log.Error(err, "reading the account of an API key", "keyId", keyID)
		}
		return nil, msgBadKey, badCredential
	}
	return &Caller{Account: acct, KeyID: keyID}, "", 0
}

// allowed applies the account's IP allow-list (spec 5.4); an empty list allows every address.
func allowed(acct *payoutv1.PayoutAccount, ip netip.Addr) bool {
	if len(acct.Spec.AllowedIPs) == 0 {
		return true
	}
	prefixes, err := ParsePrefixes(acct.Spec.AllowedIPs)
	if err != nil {
		// The schema only admits CIDRs; an unreadable list must not open the account.
		return false
	}
	return inPrefixes(ip, prefixes)
}
