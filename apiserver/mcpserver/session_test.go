package mcpserver

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"
)

// TestSessionIDs checks what a session id carries: it is good for the key that opened it, on
// any instance that checks it (nothing is stored), until its expiry; another key, an id
// whose expiry was moved, and an id that is not ours are refused.
func TestSessionIDs(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	opened := sessions{lifetime: time.Hour, now: clock}
	const keyA, credA = "k1", "Bearer svc_live_k1.secret-a"
	id := opened.issue(keyA, credA)
	if id == opened.issue(keyA, credA) {
		t.Fatalf("two sessions of one key got the same id %s", id)
	}
	for _, c := range []struct {
		name      string
		id        string
		key, cred string
		at        time.Time
		status    int
	}{
		{name: "the key that opened it", id: id, key: keyA, cred: credA, at: now, status: 0},
		{name: "the key that opened it, just before its expiry", id: id, key: keyA, cred: credA, at: now.Add(time.Hour - time.Second), status: 0},
		{name: "another key of the same account", id: id, key: "k2", cred: "Bearer svc_live_k2.secret-b", at: now, status: http.StatusForbidden},
		{name: "the key's id with another credential", id: id, key: keyA, cred: "Bearer svc_live_k1.other", at: now, status: http.StatusForbidden},
		{name: "past its expiry", id: id, key: keyA, cred: credA, at: now.Add(time.Hour), status: http.StatusNotFound},
		{name: "its expiry moved", id: withExpiry(t, id, now.Add(48*time.Hour)), key: keyA, cred: credA, at: now.Add(2 * time.Hour), status: http.StatusForbidden},
		{name: "not one of ours", id: "4f6c8d0e-5a1b-4c2d-9e3f-a0b1c2d3e4f5", key: keyA, cred: credA, at: now, status: http.StatusNotFound},
	} {
		// checked by another value, as another replica would: a session is nothing but its id
		at := c.at
		check := sessions{lifetime: time.Hour, now: func() time.Time { return at }}
		if got, msg := check.check(c.id, c.key, c.cred); got != c.status {
			t.Errorf("%s: status %d (%s), want %d", c.name, got, msg, c.status)
		}
	}
}

// withExpiry is id with its expiry set to exp and its MAC kept.
func withExpiry(t *testing.T, id string, exp time.Time) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) != sessionRaw {
		t.Fatalf("session id %q: %v", id, err)
	}
	u := uint64(exp.Unix())
	for i := 7; i >= 0; i-- {
		raw[sessionRandom+i] = byte(u)
		u >>= 8
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// TestSessionIDsOfEarlierBuilds checks that an id keeps its meaning across builds: one issued
// by an earlier build (random bits 0, 7, 14, ...; expiry 1 800 003 600) is still good for its
// key until its expiry, and its MAC is the one an earlier build wrote, so that replicas of two
// builds check each other's ids during a rollout.
func TestSessionIDsOfEarlierBuilds(t *testing.T) {
	const id = "AAcOFRwjKjE4P0ZNVFtiaQAAAABrSeAQsoUKrI9oxic4QDNA_LRSCA"
	at := time.Unix(1_800_000_000, 0)
	s := sessions{lifetime: time.Hour, now: func() time.Time { return at }}
	if got, msg := s.check(id, "k1", "Bearer svc_live_k1.secret-a"); got != 0 {
		t.Errorf("an earlier build's id: status %d (%s), want 0", got, msg)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(id)
	if sum := sessionSum(sessionKey("k1", "Bearer svc_live_k1.secret-a"), raw[:sessionRandom+8]); string(sum[:]) != string(raw[sessionRandom+8:]) {
		t.Errorf("MAC %x, an earlier build wrote %x", sum, raw[sessionRandom+8:])
	}
	if n := testing.AllocsPerRun(100, func() { s.check(id, "k1", "Bearer svc_live_k1.secret-a") }); n > 8 {
		t.Errorf("checking an id allocates %v times, want at most 8 (11 with fmt and the sums on the heap)", n)
	}
}
