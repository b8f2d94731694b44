package apiserver

import (
	"net/http"
	"strings"

	"github.com/stablepay/payout-operator/internal/metrics"
)

// routeOf is the template of the route r matches ("/api/payouts/recipients/{id}"), or
// metrics.RouteOther for a request that no API route serves (404, 405). The mux notes the
// pattern it routed r by in r.Pattern; a request refused before routing (the door) is matched
// here, so that it counts under the route it would have reached.
func routeOf(mux *http.ServeMux, r *http.Request) string {
	pattern := r.Pattern
	if pattern == "" && mux != nil {
		_, pattern = mux.Handler(r)
	}
	// patterns are "METHOD /path" for the routes, "/" (or the catch-all's own, without a
	// method) for the rest
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
