package devenv

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// optionsServer answers GET deposit-options with body.
func optionsServer(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The instance is not ready while a dev chain's options are missing: payoutd creates them once
// its controllers start, and the facade can answer before that with no option at all.
func TestOptionsAvailableWantsEveryNetworkListed(t *testing.T) {
	networks := []string{"base", "ethereum"}
	option := func(network, status string) string {
		return fmt.Sprintf(`{"token":"usdc","network":%q,"status":%q}`, network, status)
	}
	cases := []struct {
		name, body string
		ready      bool
	}{
		{"no option yet", `{"options":[]}`, false},
		{"one network listed", `{"options":[` + option("base", "available") + `]}`, false},
		{"one unavailable", `{"options":[` + option("base", "available") + "," + option("ethereum", "unavailable") + `]}`, false},
		{"every network available", `{"options":[` + option("base", "available") + "," + option("ethereum", "available") + "," + option("tron", "unavailable") + `]}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := optionsAvailable(context.Background(), http.DefaultClient, optionsServer(t, c.body), "key", networks)
			if c.ready && err != nil {
				t.Fatalf("not ready: %v", err)
			}
			if !c.ready && err == nil {
				t.Fatalf("ready on %s", c.body)
			}
			if err != nil && !strings.Contains(err.Error(), "on ") {
				t.Fatalf("the error does not name the network: %v", err)
			}
		})
	}
}
