package kyc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
	"github.com/stablepay/payout-operator/internal/secret"
)

// The HTTP verifier is tested against a real HTTP server that answers as the documented
// verification API would.
func TestHTTPVerifier(t *testing.T) {
	var lastPath, lastAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lastPath, lastAuth = r.URL.String(), r.Header.Get("Authorization")
		switch r.URL.Query().Get("account") {
		case "verified":
			_, _ = w.Write([]byte(`{"verified": true}`))
		case "unverified":
			_, _ = w.Write([]byte(`{"verified": false}`))
		case "unknown":
			w.WriteHeader(http.StatusNotFound)
		case "garbled":
			_, _ = w.Write([]byte(`{"ok": 1}`))
		case "slow":
			time.Sleep(300 * time.Millisecond)
			_, _ = w.Write([]byte(`{"verified": true}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	v := HTTP{remote.Service{BaseURL: srv.URL, Token: secret.New("t0k3n"), Timeout: 100 * time.Millisecond}}
	ctx := context.Background()
	cases := []struct {
		account     string
		want        bool
		unavailable bool
	}{
		{"verified", true, false},
		{"unverified", false, false},
		{"unknown", false, false},
		{"garbled", false, true},
		{"broken", false, true},
		{"slow", false, true},
	}
	for _, tc := range cases {
		ok, err := v.Verified(ctx, tc.account, "0x8Ba1f109551bD432803012645Ac136ddd64DBA72")
		if tc.unavailable {
			if apierror.CodeOf(err) != apierror.Unavailable {
				t.Errorf("%s: err = %v, want Unavailable (fail closed)", tc.account, err)
			}
			continue
		}
		if err != nil || ok != tc.want {
			t.Errorf("%s: Verified = %v, %v; want %v", tc.account, ok, err, tc.want)
		}
	}
	if lastAuth != "Bearer t0k3n" {
		t.Errorf("Authorization = %q", lastAuth)
	}
	if want := "/v1/wallets/0x8ba1f109551bd432803012645ac136ddd64dba72/verification?account=slow"; lastPath != want {
		t.Errorf("path = %q, want %q", lastPath, want)
	}
	if _, err := (HTTP{remote.Service{BaseURL: "http://127.0.0.1:1"}}).Verified(ctx, "a", "0x8ba1f109551bD432803012645Ac136ddd64DBA72"); apierror.CodeOf(err) != apierror.Unavailable {
		t.Errorf("unreachable service: %v, want Unavailable", err)
	}
}
