package apiserver

import (
	"net/http"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/metrics"
)

// instrument is the outermost middleware: it counts every request and its latency in
// payout_facade_requests_total and payout_facade_request_duration_seconds, by the route
// template it matches on mux (never the raw path, which holds ids), and keeps
// payout_facade_requests_in_flight. Requests the door refuses before routing are counted under
// the route they would have reached.
func instrument(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route := routeOf(mux, r)
		metrics.FacadeInFlight(1)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			metrics.FacadeInFlight(-1)
			status := sw.status
			if status == 0 {
				// nothing written: net/http answers 200
				status = http.StatusOK
			}
			metrics.FacadeRequest(route, r.Method, status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

// routeOf is the template of the route r matches ("/api/payouts/recipients/{id}"), or
// metrics.RouteOther for a request that no API route serves (404, 405).
func routeOf(mux *http.ServeMux, r *http.Request) string {
	_, pattern := mux.Handler(r)
	// patterns are "METHOD /path" for the routes, "/" for the catch-all
	_, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return metrics.RouteOther
	}
	return path
}

// routeTemplates are the route label values: every path the mux serves under a method.
func (s *Server) routeTemplates() []string {
	out := []string{"/healthz", "/readyz", "/openapi.json", MCPPath}
	for _, rt := range s.routes() {
		out = append(out, rt.path)
	}
	return out
}

// statusWriter keeps the status code of the response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
