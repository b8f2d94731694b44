// Package apikey issues, parses and checks the service's API keys, svc_live_<keyId>_<secret>.
//
// Only a SHA-256 of the whole key is stored. Keys carry 256 random bits, so a fast hash cannot
// be brute-forced the way a password hash can, and checking one costs microseconds per request.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

const (
	// Prefix starts every key.
	Prefix = "svc_live_"
	// KeyIDLen is the length of the public key id (hex of 8 random bytes).
	KeyIDLen = 16
	// SecretLen is the length of the secret part (hex of 32 random bytes).
	SecretLen  = 64
	hashPrefix = "sha256:"
)

// Key is a freshly issued key. Full is shown once and never stored.
type Key struct {
	ID   string
	Full string
	Hash string
}

// New issues a key from crypto/rand.
func New() (Key, error) {
	var id [KeyIDLen / 2]byte
	var secret [SecretLen / 2]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Key{}, err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return Key{}, err
	}
	full := Prefix + hex.EncodeToString(id[:]) + "_" + hex.EncodeToString(secret[:])
	return Key{ID: hex.EncodeToString(id[:]), Full: full, Hash: Hash(full)}, nil
}

// Hash is the stored form of a full key.
func Hash(full string) string {
	sum := sum256(full)
	return hashPrefix + hex.EncodeToString(sum[:])
}

// sum256 is full's SHA-256, hashed from a copy on the stack: []byte(full) of a key longer than
// the compiler's own small buffer is an allocation, and Matches runs on every request.
func sum256(full string) [sha256.Size]byte {
	var buf [len(Prefix) + maxIDLen + 1 + maxSecretLen]byte
	if len(full) <= len(buf) {
		return sha256.Sum256(buf[:copy(buf[:], full)])
	}
	return sha256.Sum256([]byte(full))
}

// Matches compares a presented full key with a stored hash in constant time.
// It runs on every request, so it builds the presented key's hash on the stack rather than as
// a string (Hash): nothing is allocated.
func Matches(storedHash, full string) bool {
	var want [len(hashPrefix) + 2*sha256.Size]byte
	copy(want[:], hashPrefix)
	sum := sum256(full)
	hex.Encode(want[len(hashPrefix):], sum[:])
	return subtle.ConstantTimeCompare([]byte(storedHash), want[:]) == 1
}

// Credential classifies the Authorization header of a request.
type Credential int

const (
	// Missing: no Authorization header, or one that is not a Bearer credential. Counts as a
	// request without usable authentication (spec 5.3), not as a bad credential.
	Missing Credential = iota
	// Malformed: a Bearer value that is not a key of ours, JWT-shaped tokens included. A bad
	// credential.
	Malformed
	// WellFormed: shaped like svc_live_<keyId>_<secret>; whether it is known is for the caller
	// to find out.
	WellFormed
)

// ParseAuthorization reads an Authorization header value. For a WellFormed key it returns the
// key id and the full key.
func ParseAuthorization(header string) (cred Credential, keyID, full string) {
	scheme, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Missing, "", ""
	}
	value = strings.TrimSpace(value)
	id, ok := ParseKey(value)
	if !ok {
		return Malformed, "", ""
	}
	return WellFormed, id, value
}

// ParseKey checks the shape of a full key, svc_live_<keyId>_<secret>, and returns its key id.
// The shape is checked loosely (letters and digits of sane lengths), not against the lengths
// this service issues: a key of the right form that is not ours must be answered as an
// unknown key, exactly like an unmatched or a revoked one (spec 5.2), not as a malformed one.
func ParseKey(full string) (keyID string, ok bool) {
	rest, found := strings.CutPrefix(full, Prefix)
	if !found {
		return "", false
	}
	id, secret, found := strings.Cut(rest, "_")
	if !found || len(id) == 0 || len(id) > maxIDLen || len(secret) == 0 || len(secret) > maxSecretLen || !isAlnum(id) || !isAlnum(secret) {
		return "", false
	}
	return id, true
}

// Bounds of a key's parts that are still looked up rather than refused as malformed.
const (
	maxIDLen     = 64
	maxSecretLen = 256
)

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
