package pricing

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

func TestParseSourceAmountAccepts(t *testing.T) {
	// asked as sent; priced rounded half-up to cents (spec 4.9 sets no precision)
	cases := map[string]struct{ asked, priced string }{
		"0.01":       {"0.01", "0.01"},
		"1000000":    {"1000000", "1000000"},
		"1000000.00": {"1000000", "1000000"},
		"25":         {"25", "25"},
		"25.00":      {"25", "25"},
		"25.5":       {"25.5", "25.5"},
		"25.000":     {"25", "25"},
		"0025.10":    {"25.1", "25.1"},
		"999999.99":  {"999999.99", "999999.99"},
		"10.005":     {"10.005", "10.01"}, // half rounds up
		"10.0049999": {"10.0049999", "10"},
		"25.001":     {"25.001", "25"},
		"0.011":      {"0.011", "0.01"},
		"0.015":      {"0.015", "0.02"},
		"999999.995": {"999999.995", "1000000"},
		"1000000.000000000000000000000000000000000000000000000000000000": {"1000000", "1000000"}, // 64 characters
	}
	for in, want := range cases {
		asked, priced, err := ParseSourceAmount(in)
		if err != nil {
			t.Errorf("ParseSourceAmount(%q): %v", in, err)
			continue
		}
		if !asked.Equal(dec(t, want.asked)) || !priced.Equal(dec(t, want.priced)) {
			t.Errorf("ParseSourceAmount(%q) = %s, %s; want %s, %s", in, asked, priced, want.asked, want.priced)
		}
		if priced.Exponent() < -2 {
			t.Errorf("ParseSourceAmount(%q) prices %s with exponent %d, want at most 2 decimals", in, priced, priced.Exponent())
		}
	}
}

func TestParseSourceAmountRejects(t *testing.T) {
	cases := map[string]string{
		"":                              "is required",
		"abc":                           "plain decimal number",
		"0":                             "at least 0.01",
		"0.00":                          "at least 0.01",
		"-5":                            "plain decimal number",
		"+5":                            "plain decimal number",
		"0.009":                         "at least 0.01", // the bounds hold for the amount as asked
		"0.005":                         "at least 0.01", // though it would round to 0.01
		"0.001":                         "at least 0.01",
		"1000000.01":                    "at most 1000000",
		"1000000.001":                   "at most 1000000",
		"1000001":                       "at most 1000000",
		"NaN":                           "plain decimal number",
		"Inf":                           "plain decimal number",
		"1e3":                           "plain decimal number",
		"1E3":                           "plain decimal number",
		"0x10":                          "plain decimal number",
		"1,000":                         "plain decimal number",
		"1_000":                         "plain decimal number",
		" 25":                           "plain decimal number",
		"25 ":                           "plain decimal number",
		".5":                            "plain decimal number",
		"5.":                            "plain decimal number",
		"1.2.3":                         "plain decimal number",
		"２５":                            "plain decimal number",  // full-width digits
		"\u221225":                      "plain decimal number",  // Unicode minus, which decimal accepts
		"25." + strings.Repeat("0", 62): "at most 64 characters", // over the length cap
	}
	for in, msgPart := range cases {
		_, _, err := ParseSourceAmount(in)
		e := wantAPIError(t, err, apierror.Invalid, "sourceAmount")
		if !strings.Contains(e.Message, msgPart) {
			t.Errorf("ParseSourceAmount(%q) message %q, want it to contain %q", in, e.Message, msgPart)
		}
	}
}

