package wise

import (
	"encoding/json"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/secret"
)

func TestStateOf(t *testing.T) {
	cases := map[string]fiat.State{
		"incoming_payment_waiting":           fiat.StatePending,
		"incoming_payment_initiated":         fiat.StateAccepted,
		"processing":                         fiat.StateAccepted,
		"funds_converted":                    fiat.StateAccepted,
		"bounced_back":                       fiat.StateAccepted, // may be sent again: not final
		"waiting_recipient_input_to_proceed": fiat.StateAccepted,
		"a_status_from_next_year":            fiat.StateAccepted, // unknown: never a failure
		"outgoing_payment_sent":              fiat.StateCompleted,
		"cancelled":                          fiat.StateRejected,
		"funds_refunded":                     fiat.StateRejected,
		"charged_back":                       fiat.StateRejected,
	}
	for status, want := range cases {
		if got := stateOf(status); got != want {
			t.Errorf("stateOf(%q) = %s, want %s", status, got, want)
		}
	}
}

// The key of a reference must never change: payouts in flight depend on it.
func TestCustomerTransactionIDIsStable(t *testing.T) {
	const ref = "6650f0c2a1b2c3d4e5f60718"
	got := CustomerTransactionID(ref)
	if got != CustomerTransactionID(ref) || got == CustomerTransactionID(ref+"x") {
		t.Fatal("the key is not a function of the reference")
	}
	if got != goldenKey {
		t.Fatalf("CustomerTransactionID(%q) = %s, want %s: the derivation changed", ref, got, goldenKey)
	}
}

// goldenKey is the name-based UUID (version 5) of the reference in keyNamespace, as any UUID
// library computes it (Python: uuid.uuid5(namespace, reference)).
const goldenKey = "9ce22e9f-5a0b-5985-b9b8-41a1a976c2c9"

func TestNestDetails(t *testing.T) {
	got, err := nestDetails(map[string]string{
		"legalType": "PRIVATE", "abartn": "111000025",
		"address.country": "US", "address.city": "New York",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"legalType": "PRIVATE", "abartn": "111000025",
		"address": map[string]any{"country": "US", "city": "New York"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nestDetails = %v, want %v", got, want)
	}
	for _, bad := range []map[string]string{
		{"address": "x", "address.city": "y"},
		{"address.": "x"},
		{".x": "x"},
	} {
		if _, err := nestDetails(bad); err == nil {
			t.Errorf("nestDetails(%v) accepted", bad)
		}
	}
}

func TestAmountJSON(t *testing.T) {
	var v struct {
		A amount `json:"a"`
		B amount `json:"b"`
		C amount `json:"c"`
	}
	// 0.1 + 0.2 is where float64 shows; a decimal keeps every digit.
	if err := json.Unmarshal([]byte(`{"a": 30.712, "b": "0.30000000000000000001", "c": null}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A.dec().String() != "30.712" || v.B.dec().String() != "0.30000000000000000001" || !v.C.dec().IsZero() {
		t.Errorf("decoded %s %s %s", v.A.dec(), v.B.dec(), v.C.dec())
	}
	for _, bad := range []string{`{"a": 1e3}`, `{"a": "x"}`, `{"a": true}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	out, _ := json.Marshal(quoteRequest{TargetAmount: number("15000"), Rate: ptr(number("156.34"))})
	if !strings.Contains(string(out), `"targetAmount":15000`) || !strings.Contains(string(out), `"rate":156.34`) {
		t.Errorf("amounts are not JSON numbers: %s", out)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRouteOf(t *testing.T) {
	if got := routeOf("/v3/profiles/42/transfers/12345678/payments"); got != "/v3/profiles/{id}/transfers/{id}/payments" {
		t.Errorf("routeOf = %s", got)
	}
	if got := routeOf("/v1/transfers?profile=42"); got != "/v1/transfers" {
		t.Errorf("routeOf = %s", got)
	}
}

func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	good.BaseURL, good.ProfileID, good.Token = "https://api.wise.com", 42, secret.New("t0k3n")
	if err := good.Validate(); err != nil {
		t.Fatalf("good config: %v", err)
	}
	local := good
	local.BaseURL = "http://127.0.0.1:8090"
	if err := local.Validate(); err != nil {
		t.Errorf("loopback http: %v", err)
	}
	cases := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.BaseURL = "" }, "fiat BaseURL (--fiat-url): is required"},
		{func(c *Config) { c.BaseURL = "http://bank.example.com" }, "--fiat-url): \"http://bank.example.com\" sends the token in clear"},
		{func(c *Config) { c.BaseURL = "api.wise.com" }, "--fiat-url): \"api.wise.com\" must be an absolute http or https URL"},
		{func(c *Config) { c.BaseURL = "https://u:p@api.wise.com" }, "must not carry credentials"},
		{func(c *Config) { c.ProfileID = 0 }, "fiat ProfileID (--fiat-profile-id)"},
		{func(c *Config) { c.Token = secret.Value{} }, "fiat Token (--fiat-token-file): is required (or set PAYOUT_FIAT_TOKEN)"},
		{func(c *Config) { c.Token = secret.New("a b") }, "fiat Token (--fiat-token-file): contains spaces"},
		{func(c *Config) { c.Timeout = 0 }, "fiat Timeout (--fiat-timeout)"},
		{func(c *Config) { c.Retries = 11 }, "fiat Retries (--fiat-retries)"},
		{func(c *Config) { c.RetryBackoff = 0 }, "fiat RetryBackoff (--fiat-retry-backoff)"},
		{func(c *Config) { c.Name = "Wise" }, "fiat Name (--fiat-provider-name)"},
		{func(c *Config) { c.ReturnWindow = -time.Hour }, "fiat ReturnWindow (--fiat-return-window)"},
		{func(c *Config) { c.ReturnWindow = 500 * 24 * time.Hour }, "fiat ReturnWindow (--fiat-return-window)"},
	}
	for _, tc := range cases {
		c := good
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want it to say %q", err, tc.want)
		}
	}
	// Every bad setting is reported at once.
	if err := (Config{}).Validate(); err == nil || strings.Count(err.Error(), "\n") < 3 {
		t.Errorf("empty config: %v", err)
	}
}

func TestConfigFlags(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
	c.BindFlags(fs)
	err := fs.Parse([]string{"--fiat-url=http://127.0.0.1:9", "--fiat-profile-id=7", "--fiat-timeout=3s",
		"--fiat-retries=1", "--fiat-retry-backoff=10ms", "--fiat-omit-rate", "--fiat-provider-name=simbank", "--fiat-return-window=240h"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(TokenEnv, "from-env")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: "http://127.0.0.1:9", ProfileID: 7, Token: secret.New("from-env"), Timeout: 3 * time.Second,
		Retries: 1, RetryBackoff: 10 * time.Millisecond, OmitRate: true, Name: "simbank", ReturnWindow: 240 * time.Hour,
		TokenSource: secret.Setting{Name: "fiat-token", Env: TokenEnv, Value: secret.New("from-env")}}
	if !reflect.DeepEqual(c, want) || c.Token.Reveal() != "from-env" {
		t.Errorf("flags gave %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	// A token set by the program itself (tests, make run) is kept.
	c.Token = secret.New("set")
	if err := c.Resolve(); err != nil || c.Token.Reveal() != "set" {
		t.Errorf("token %q, %v", c.Token.Reveal(), err)
	}
}
