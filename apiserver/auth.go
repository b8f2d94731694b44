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
	"github.com/stablepay/payout-operator/internal/metrics"
)

// Caller is an authenticated API-key caller.
type Caller struct {
	// Account is the caller's account as cached: read it, never change it.
	Account *payoutv1.PayoutAccount
	// KeyID names the credential: the API key's id, or for a browser caller a name of the
	// signed-in user (browserKeyID), whose per-minute limits it spends.
	KeyID string
	IP    netip.Addr
	// Browser is a signed-in user of the dashboard with a browser token instead of an API key
	// (spec 5.6): its quotes carry no quoteId and v2_offloader is ignored.
	Browser bool
}

// Namespace is the namespace of the caller's account.
func (c *Caller) Namespace() string { return payoutv1.AccountNamespace(c.Account.Name) }

// handlerFunc is an API handler: it writes its success response itself and returns errors for
// writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *Caller) error

// guarded puts a handler behind what every API request passes after the door (which has
// already refused addresses over the brute-force limits of spec 5.3): API-key authentication,
// the account's IP allow-list, the per-key rate limit of the route's budget and the body limit,
// in that order. The allow-list comes before the rate limit so that refused addresses cannot
// spend the key's budget; its 403 still carries the budget's headers, read without spending
// (spec 8.1: authenticated API-key responses carry them). The body limit comes after
// authentication, so that an oversized request with a bad key is counted as one.
func (s *Server) guarded(budget string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if caller, ok := s.admit(w, r, budget); ok {
			s.serve(w, r, caller, budget, h)
		}
	})
}

