package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/stablepay/payout-operator/internal/browsertoken"
)

// DashboardPath is where the facade serves Config.Dashboard.
const DashboardPath = "/dashboard/"

// BrowserCallers says which browser tokens the facade accepts: signed by one of Keys (the
// dashboard's), issued by Issuer, for Audience (this API; a token for another audience is
// refused, so a token taken from one deployment does not work on another).
type BrowserCallers struct {
	Keys     *browsertoken.Keys
	Issuer   string
	Audience string
}

// bearerJWT returns the bearer value of header when it has a JWT's shape.
func bearerJWT(header string) (string, bool) {
	scheme, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	value = strings.TrimSpace(value)
	return value, browsertoken.LooksLikeJWT(value)
}

// authenticateBrowser resolves a browser token to a caller of its account. A token that does
// not verify (a forged signature, another audience or issuer, expired, or when this facade
// accepts no browser tokens) and one whose account is gone or is another account of the same
// name is a bad credential, counted toward the brute-force limits like a bad key (spec 5.3).
// What follows (the allow-list, the rate limits, the handlers) is the API-key callers' code.
func (s *Server) authenticateBrowser(ctx context.Context, token string) (*Caller, string, failure, error) {
	b := s.cfg.Browser
	if b.Keys == nil {
		return nil, msgBadToken, badCredential, nil
	}
	claims, err := b.Keys.Verify(token, b.Issuer, b.Audience, s.cfg.Clock.Now())
	if err != nil {
		return nil, msgBadToken, badCredential, nil
	}
	acct, err := s.keyAccount(ctx, claims.Account)
	if err != nil {
		return nil, "", 0, s.authUnavailable(err, "reading the account of a browser token", claims.Account)
	}
	if acct != nil && string(acct.UID) != claims.AccountUID {
		// the cache may hold an earlier account of the name still: the API server says
		fresh, err := s.keys.account(ctx, claims.Account)
		if err != nil {
			return nil, "", 0, s.authUnavailable(err, "reading the account of a browser token", claims.Account)
		}
		acct = fresh
	}
	if acct == nil || string(acct.UID) != claims.AccountUID || !acct.DeletionTimestamp.IsZero() {
		return nil, msgBadToken, badCredential, nil
	}
	return &Caller{Account: acct, KeyID: browserKeyID(claims.Issuer, claims.Subject), Browser: true}, "", 0, nil
}

// browserKeyID names a signed-in user where an API key's id goes (the per-minute limits, the
// access log): "u" and 16 hex digits of a hash of the token's issuer and subject, so that it
// never collides with a key id (which has no prefix of its own but is lower-case letters and
// digits, issued at random: 64 bits either way) and carries no personal data into logs.
func browserKeyID(issuer, subject string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return "u" + hex.EncodeToString(sum[:8])
}
