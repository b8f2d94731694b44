package kycsite

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Challenge is what a nonce was issued for: the account of the link and the wallet that asked.
type Challenge struct {
	Account string
	// Wallet is the address in EIP-55 case.
	Wallet  string
	Expires time.Time
}

// Nonces keeps the nonces the site issued until they are used or expire. Put refuses a nonce
// already held (the vendor callbacks' event ids go through it too); Take removes a nonce and
// reports whether it was there, atomically, so that of two uses of one nonce exactly one wins.
type Nonces interface {
	Put(ctx context.Context, nonce string, c Challenge) error
	Peek(ctx context.Context, nonce string) (Challenge, bool, error)
	Take(ctx context.Context, nonce string) (bool, error)
}

// ErrNonceHeld is Put's answer for a nonce already held.
var ErrNonceHeld = errors.New("the nonce is already held")

// MaxMemoryNonces bounds the memory store: an unauthenticated caller can ask for nonces, so
// their number is capped; past it a new challenge is refused (503) until older ones expire.
const MaxMemoryNonces = 100_000

// MemoryNonces is the nonce store of one replica, used when no shared store is configured.
// Behind several site replicas a challenge and its proof must then reach the same one (session
// affinity), or a proof is refused as unknown: it fails closed, never open. SharedNonces needs
// no affinity.
type MemoryNonces struct {
	mu     sync.Mutex
	byKey  map[string]Challenge
	now    func() time.Time
	maxLen int
}

// NewMemoryNonces is an empty store reading the time from now.
func NewMemoryNonces(now func() time.Time) *MemoryNonces {
	return &MemoryNonces{byKey: map[string]Challenge{}, now: now, maxLen: MaxMemoryNonces}
}

var errFull = errors.New("too many challenges are open; retry in a few minutes")

// Put holds nonce until c.Expires.
func (m *MemoryNonces) Put(_ context.Context, nonce string, c Challenge) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if old, ok := m.byKey[nonce]; ok && now.Before(old.Expires) {
		return ErrNonceHeld
	}
	if len(m.byKey) >= m.maxLen {
		for k, v := range m.byKey {
			if !now.Before(v.Expires) {
				delete(m.byKey, k)
			}
		}
		if len(m.byKey) >= m.maxLen {
			return errFull
		}
	}
	m.byKey[nonce] = c
	return nil
}

// Peek reads an unexpired nonce without using it.
func (m *MemoryNonces) Peek(_ context.Context, nonce string) (Challenge, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byKey[nonce]
	if ok && !m.now().Before(c.Expires) {
		delete(m.byKey, nonce)
		return Challenge{}, false, nil
	}
	return c, ok, nil
}

// Take uses an unexpired nonce.
func (m *MemoryNonces) Take(_ context.Context, nonce string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byKey[nonce]
	delete(m.byKey, nonce)
	return ok && m.now().Before(c.Expires), nil
}

// SharedValues is a store every replica sees, with expiring values (sharedlimits.Values).
type SharedValues interface {
	PutOnce(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Take(ctx context.Context, key string) ([]byte, bool, error)
}

// SharedNonces keeps the nonces where every replica sees them (Redis, when the facade's shared
// limits are configured): a challenge issued by one replica is answered on any, and used once
// whichever gets the proof, since Put is SET NX and Take GETDEL. Each nonce expires in the
// store with its challenge. A store that fails fails the challenge or proof (503): never open.
type SharedNonces struct {
	Values SharedValues
	Now    func() time.Time
}

// Put holds nonce until c.Expires.
func (n SharedNonces) Put(ctx context.Context, nonce string, c Challenge) error {
	ttl := c.Expires.Sub(n.Now())
	if ttl <= 0 {
		return nil // expired already: nothing could take it
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	ok, err := n.Values.PutOnce(ctx, nonce, b, ttl)
	switch {
	case err != nil:
		return err
	case !ok:
		return ErrNonceHeld
	}
	return nil
}

// Peek reads an unexpired nonce without using it.
func (n SharedNonces) Peek(ctx context.Context, nonce string) (Challenge, bool, error) {
	b, ok, err := n.Values.Get(ctx, nonce)
	if err != nil || !ok {
		return Challenge{}, false, err
	}
	var c Challenge
	if err := json.Unmarshal(b, &c); err != nil {
		return Challenge{}, false, err
	}
	if !n.Now().Before(c.Expires) {
		return Challenge{}, false, nil
	}
	return c, true, nil
}

// Take uses an unexpired nonce.
func (n SharedNonces) Take(ctx context.Context, nonce string) (bool, error) {
	b, ok, err := n.Values.Take(ctx, nonce)
	if err != nil || !ok {
		return false, err
	}
	var c Challenge
	if err := json.Unmarshal(b, &c); err != nil {
		return false, err
	}
	return n.Now().Before(c.Expires), nil
}