// TestParseAmountIsCents: a paid amount (a transfer's, spec 4.10) keeps the 2-decimal rule.
func TestParseAmountIsCents(t *testing.T) {
	for in, want := range map[string]string{"25": "25", "25.5": "25.5", "25.000": "25", "0.01": "0.01", "1000000.00": "1000000"} {
		got, err := ParseAmount("amount", in)
		if err != nil || !got.Equal(dec(t, want)) {
			t.Errorf("ParseAmount(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, msgPart := range map[string]string{
		"abc": "plain decimal number", "25.001": "at most 2 decimal places", "10.005": "at most 2 decimal places",
		"0.009": "at most 2 decimal places", "0": "at least 0.01", "1000000.01": "at most 1000000",
		"0000000000000000000000025": "plain decimal number", // over the length cap
	} {
		_, err := ParseAmount("amount", in)
		e := wantAPIError(t, err, apierror.Invalid, "amount")
		if !strings.Contains(e.Message, msgPart) {
			t.Errorf("ParseAmount(%q) message %q, want it to contain %q", in, e.Message, msgPart)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	ten, hundred := dec(t, "10"), dec(t, "100")
	cases := []struct {
		amount   string
		min, max *decimal.Decimal
		msgPart  string // "" means accepted
	}{
		{"10", &ten, &hundred, ""},
		{"50.00", &ten, &hundred, ""},
		{"100", &ten, &hundred, ""},
		{"9.99", &ten, &hundred, "below this account's minimum amount of 10.00 USD"},
		{"5", &ten, &hundred, "below this account's minimum amount of 10.00 USD"},
		{"100.01", &ten, &hundred, "above this account's maximum amount of 100.00 USD"},
		{"0.01", nil, nil, ""},
		{"1000000", nil, nil, ""},
		{"0.01", nil, &hundred, ""},
		{"1000000", &ten, nil, ""},
		{"9.99", &ten, nil, "minimum"},
		{"100.01", nil, &hundred, "maximum"},
	}
	for _, c := range cases {
		err := CheckLimits(dec(t, c.amount), c.min, c.max)
		if c.msgPart == "" {
			if err != nil {
				t.Errorf("CheckLimits(%s, %s, %s): %v", c.amount, fmtPtr(c.min), fmtPtr(c.max), err)
			}
			continue
		}
		e := wantAPIError(t, err, apierror.Invalid, "sourceAmount")
		if !strings.Contains(e.Message, c.msgPart) {
			t.Errorf("CheckLimits(%s) message %q, want it to contain %q", c.amount, e.Message, c.msgPart)
		}
	}
	wantAPIError(t, CheckLimitsField("amount", dec(t, "9.99"), &ten, nil), apierror.Invalid, "amount")
	// an amount asked finer than a cent is named as asked, not rounded into the bound
	e := wantAPIError(t, CheckLimits(dec(t, "9.995"), &ten, nil), apierror.Invalid, "sourceAmount")
	if !strings.Contains(e.Message, "9.995 USD is below") {
		t.Errorf("CheckLimits(9.995) message %q", e.Message)
	}
}

func TestPlatformFee(t *testing.T) {
	cases := []struct{ amount, percent, want string }{
		{"20.00", "1.5", "0.30"}, // spec conformance example
		{"20.00", "0", "0"},
		{"0.01", "1.5", "0"},        // 0.00015
		{"1.00", "1.5", "0.02"},     // 0.015: half rounds up
		{"0.33", "1.5", "0"},        // 0.00495 rounds down
		{"0.34", "1.5", "0.01"},     // 0.0051
		{"1000000", "1.5", "15000"}, // upper bound
		{"1000000", "99.99", "999900"},
		{"123.45", "0.123", "0.15"}, // 0.1518435
		{"999.99", "2.75", "27.50"}, // 27.499725
		{"33.33", "0.15", "0.05"},   // 0.049995
	}
	for _, c := range cases {
		got, err := PlatformFee(dec(t, c.amount), dec(t, c.percent))
		if err != nil {
			t.Errorf("PlatformFee(%s, %s): %v", c.amount, c.percent, err)
			continue
		}
		if !got.Equal(dec(t, c.want)) || got.Exponent() < -2 {
			t.Errorf("PlatformFee(%s, %s) = %s, want %s", c.amount, c.percent, got, c.want)
		}
	}
	for _, a := range []string{"0", "1000000.01", "-1", "0.005"} {
		_, err := PlatformFee(dec(t, a), dec(t, "1.5"))
		wantAPIError(t, err, apierror.Invalid, "amount")
	}
	for _, p := range []string{"-0.1", "100", "250"} {
		_, err := PlatformFee(dec(t, "20"), dec(t, p))
		if err == nil || apierror.CodeOf(err) != apierror.Internal {
			t.Errorf("PlatformFee with percent %s: err %v, want an internal (configuration) error", p, err)
		}
	}
}
