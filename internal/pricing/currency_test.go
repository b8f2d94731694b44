package pricing

import (
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// specCurrencies is the list of spec §8.3, verbatim.
const specCurrencies = "AED, ALL, ARS, AUD, BAM, BDT, BHD, BMD, BOB, BRL, BWP, CAD, CHF, CLP, CNY, COP, CRC, CVE, CZK, DKK, DOP, EGP, EUR, GBP, GEL, GHS, GMD, GNF, GTQ, HKD, HNL, HUF, IDR, ILS, INR, ISK, JPY, KES, KGS, KHR, KRW, KWD, LAK, LKR, MAD, MNT, MOP, MUR, MXN, MYR, NAD, NGN, NIO, NOK, NPR, NZD, OMR, PEN, PHP, PKR, PLN, PYG, QAR, RON, RSD, RWF, SAR, SCR, SEK, SGD, SRD, THB, TND, TRY, TZS, UAH, UGX, USD, UYU, VND, ZAR"

func TestCurrenciesMatchSpec(t *testing.T) {
	want := strings.Split(specCurrencies, ", ")
	if len(want) != 81 {
		t.Fatalf("spec list has %d codes, want 81", len(want))
	}
	got := Currencies()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Currencies() = %v\nwant %v", got, want)
	}
	for _, c := range want {
		if !Supported(c) {
			t.Errorf("Supported(%s) = false", c)
		}
	}
	for _, c := range []string{"BGN", "eur", "XXX", "", "EURO", "BTC", "USDC"} {
		if Supported(c) {
			t.Errorf("Supported(%q) = true", c)
		}
	}
}

// TestMinorUnitsISO4217 lists the exceptions to two decimals per ISO 4217 (SIX list one): every
// supported currency not named here must have 2.
func TestMinorUnitsISO4217(t *testing.T) {
	exceptions := map[string]int32{
		"CLP": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0, "VND": 0,
		"BHD": 3, "KWD": 3, "OMR": 3, "TND": 3,
	}
	for _, c := range strings.Split(specCurrencies, ", ") {
		want, ok := exceptions[c]
		if !ok {
			want = 2
		}
		got, ok := MinorUnits(c)
		if !ok || got != want {
			t.Errorf("MinorUnits(%s) = %d, %v; want %d", c, got, ok, want)
		}
	}
	if _, ok := MinorUnits("BGN"); ok {
		t.Error("MinorUnits(BGN) reports a supported currency")
	}
}

func TestParseCurrency(t *testing.T) {
	for in, want := range map[string]string{"EUR": "EUR", "eur": "EUR", "Php": "PHP", "USD": "USD"} {
		got, err := ParseCurrency(in)
		if err != nil || got != want {
			t.Errorf("ParseCurrency(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	cases := []struct{ in, msgPart string }{
		{"BGN", "use EUR for Bulgaria"},
		{"bgn", "use EUR for Bulgaria"},
		{"XYZ", "XYZ is not supported"},
		{"", "is required"},
		{"EURO", "supported ISO 4217 currency code"},
		{"<script>", "supported ISO 4217 currency code"},
		// ASCII case only: Unicode case mapping reads the dotless ı as I, ſ as S, K (Kelvin) as K
		{"ıls", "supported ISO 4217 currency code"},
		{"ſek", "supported ISO 4217 currency code"},
		{"\u212aes", "supported ISO 4217 currency code"},
		{"eur\u0307", "supported ISO 4217 currency code"},
	}
	for _, c := range cases {
		_, err := ParseCurrency(c.in)
		e := wantAPIError(t, err, apierror.Invalid, "targetCurrency")
		if !strings.Contains(e.Message, c.msgPart) || !strings.HasPrefix(e.Message, "targetCurrency: ") {
			t.Errorf("ParseCurrency(%q) message %q, want it to start with the field and contain %q", c.in, e.Message, c.msgPart)
		}
		if strings.Contains(e.Message, "<script>") {
			t.Errorf("ParseCurrency(%q) reflects the input: %q", c.in, e.Message)
		}
	}
	_, err := ParseCurrencyField("currency", "BGN")
	wantAPIError(t, err, apierror.Invalid, "currency")
}
