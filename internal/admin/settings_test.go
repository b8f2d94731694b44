package admin

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

func TestDefaultAccountSettingsAreTheDefaultAccount(t *testing.T) {
	got, err := DefaultAccountSettings("acme").Spec()
	if err != nil {
		t.Fatal(err)
	}
	if want := testgen.Account("acme").Spec; !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestSettingsSpecMapsEverySetting(t *testing.T) {
	s := AccountSettings{
		Email: "ops@acme.example", KYCRequired: true, V1Enabled: false, V2WalletScreening: false,
		V2FeeStructure: true, SmartWalletDeployed: false,
		MinAmount: "10", MaxAmount: "5000.50", ServiceFeePercent: "1.25", ServiceFeeFixed: "0.99",
		AllowedIPs: []string{"192.0.2.0/24", "198.51.100.7", "2001:DB8::/32", "2001:db8::1", "198.51.100.7/32"},
		Quotas:     payoutv1.Quotas{MaxOpenV1Transfers: 7, MaxActiveRecipients: 50, MaxClaims: 200},
	}
	got, err := s.Spec()
	if err != nil {
		t.Fatal(err)
	}
	usd := func(v string) *payoutv1.USDAmount { a := payoutv1.USDAmount(v); return &a }
	pct := payoutv1.Decimal("1.25")
	want := payoutv1.PayoutAccountSpec{
		Email: "ops@acme.example", KYCRequired: true, V2FeeStructure: true,
		AmountLimits: payoutv1.AmountLimits{Min: usd("10"), Max: usd("5000.50")},
		ServiceFee:   payoutv1.ServiceFee{Percent: &pct, Fixed: usd("0.99")},
		AllowedIPs:   []string{"192.0.2.0/24", "198.51.100.7/32", "2001:db8::/32", "2001:db8::1/128"},
		// an unset cap takes its default
		Quotas: payoutv1.Quotas{MaxOpenV1Transfers: 7, MaxOpenV2Transfers: payoutv1.DefaultMaxOpenV2Transfers, MaxActiveRecipients: 50, MaxClaims: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spec:\n got %+v\nwant %+v", got, want)
	}
}

func TestSettingsSpecRefusesInvalidSettings(t *testing.T) {
	valid := func(mod func(*AccountSettings)) AccountSettings {
		s := DefaultAccountSettings("acme")
		mod(&s)
		return s
	}
	cases := []struct {
		name      string
		settings  AccountSettings
		field     string
		wantInMsg string
	}{
		{"negative cap", valid(func(s *AccountSettings) { s.Quotas.MaxOpenV2Transfers = -1 }), FieldMaxOpenV2, "from 1 to 100000"},
		{"cap past its bound", valid(func(s *AccountSettings) { s.Quotas.MaxActiveRecipients = 1000001 }), FieldMaxRecipients, "from 1 to 1000000"},
		{"claims below the other caps", valid(func(s *AccountSettings) { s.Quotas.MaxClaims = 1199 }), FieldMaxClaims, "below 1200"},
		{"empty email", valid(func(s *AccountSettings) { s.Email = "" }), FieldEmail, "not an e-mail address"},
		{"email without @", valid(func(s *AccountSettings) { s.Email = "ops.example.com" }), FieldEmail, "not an e-mail address"},
		{"email without a dotted domain", valid(func(s *AccountSettings) { s.Email = "ops@localhost" }), FieldEmail, "not an e-mail address"},
		{"email with a display name", valid(func(s *AccountSettings) { s.Email = "Ops <ops@example.com>" }), FieldEmail, "not an e-mail address"},
		{"three decimals", valid(func(s *AccountSettings) { s.MinAmount = "1.234" }), FieldMinAmount, "at most 2 decimals"},
		{"negative amount", valid(func(s *AccountSettings) { s.MinAmount = "-1" }), FieldMinAmount, "non-negative decimal"},
		{"exponent", valid(func(s *AccountSettings) { s.MaxAmount = "1e3" }), FieldMaxAmount, "non-negative decimal"},
		{"leading zero", valid(func(s *AccountSettings) { s.MaxAmount = "010" }), FieldMaxAmount, "non-negative decimal"},
		{"above a million", valid(func(s *AccountSettings) { s.MaxAmount = "1000000.01" }), FieldMaxAmount, "at most 1000000"},
		{"min above max", valid(func(s *AccountSettings) { s.MinAmount, s.MaxAmount = "100", "99.99" }), FieldMaxAmount, "below the min amount 100"},
		{"percent above 100", valid(func(s *AccountSettings) { s.ServiceFeePercent = "100.5" }), FieldServiceFeePercent, "below 100"},
		{"percent of 100", valid(func(s *AccountSettings) { s.ServiceFeePercent = "100" }), FieldServiceFeePercent, "below 100"},
		{"percent of 100.00", valid(func(s *AccountSettings) { s.ServiceFeePercent = "100.00" }), FieldServiceFeePercent, "below 100"},
		{"percent not a number", valid(func(s *AccountSettings) { s.ServiceFeePercent = "1,5" }), FieldServiceFeePercent, "non-negative decimal"},
		{"fixed fee three decimals", valid(func(s *AccountSettings) { s.ServiceFeeFixed = "0.001" }), FieldServiceFeeFixed, "at most 2 decimals"},
		{"not a CIDR", valid(func(s *AccountSettings) { s.AllowedIPs = []string{"10.0.0.0/33"} }), FieldAllowedIPs, "not a CIDR"},
		{"not an address", valid(func(s *AccountSettings) { s.AllowedIPs = []string{"example.com"} }), FieldAllowedIPs, "not an IP address"},
		{"host bits", valid(func(s *AccountSettings) { s.AllowedIPs = []string{"10.0.0.5/24"} }), FieldAllowedIPs, "the network is 10.0.0.0/24"},
		{"zone", valid(func(s *AccountSettings) { s.AllowedIPs = []string{"fe80::1%eth0"} }), FieldAllowedIPs, "not an IP address"},
		{"empty entry", valid(func(s *AccountSettings) { s.AllowedIPs = []string{"10.0.0.1", " "} }), FieldAllowedIPs, "empty entry"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.settings.Spec()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a FieldError, got %v", err)
			}
			if fe.Field != c.field || !strings.Contains(err.Error(), c.wantInMsg) {
				t.Fatalf("got field %q, message %q; want field %q, message with %q", fe.Field, err, c.field, c.wantInMsg)
			}
		})
	}
}

func TestSettingsSpecAcceptsTheBounds(t *testing.T) {
	s := DefaultAccountSettings("acme")
	s.MinAmount, s.MaxAmount, s.ServiceFeePercent, s.ServiceFeeFixed = "0", "1000000", "99.999999999999999999", "1000000.00"
	s.AllowedIPs = []string{"0.0.0.0/0"}
	if _, err := s.Spec(); err != nil {
		t.Fatal(err)
	}
	s.MinAmount, s.MaxAmount = "25.5", "25.50" // inclusive bounds may meet
	if _, err := s.Spec(); err != nil {
		t.Fatal(err)
	}
}

func TestAllowedIPsLimit(t *testing.T) {
	var many []string
	for i := range maxAllowedIPs + 1 {
		many = append(many, "10.0.0."+itoa(i)+"/32")
	}
	if _, err := normalizeAllowedIPs(many); err == nil || !strings.Contains(err.Error(), "at most 64 entries") {
		t.Fatalf("65 entries: got %v", err)
	}
	if got, err := normalizeAllowedIPs(append(many[:maxAllowedIPs], many[0])); err != nil || len(got) != maxAllowedIPs {
		t.Fatalf("64 entries and a duplicate: got %d entries, %v", len(got), err)
	}
}
