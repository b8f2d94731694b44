package apiserver

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/metrics"
)

// record is what the access log reports about one request; handlers and middleware fill it in.
type record struct {
	id      string
	status  int
	bytes   int
	ip      netip.Addr
	account string
	keyID   string
	err     error
	// caller is the request's authenticated caller (admit): kept here, it costs no allocation
	// of its own
	caller Caller
}

// recordOf is the access record of the request w answers: observe's recorder's, or a tool
// call's (bufferWriter); nil for a writer that carries none. The record rides on the writer,
// not in the request's context: a context value would cost each request a copy of the
// request and a context (r.WithContext), for what every handler is handed anyway.
func recordOf(w http.ResponseWriter) *record {
	for {
		switch t := w.(type) {
		case *recorder:
			return t.rec
		case *bufferWriter:
			return t.rec
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// recorder keeps the status and size of the response for the access log and the panic handler.
type recorder struct {
	http.ResponseWriter
	rec         *record
	wroteHeader bool
}

func (w *recorder) WriteHeader(status int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		w.rec.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's writer (the MCP endpoint flushes
// its event streams).
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.rec.bytes += n
	return n, err
}

// observe is the outermost middleware: request id, panic recovery, the access log (one
// structured line per request; the Authorization header and bodies are never logged) and the
// request metrics. A panic in a handler becomes a 500 with the error body; the server stays
// up. Every request is counted in payout_facade_requests_total and
// payout_facade_request_duration_seconds by the route template it matches on mux (never the
// raw path, which holds ids), and in payout_facade_requests_in_flight while it is served.
// Requests the door refuses before routing are counted under the route they would have
// reached.
func observe(log logr.Logger, mux *http.ServeMux, next http.Handler) http.Handler {
	access := newAccessLog(log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		metrics.FacadeInFlight(1)
		// the record, its writer and the X-Request-Id header's value in one allocation
		o := &observed{}
		rec := &o.rec
		rec.id = requestIDIn(r, &o.idBytes)
		o.idHeader[0] = rec.id
		w.Header()["X-Request-Id"] = o.idHeader[:] // the canonical form of the key, as Header.Set writes it
		rw := &o.rw
		*rw = recorder{ResponseWriter: w, rec: rec}
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				log.Error(nil, "handler panicked", "requestId", rec.id, "panic", p, "stack", string(debug.Stack()))
				if !rw.wroteHeader {
					writeError(rw, r, apierror.Errorf(apierror.Internal, "panic"))
				}
			}
			took := time.Since(start)
			metrics.FacadeInFlight(-1)
			status := rec.status
			if status == 0 {
				// nothing written: net/http answers 200
				status = http.StatusOK
			}
			metrics.FacadeRequest(routeOf(mux, r), r.Method, status, took)
			if p == http.ErrAbortHandler {
				panic(p)
			}
			access.write(r.Method, r.URL.Path, rec, took)
		}()
		next.ServeHTTP(rw, r)
	})
}

// observed is what observe makes for a request.
type observed struct {
	rec      record
	rw       recorder
	idHeader [1]string
	idBytes  [2 * requestIDBytes]byte
}

// requestIDBytes is how many random bytes a request id made here holds.
const requestIDBytes = 12

// requestID takes a caller's X-Request-Id when it is short and plain, else makes one.
func requestID(r *http.Request) string { return requestIDIn(r, new([2 * requestIDBytes]byte)) }

// requestIDIn is requestID making the id in buf: a string of buf's bytes, which are never
// written again, so that the id costs no allocation of its own.
func requestIDIn(r *http.Request, buf *[2 * requestIDBytes]byte) string {
	if id, ok := callersRequestID(r); ok {
		return id
	}
	var b [requestIDBytes]byte
	_, _ = rand.Read(b[:])
	hex.Encode(buf[:], b[:])
	return unsafe.String(&buf[0], len(buf))
}

// callersRequestID is the request's own X-Request-Id when it is short and plain.
func callersRequestID(r *http.Request) (string, bool) {
	id := r.Header.Get("X-Request-Id")
	return id, id != "" && len(id) <= 64 && isToken(id)
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// limitBody caps request bodies; reading past the cap fails with *http.MaxBytesError, which
// the decoder turns into a 413. A declared length over the cap is answered 413 by guarded,
// after authentication, so that such a request with a bad credential counts as one.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// a request without a body (net/http gives it NoBody: most of them, the GETs) has nothing
		// to cap
		if r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

// door answers every request from an address over a brute-force limit of spec 5.3 with 429
// (no rate-limit headers), before routing, the body limit or anything else: CONTRACT reads
// §5.3 as every request from it, with or without a valid key, until capacity returns. That
// covers unknown paths (404), other methods (405), /openapi.json and oversized bodies (413)
// alike. The probes (/healthz, /readyz) stay answered: they carry no credential, and refusing
// them would take a replica out of service. Every other request's address is counted for
// payout_facade_busiest_client_share (clientShare); probes are left out, since the kubelet's
// address would otherwise be the busiest of a quiet facade.
func (s *Server) door(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := clientIP(r, s.cfg.TrustedProxies)
		if rec := recordOf(w); rec != nil {
			rec.ip = ip // made a string only for a line the access log writes
		}
		if isProbe(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.clients.observe(ip)
		if s.guard.blocked(r.Context(), ip) {
			metrics.RateLimited(metrics.LimitAuthFailures)
			writeError(w, r, apierror.Errorf(apierror.TooManyRequests, msgBlocked))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isProbe(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}
