package dashboard

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// session is a signed-in user's, kept on the server: the cookie holds only its random id.
type session struct {
	id, csrf            string
	subject             string // the provider's issuer and subject, joined
	account, accountUID string
	created, seen       time.Time
}

// sessions is the server-side store, in this replica's memory: a dashboard behind several
// facade replicas needs sticky sessions at its load balancer (docs/operations/dashboard.md).
// Ending a session (logout, expiry) deletes it here, so its cookie is refused from then on.
type sessions struct {
	mu             sync.Mutex
	m              map[string]*session
	idle, absolute time.Duration
	now            func() time.Time
}

// maxSessions bounds the store: past it a new sign-in evicts nothing and is refused.
const maxSessions = 100000

func newSessions(idle, absolute time.Duration, now func() time.Time) *sessions {
	return &sessions{m: map[string]*session{}, idle: idle, absolute: absolute, now: now}
}

// create starts a session with fresh random id and CSRF token: the id is never one the browser
// brought (session fixation).
func (s *sessions) create(subject, account, accountUID string) (*session, bool) {
	now := s.now()
	ss := &session{id: randomID(), csrf: randomID(), subject: subject, account: account, accountUID: accountUID, created: now, seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if len(s.m) >= maxSessions {
		return nil, false
	}
	s.m[ss.id] = ss
	return ss, true
}

// get returns the live session of id and marks it used; an idle or too old session is ended.
func (s *sessions) get(id string) *session {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[id]
	if !ok {
		return nil
	}
	if s.expired(ss, now) {
		delete(s.m, id)
		return nil
	}
	ss.seen = now
	cp := *ss
	return &cp
}

// end deletes a session.
func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func (s *sessions) expired(ss *session, now time.Time) bool {
	return now.Sub(ss.seen) >= s.idle || now.Sub(ss.created) >= s.absolute
}

// sweep drops expired sessions; called under mu on each sign-in.
func (s *sessions) sweep(now time.Time) {
	for id, ss := range s.m {
		if s.expired(ss, now) {
			delete(s.m, id)
		}
	}
}

// pendingLogin is a sign-in between the redirect to the provider and its callback.
type pendingLogin struct {
	nonce, verifier string
	started         time.Time
}

// logins holds the pending sign-ins by their state.
type logins struct {
	mu  sync.Mutex
	m   map[string]pendingLogin
	now func() time.Time
}

// loginTTL is how long a user has at the provider's login page; maxLogins bounds the pending
// sign-ins anyone can start without credentials.
const (
	loginTTL  = 10 * time.Minute
	maxLogins = 10000
)

func (l *logins) start(nonce, verifier string) (state string, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for st, p := range l.m {
		if now.Sub(p.started) >= loginTTL {
			delete(l.m, st)
		}
	}
	if len(l.m) >= maxLogins {
		return "", false
	}
	state = randomID()
	l.m[state] = pendingLogin{nonce: nonce, verifier: verifier, started: now}
	return state, true
}

// finish takes the pending sign-in of state, once.
func (l *logins) finish(state string) (pendingLogin, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.m[state]
	delete(l.m, state)
	if !ok || l.now().Sub(p.started) >= loginTTL {
		return pendingLogin{}, false
	}
	return p, true
}

// randomID is 256 random bits, base64url.
func randomID() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24+)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