// admit authenticates r's API key and applies its account's IP allow-list; when it refuses it
// has answered and returns false. Brute-force failures are counted here, so that every way in
// (REST routes, the MCP endpoint) counts them alike. budget names the rate-limit headers a 403
// of the allow-list carries; "" carries none (the MCP endpoint, whose messages spend no budget
// of their own).
func (s *Server) admit(w http.ResponseWriter, r *http.Request, budget string) (*Caller, bool) {
	rec := recordOf(w)
	ip := clientIP(r, s.cfg.TrustedProxies)
	var into *Caller
	if rec != nil {
		into = &rec.caller
	}
	caller, msg, kind, err := s.authenticate(r.Context(), r.Header.Get("Authorization"), into)
	if err != nil {
		// the service could not tell: not the caller's bad credential, so not counted
		writeError(w, r, err)
		return nil, false
	}
	if caller == nil {
		metrics.AuthFailure(authReason(kind, msg))
		if s.guard.fail(r.Context(), ip, kind) {
			metrics.RateLimited(metrics.LimitAuthFailures)
			writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgBlocked))
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="payouts"`)
		writeError(w, r, apierror.Errorf(apierror.Unauthorized, "%s", msg))
		return nil, false
	}
	caller.IP = ip
	if rec != nil {
		rec.account, rec.keyID = caller.Account.Name, caller.KeyID
	}
	if !allowed(caller.Account, ip) {
		if budget != "" {
			if err := s.limits.peek(r.Context(), w, budget, caller.KeyID); err != nil {
				writeError(w, r, err)
				return nil, false
			}
		}
		writeError(w, r, apierror.Errorf(apierror.Forbidden, msgIPNotAllowed))
		return nil, false
	}
	return caller, true
}

// serve runs h for an admitted caller: it spends one request of the caller's key on budget,
// then applies the body limit. The REST routes and the MCP tools (which call it with the
// route's own budget and handler) share it, so a tool call counts against the limit of the
// operation it performs.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, caller *Caller, budget string, h handlerFunc) {
	ok, err := s.limits.take(r.Context(), w, budget, caller.KeyID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !ok {
		metrics.RateLimited(budget)
		writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgRateLimited))
		return
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, r, apierror.Errorf(apierror.TooLarge, "request body too large: at most %d bytes", s.cfg.MaxBodyBytes))
		return
	}
	if err := h(w, r, caller); err != nil {
		writeError(w, r, err)
	}
}

// authenticate resolves an Authorization header to a caller. On a refused credential it
// returns the message for the 401 and the kind of failure for the brute-force limits. Unknown,
// unmatched and revoked keys, and keys of a deleted account (or one being deleted, or an
// earlier account of the same name), all get msgBadKey. A key or account this replica's cache
// does not hold yet is read from the API server before it counts as unknown (apiKey,
// keyAccount), and so is an account whose cached UID is not the key's (keyLookup.account). When the key or its account cannot be read (the cache or the API server fails),
// the credential is neither good nor bad: err is a 503, and nothing is counted against the
// caller.
//
// An API key's caller is made in into when it is not nil (the request's record holds one, so
// that a request's caller costs no allocation of its own).
func (s *Server) authenticate(ctx context.Context, header string, into *Caller) (*Caller, string, failure, error) {
	cred, keyID, full := apikey.ParseAuthorization(header)
	switch cred {
	case apikey.Missing:
		return nil, msgMissingKey, noCredential, nil
	case apikey.Malformed:
		if token, ok := bearerJWT(header); ok {
			return s.authenticateBrowser(ctx, token)
		}
		return nil, msgMalformedKey, badCredential, nil
	}
	key, err := s.apiKey(ctx, keyID)
	if err != nil || key == nil {
		// Hash anyway, so that an unknown key id costs the same time as a known one.
		apikey.Matches("", full)
		if err != nil {
			return nil, "", 0, s.authUnavailable(err, "reading an API key", keyID)
		}
		return nil, msgBadKey, badCredential, nil
	}
	if !apikey.Matches(key.Spec.SecretHash, full) || key.Spec.Revoked {
		return nil, msgBadKey, badCredential, nil
	}
	acct, err := s.keyAccount(ctx, key.Spec.Account)
	if err != nil {
		return nil, "", 0, s.authUnavailable(err, "reading the account of an API key", keyID)
	}
	if acct == nil {
		return nil, msgBadKey, badCredential, nil
	}
	if key.BindingTo(acct) == payoutv1.KeyOfAnotherAccount {
		// the cache may hold the earlier account still, deleted and made again a moment ago:
		// the API server's says which one the key's is
		fresh, err := s.keys.account(ctx, key.Spec.Account)
		if err != nil {
			return nil, "", 0, s.authUnavailable(err, "reading the account of an API key", keyID)
		}
		if fresh != nil {
			acct = fresh
		}
	}
	if !acct.DeletionTimestamp.IsZero() {
		// a deleted account waits for what it owes (its finalizer) and takes nothing new: a
		// transfer created now would hold it open again
		return nil, msgBadKey, badCredential, nil
	}
	if key.BindingTo(acct) == payoutv1.KeyOfAnotherAccount {
		// issued to an earlier account of this name: as good as revoked, and answered and
		// counted as a revoked key is (docs/operations/keys.md)
		return nil, msgBadKey, badCredential, nil
	}
	s.keyUse.Touch(key, s.cfg.Clock.Now())
	if into == nil {
		into = new(Caller)
	}
	*into = Caller{Account: acct, KeyID: keyID}
	return into, "", 0, nil
}

// apiKey reads the key named id: from the cache, or, when the cache does not hold it (a key
// created a moment ago that this replica's informer has not seen yet), from the API server
// within the bounds of keyLookup. It returns nil, nil for a key that is not there (a bad
// credential) and an error when it could not tell. The cache's own object is returned (no copy;
// every request reads it): read it, never change it.
func (s *Server) apiKey(ctx context.Context, id string) (*payoutv1.APIKey, error) {
	key, err := s.stores.apiKey(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case key == nil:
		return s.keys.find(ctx, id)
	}
	return key, nil
}

// keyAccount reads the account of a key whose secret matched: from the cache, or from the API
// server when the cache does not hold it (an account created with its first key a moment
// ago). Only a caller holding a valid secret gets this far, so the read past the cache needs no
// budget of its own. It returns nil, nil when the account is not there, and the cache's own
// object when it comes from there: read it, never change it. Caller.Account says so to the
// handlers.
func (s *Server) keyAccount(ctx context.Context, name string) (*payoutv1.PayoutAccount, error) {
	if acct, err := s.stores.account(ctx, name); err != nil || acct != nil {
		return acct, err
	}
	acct := &payoutv1.PayoutAccount{}
	rctx, cancel := context.WithTimeout(ctx, keyLookupTimeout)
	defer cancel()
	err := s.cfg.APIReader.Get(rctx, client.ObjectKey{Name: name}, acct)
	switch {
	case err == nil:
		return acct, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	}
	return nil, err
}

// authReason is the metrics label of a refused credential.
func authReason(kind failure, msg string) metrics.AuthReason {
	switch {
	case kind == noCredential:
		return metrics.AuthMissing
	case msg == msgMalformedKey:
		return metrics.AuthMalformed
	}
	return metrics.AuthInvalid
}

// authUnavailable logs why authentication could not decide and answers 503.
func (s *Server) authUnavailable(err error, what, keyID string) error {
	s.cfg.Log.Error(err, what, "keyId", keyID)
	return apierror.Errorf(apierror.Unavailable, msgAuthUnavailable)
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
