package walletscreen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
)

// The HTTP screener is tested against a real HTTP server answering as the documented risk API.
func TestHTTPScreener(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "dead"):
			_, _ = w.Write([]byte(`{"blocked": true}`))
		case strings.Contains(r.URL.Path, "0000"):
			_, _ = w.Write([]byte(`{"blocked": false}`))
		case strings.Contains(r.URL.Path, "1111"):
			_, _ = w.Write([]byte(`not json`))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	s := HTTP{remote.Service{BaseURL: srv.URL}}
	ctx := context.Background()
	if b, err := s.Blocked(ctx, "0x000000000000000000000000000000000000dEaD"); err != nil || !b {
		t.Errorf("blocked wallet: %v %v", b, err)
	}
	if b, err := s.Blocked(ctx, "0x0000000000000000000000000000000000000001"); err != nil || b {
		t.Errorf("clean wallet: %v %v", b, err)
	}
	for _, w := range []string{"0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222"} {
		if _, err := s.Blocked(ctx, w); apierror.CodeOf(err) != apierror.Unavailable {
			t.Errorf("%s: %v, want Unavailable (fail closed)", w, err)
		}
	}
}
