package apiserver

import (
	_ "embed"
	"net/http"

	"sigs.k8s.io/yaml"
)

// openAPIYAML is the facade's OpenAPI document. Tests validate every response they receive
// against it, so it cannot drift from the handlers.
//
//go:embed openapi.yaml
var openAPIYAML []byte

func openAPIJSON() ([]byte, error) { return yaml.YAMLToJSON(openAPIYAML) }

// handleOpenAPI serves GET /openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.openapi)
}
