package notify

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/lru"
)

// Default mail limits (Limits): generous for an account's real traffic, tight for one address,
// which no honest payer fills with a dozen outcome mails an hour.
const (
	DefaultMaxPerAccount = 600
	DefaultMaxPerAddress = 12
	// limitKeys bounds the accounts, and the addresses, whose budgets are remembered. The least
	// recently mailed go first; a budget forgotten starts full again, which takes an account
	// limitKeys mails to distinct addresses to cause for another address.
	limitKeys = 10000
)

// Limits caps the outcome mails of a transfer's account and to one address, each per hour
// (with a burst of as many): customer_email is whatever the caller sent, so without a cap one
// account could have this service mail an address it chose as often as it creates transfers.
// A mail over a limit is not sent, and not sent later: it is refused for good (Permanent), as
// a mail the server refuses is, and the transfer records it so. The budgets live in this
// process (the controllers' leader sends every mail), at most limitKeys of each kind.
type Limits struct {
	mu         sync.Mutex
	perAccount int
	perAddress int
	accounts   *lru.Cache
	addresses  *lru.Cache
	now        func() time.Time
}

// NewLimits caps mail at perAccount an hour for one account and perAddress an hour to one
// address; now is the clock (time.Now when nil).
func NewLimits(perAccount, perAddress int, now func() time.Time) *Limits {
	if now == nil {
		now = time.Now
	}
	return &Limits{perAccount: perAccount, perAddress: perAddress, accounts: lru.New(limitKeys), addresses: lru.New(limitKeys), now: now}
}

// take spends one mail of account's budget and of to's, or neither when either is spent; it
// returns why the mail is refused, or nil.
func (l *Limits) take(account, to string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	acct := bucket(l.accounts, account, l.perAccount)
	addr := bucket(l.addresses, strings.ToLower(strings.TrimSpace(to)), l.perAddress)
	switch {
	case acct.TokensAt(now) < 1:
		return overLimit{fmt.Sprintf("account %s has had %d e-mails sent in the last hour (--%s)", account, l.perAccount, FlagMaxPerAccount)}
	case addr.TokensAt(now) < 1:
		return overLimit{fmt.Sprintf("%s has been sent %d e-mails in the last hour (--%s)", to, l.perAddress, FlagMaxPerAddress)}
	}
	acct.AllowN(now, 1)
	addr.AllowN(now, 1)
	return nil
}

// bucket is key's budget of perHour an hour in c, made full when c holds none.
func bucket(c *lru.Cache, key string, perHour int) *rate.Limiter {
	if b, ok := c.Get(key); ok {
		return b.(*rate.Limiter)
	}
	b := rate.NewLimiter(rate.Every(time.Hour/time.Duration(perHour)), perHour)
	c.Add(key, b)
	return b
}

// overLimit is a mail refused by Limits.
type overLimit struct{ why string }

func (o overLimit) Error() string { return "not sent: " + o.why }
