package kycsite

import (
	"context"
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

// MemoryNonces is the nonce store of one replica. Behind several site replicas a challenge and
// its proof must reach the same one (session affinity), or a proof is refused as unknown: it
// fails closed, never open.
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
