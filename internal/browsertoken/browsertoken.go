// Package browsertoken issues and checks the short-lived JWTs that browser callers (the
// dashboard's pages, spec 5.6) present to the REST API instead of an API key.
//
// A token is signed with Ed25519 by the facade itself: the dashboard signs it at sign-in, and
// every facade replica checks it with the same key file. A key file holds one or more PEM
// "PRIVATE KEY" blocks (PKCS #8); the first signs, all of them verify. Rotation: put the new
// key first and keep the old one second for at least the token lifetime, then drop it
// (docs/operations/dashboard.md). Tokens name their key by kid, so a verifier never tries
// keys at random.
package browsertoken

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// Claims are what a browser token asserts: which account the signed-in user acts for.
type Claims struct {
	// Account is the account's name; AccountUID binds the token to that account and not to a
	// later one of the same name (as APIKey.spec.accountUID does for keys).
	Account    string `json:"acct"`
	AccountUID string `json:"acct_uid"`
	jwt.RegisteredClaims
}

// Keys are the signing key and the keys that verify, by kid.
type Keys struct {
	signer ed25519.PrivateKey
	kid    string
	verify map[string]ed25519.PublicKey
}

// ParseKeys reads a key file's content: PEM blocks of PKCS #8 Ed25519 private keys, the
// signing key first.
func ParseKeys(data []byte) (*Keys, error) {
	k := &Keys{verify: map[string]ed25519.PublicKey{}}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("a PEM block of type %q: want PRIVATE KEY (PKCS #8 Ed25519)", block.Type)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a PRIVATE KEY block: %w", err)
		}
		priv, ok := parsed.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a PRIVATE KEY block holds a %T: want an Ed25519 key", parsed)
		}
		id := keyID(priv.Public().(ed25519.PublicKey))
		if k.signer == nil {
			k.signer, k.kid = priv, id
		}
		k.verify[id] = priv.Public().(ed25519.PublicKey)
	}
	if k.signer == nil {
		return nil, errors.New("no PRIVATE KEY block")
	}
	return k, nil
}

// LoadKeys reads a key file.
func LoadKeys(path string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// NewKeyPEM makes a fresh Ed25519 key as a PEM block, for a new key file or a rotation.
func NewKeyPEM() ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// keyID names a public key: the first 8 bytes of its SHA-256, in hex.
func keyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Issue signs a token for subject (the identity provider's issuer and subject, joined) acting
// for an account, valid for ttl from now and only for audience.
func (k *Keys) Issue(issuer, audience, subject, account, accountUID string, now time.Time, ttl time.Duration) (string, error) {
	claims := Claims{
		Account:    account,
		AccountUID: accountUID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   subject,
			Audience:  jwt.ClaimStrings{audience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        uuid.NewString(),
		},
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	t.Header["kid"] = k.kid
	return t.SignedString(k.signer)
}

// Verify checks a token's signature, issuer, audience and times and returns its claims. Every
// failure is one error: the caller answers them alike (a bad credential).
func (k *Keys) Verify(token, issuer, audience string, now time.Time) (*Claims, error) {
	claims := &Claims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		pub, ok := k.verify[kid]
		if !ok {
			return nil, errors.New("unknown kid")
		}
		return pub, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if err != nil {
		return nil, err
	}
	if claims.Account == "" || claims.AccountUID == "" || claims.Subject == "" {
		return nil, errors.New("a token without account, account UID or subject")
	}
	return claims, nil
}

// LooksLikeJWT says whether a bearer value has a JWT's shape (three dot-separated base64url
// parts, the first a JSON object): such a value is a browser token, checked as one, and when
// it does not verify it counts as a bad credential (spec 5.3).
func LooksLikeJWT(s string) bool {
	if strings.Count(s, ".") != 2 || !strings.HasPrefix(s, "eyJ") {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
