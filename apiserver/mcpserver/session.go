package mcpserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// sessionHeader carries a session's id (MCP Streamable HTTP, session management).
const sessionHeader = "Mcp-Session-Id"

// maxPeek bounds what is read of a request without a session to tell an initialize: the SDK's
// own body limit (mcp.DefaultMaxRequestBodyBytes), which answers a longer body with 413.
const maxPeek = 4 << 20

// sessions issues and checks the tool server's session ids. The SDK serves every request
// statelessly (no session in any replica's memory); what binds a session to the key that
// opened it is its id: random bits, an expiry and a MAC over both keyed by the key itself (its
// id and the credential the request was admitted with). Any replica checks an id with the
// request's own key, with nothing stored or shared: a request on the session with another key
// fails the MAC and is refused; an id past its expiry is unknown (404), so that the client
// initializes again, as the transport has it for a session the server ended.
type sessions struct {
	lifetime time.Duration
	now      func() time.Time
}

// id layout: 16 random bytes, the expiry (Unix seconds, 8 bytes), the MAC's first 16 bytes.
const (
	sessionRandom = 16
	sessionMAC    = 16
	sessionRaw    = sessionRandom + 8 + sessionMAC
)

// sessionKey is the MAC key of a key's sessions. The credential is the Authorization header's
// value, which admit has checked: only its holder and the server know it. Every request on a
// session computes it, so it is written without fmt (whose arguments are allocated) into a
// buffer that stays on the stack for the usual key and credential.
func sessionKey(keyID, credential string) [sha256.Size]byte {
	var buf [128]byte
	msg := append(buf[:0], "payout mcp session\x00"...)
	msg = append(msg, keyID...)
	msg = append(msg, 0)
	msg = append(msg, credential...)
	return sha256.Sum256(msg)
}

func sessionSum(key [sha256.Size]byte, msg []byte) [sessionMAC]byte {
	m := hmac.New(sha256.New, key[:])
	m.Write(msg)
	var sum [sha256.Size]byte
	return [sessionMAC]byte(m.Sum(sum[:0]))
}

// issue makes a new session id for the key.
func (s sessions) issue(keyID, credential string) string {
	raw := make([]byte, sessionRaw)
	_, _ = rand.Read(raw[:sessionRandom])
	binary.BigEndian.PutUint64(raw[sessionRandom:], uint64(s.now().Add(s.lifetime).Unix()))
	sum := sessionSum(sessionKey(keyID, credential), raw[:sessionRandom+8])
	copy(raw[sessionRandom+8:], sum[:])
	return base64.RawURLEncoding.EncodeToString(raw)
}

// check tells whether id is a live session of the key: 0 if it is, else the status and text
// to refuse the request with.
func (s sessions) check(id, keyID, credential string) (int, string) {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) != sessionRaw {
		return http.StatusNotFound, "the session does not exist: initialize a new one"
	}
	if sum := sessionSum(sessionKey(keyID, credential), raw[:sessionRandom+8]); !hmac.Equal(raw[sessionRandom+8:], sum[:]) {
		return http.StatusForbidden, "the session belongs to another API key"
	}
	if exp := int64(binary.BigEndian.Uint64(raw[sessionRandom:])); s.now().Unix() >= exp {
		return http.StatusNotFound, "the session has expired: initialize a new one"
	}
	return 0, ""
}

// bind checks the session of every request that names one, and gives an initialize that names
// none a new session id. A request without a session is served as the SDK serves it
// statelessly (the sessionless protocol of 2026-07-28 has none): the key, checked on every
// request, is what admits it; the session adds no right, it only refuses other keys.
func (s sessions) bind(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := r.Context().Value(identityKey{}).(identity)
		credential := r.Header.Get("Authorization")
		if sid := r.Header.Get(sessionHeader); sid != "" {
			if status, msg := s.check(sid, id.keyID, credential); status != 0 {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(status)
				_, _ = fmt.Fprintf(w, "{\"error\":%q}\n", msg)
				return
			}
		} else if r.Method == http.MethodPost && initializes(r) {
			w.Header().Set(sessionHeader, s.issue(id.keyID, credential))
		}
		next.ServeHTTP(w, r)
	})
}

// initializes tells whether r's body is an initialize request, leaving the body to be read
// again whole.
func initializes(r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	var msg struct {
		Method string `json:"method"`
	}
	return err == nil && json.Unmarshal(body, &msg) == nil && msg.Method == "initialize"
}

type readCloser struct {
	io.Reader
	io.Closer
}
