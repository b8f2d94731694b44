package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// storedSession is a session as the shared store holds it (its id is the key's).
type storedSession struct {
	CSRF       string    `json:"csrf"`
	Subject    string    `json:"subject"`
	Account    string    `json:"account"`
	AccountUID string    `json:"accountUID"`
	Created    time.Time `json:"created"`
	Seen       time.Time `json:"seen"`
}

// SharedValues is a store every replica sees, with expiring values (sharedlimits.Values).
type SharedValues interface {
	PutOnce(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	Replace(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Take(ctx context.Context, key string) ([]byte, bool, error)
	Delete(ctx context.Context, key string) error
}

// sessions is the server-side store: this replica's memory, or, with shared set (Redis, when
// the facade's shared limits are configured), a store every replica sees, so that a session
// made on one replica is valid on all and a logout on any ends it on all. Ending a session
// (logout, expiry) deletes it, so its cookie is refused from then on. In the shared store a
// session's key is the SHA-256 of its id, not the id: whoever reads the store cannot present
// its sessions; each expires there when idle or at its absolute end, whichever is first.
type sessions struct {
	mu             sync.Mutex
	m              map[string]*session
	shared         SharedValues
	idle, absolute time.Duration
	now            func() time.Time
}

// maxSessions bounds the memory store: past it a new sign-in evicts nothing and is refused.
const maxSessions = 100000

// errTooMany is create's answer when the memory store is full.
var errTooMany = errors.New("too many sessions")

func newSessions(idle, absolute time.Duration, now func() time.Time, shared SharedValues) *sessions {
	return &sessions{m: map[string]*session{}, shared: shared, idle: idle, absolute: absolute, now: now}
}

// create starts a session with fresh random id and CSRF token: the id is never one the browser
// brought (session fixation).
func (s *sessions) create(ctx context.Context, subject, account, accountUID string) (*session, error) {
	now := s.now()
	ss := &session{id: randomID(), csrf: randomID(), subject: subject, account: account, accountUID: accountUID, created: now, seen: now}
	if s.shared != nil {
		ok, err := s.shared.PutOnce(ctx, sessionKey(ss.id), ss.stored(), s.ttl(ss, now))
		if err == nil && !ok {
			err = errors.New("a fresh session id is taken")
		}
		return ss, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if len(s.m) >= maxSessions {
		return nil, errTooMany
	}
	s.m[ss.id] = ss
	return ss, nil
}

// get returns the live session of id (nil: none) and marks it used; an idle or too old
// session is ended. An error means the shared store could not tell.
func (s *sessions) get(ctx context.Context, id string) (*session, error) {
	now := s.now()
	if s.shared != nil {
		return s.getShared(ctx, id, now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[id]
	if !ok {
		return nil, nil
	}
	if s.expired(ss, now) {
		delete(s.m, id)
		return nil, nil
	}
	ss.seen = now
	cp := *ss
	return &cp, nil
}

func (s *sessions) getShared(ctx context.Context, id string, now time.Time) (*session, error) {
	if id == "" || len(id) > 128 {
		return nil, nil
	}
	key := sessionKey(id)
	b, ok, err := s.shared.Get(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	var st storedSession
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	ss := &session{id: id, csrf: st.CSRF, subject: st.Subject, account: st.Account, accountUID: st.AccountUID, created: st.Created, seen: st.Seen}
	if s.expired(ss, now) {
		return nil, s.shared.Delete(ctx, key)
	}
	ss.seen = now
	// only if still there: a logout on another replica meanwhile is not undone
	if ok, err := s.shared.Replace(ctx, key, ss.stored(), s.ttl(ss, now)); err != nil || !ok {
		return nil, err
	}
	return ss, nil
}

// end deletes a session.
func (s *sessions) end(ctx context.Context, id string) error {
	if s.shared != nil {
		return s.shared.Delete(ctx, sessionKey(id))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

func (s *sessions) expired(ss *session, now time.Time) bool {
	return now.Sub(ss.seen) >= s.idle || now.Sub(ss.created) >= s.absolute
}

// ttl is how long the shared store keeps ss after a use at now: until it would be idle, or
// its absolute end if sooner.
func (s *sessions) ttl(ss *session, now time.Time) time.Duration {
	ttl := min(s.idle, ss.created.Add(s.absolute).Sub(now))
	return max(ttl, time.Millisecond)
}

func (ss *session) stored() []byte {
	b, _ := json.Marshal(storedSession{CSRF: ss.csrf, Subject: ss.subject, Account: ss.account, AccountUID: ss.accountUID, Created: ss.created, Seen: ss.seen})
	return b
}

// sessionKey is the shared store's key of a session id.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "session:" + hex.EncodeToString(sum[:])
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

// logins holds the pending sign-ins by their state: in this replica's memory, or with shared
// set in the store every replica sees, so that the provider's callback may reach another
// replica than the one the sign-in started on.
type logins struct {
	mu     sync.Mutex
	m      map[string]pendingLogin
	shared SharedValues
	now    func() time.Time
}

// loginTTL is how long a user has at the provider's login page; maxLogins bounds the pending
// sign-ins anyone can start without credentials in memory (in the shared store each expires
// after loginTTL).
const (
	loginTTL  = 10 * time.Minute
	maxLogins = 10000
)

// storedLogin is a pending sign-in as the shared store holds it.
type storedLogin struct {
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Started  time.Time `json:"started"`
}

func (l *logins) start(ctx context.Context, nonce, verifier string) (string, error) {
	now := l.now()
	state := randomID()
	if l.shared != nil {
		b, _ := json.Marshal(storedLogin{Nonce: nonce, Verifier: verifier, Started: now})
		ok, err := l.shared.PutOnce(ctx, "login:"+state, b, loginTTL)
		if err == nil && !ok {
			err = errors.New("a fresh sign-in state is taken")
		}
		return state, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for st, p := range l.m {
		if now.Sub(p.started) >= loginTTL {
			delete(l.m, st)
		}
	}
	if len(l.m) >= maxLogins {
		return "", errTooMany
	}
	l.m[state] = pendingLogin{nonce: nonce, verifier: verifier, started: now}
	return state, nil
}

// finish takes the pending sign-in of state, once.
func (l *logins) finish(ctx context.Context, state string) (pendingLogin, bool, error) {
	var p pendingLogin
	if l.shared != nil {
		if state == "" || len(state) > 128 {
			return p, false, nil
		}
		b, ok, err := l.shared.Take(ctx, "login:"+state)
		if err != nil || !ok {
			return p, false, err
		}
		var st storedLogin
		if err := json.Unmarshal(b, &st); err != nil {
			return p, false, err
		}
		p = pendingLogin{nonce: st.Nonce, verifier: st.Verifier, started: st.Started}
	} else {
		l.mu.Lock()
		var ok bool
		p, ok = l.m[state]
		delete(l.m, state)
		l.mu.Unlock()
		if !ok {
			return pendingLogin{}, false, nil
		}
	}
	if l.now().Sub(p.started) >= loginTTL {
		return pendingLogin{}, false, nil
	}
	return p, true, nil
}

// randomID is 256 random bits, base64url.
func randomID() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24+)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
