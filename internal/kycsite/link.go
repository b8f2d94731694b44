package kycsite

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A link token names an account to the site without a key: the account, an expiry, and an
// HMAC-SHA256 of both under the site's link key (--kyc-link-key-file). The account gives the
// link to its customer; the token proves only that the platform issued a link for that account
// until then, so a forwarded link lets its holder prove a wallet for that account and nothing
// else (docs/threat-model.md). A session token is the same construction over the account and
// the wallet proven, handed to the KYC vendor and back in its callback.

var errLink = errors.New("the link is not valid: ask for a new one")

// errLinkExpired is the answer to a link past its expiry.
var errLinkExpired = errors.New("the link has expired: ask for a new one")

// IssueLink is the token of a link naming account until expires.
func IssueLink(key []byte, account string, expires time.Time) string {
	return sign(key, "link", account, expires)
}

// LinkURL is the address of the site's page for a link token: the {kyc_url} an account hands
// its customer. siteURL is the site's public origin (--kyc-site-url).
func LinkURL(siteURL, token string) string {
	return strings.TrimSuffix(siteURL, "/") + "/verify?link=" + url.QueryEscape(token)
}

// ReadLink returns the account a link token names, if key signed it and it has not expired.
func ReadLink(key []byte, token string, now time.Time) (string, error) {
	parts, err := verify(key, "link", token, now, 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

// issueSession is the token handed to the KYC vendor for a wallet proven for an account.
func issueSession(key []byte, account, wallet string, expires time.Time) string {
	return sign(key, "session", account+"\x00"+wallet, expires)
}

// readSession returns the account and wallet of a session token.
func readSession(key []byte, token string, now time.Time) (account, wallet string, err error) {
	parts, err := verify(key, "session", token, now, 2)
	if err != nil {
		return "", "", err
	}
	return parts[0], parts[1], nil
}

func sign(key []byte, purpose, payload string, expires time.Time) string {
	body := base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key, purpose, body))
}

// verify checks a token's MAC (the purpose keeps a session token from serving as a link) and
// expiry and returns its payload's n NUL-separated parts.
func verify(key []byte, purpose, token string, now time.Time, n int) ([]string, error) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 || len(token) > 1024 {
		return nil, errLink
	}
	body, sum := token[:i], token[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || !hmac.Equal(got, mac(key, purpose, body)) {
		return nil, errLink
	}
	payload, exp, _ := strings.Cut(body, ".")
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return nil, errLink
	}
	if !now.Before(time.Unix(unix, 0)) {
		return nil, errLinkExpired
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	parts := strings.Split(string(raw), "\x00")
	if err != nil || len(parts) != n {
		return nil, errLink
	}
	return parts, nil
}

func mac(key []byte, purpose, body string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("payout-kyc-" + purpose + "\x00" + body))
	return h.Sum(nil)
}
