package pricing

import (
	"sort"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// minorUnits holds the 81 target currencies of spec §8.3 with their ISO 4217 minor units (the
// number of decimals a payout amount may carry). It is the one list of supported currencies: a
// code that is not a key here is not supported. The values follow the ISO 4217 list maintained by
// SIX (list one), not CLDR, whose "digits" differ for cash-rounded currencies such as HUF or IDR.
var minorUnits = map[string]int32{
	"AED": 2, "ALL": 2, "ARS": 2, "AUD": 2, "BAM": 2, "BDT": 2, "BHD": 3, "BMD": 2, "BOB": 2,
	"BRL": 2, "BWP": 2, "CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2, "COP": 2, "CRC": 2, "CVE": 2,
	"CZK": 2, "DKK": 2, "DOP": 2, "EGP": 2, "EUR": 2, "GBP": 2, "GEL": 2, "GHS": 2, "GMD": 2,
	"GNF": 0, "GTQ": 2, "HKD": 2, "HNL": 2, "HUF": 2, "IDR": 2, "ILS": 2, "INR": 2, "ISK": 0,
	"JPY": 0, "KES": 2, "KGS": 2, "KHR": 2, "KRW": 0, "KWD": 3, "LAK": 2, "LKR": 2, "MAD": 2,
	"MNT": 2, "MOP": 2, "MUR": 2, "MXN": 2, "MYR": 2, "NAD": 2, "NGN": 2, "NIO": 2, "NOK": 2,
	"NPR": 2, "NZD": 2, "OMR": 3, "PEN": 2, "PHP": 2, "PKR": 2, "PLN": 2, "PYG": 0, "QAR": 2,
	"RON": 2, "RSD": 2, "RWF": 0, "SAR": 2, "SCR": 2, "SEK": 2, "SGD": 2, "SRD": 2, "THB": 2,
	"TND": 3, "TRY": 2, "TZS": 2, "UAH": 2, "UGX": 0, "USD": 2, "UYU": 2, "VND": 0, "ZAR": 2,
}

// withdrawn maps currencies the service used to pay out, and that callers still send, to the
// hint they need. Bulgaria adopted the euro, so BGN was removed in spec 1.3.16.
var withdrawn = map[string]string{
	"BGN": "BGN is no longer supported; use EUR for Bulgaria",
}

// usdMinorUnits is the precision of every USD amount: source amounts, fees and limits.
const usdMinorUnits = 2

// Supported reports whether code, an upper-case ISO 4217 code, is a payout currency.
func Supported(code string) bool {
	_, ok := minorUnits[code]
	return ok
}

// MinorUnits returns the ISO 4217 minor units of a supported currency and false for any other.
func MinorUnits(code string) (int32, bool) {
	n, ok := minorUnits[code]
	return n, ok
}

// Currencies returns the supported codes in alphabetical order.
func Currencies() []string {
	codes := make([]string, 0, len(minorUnits))
	for c := range minorUnits {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

// ParseCurrency validates the targetCurrency request parameter and returns its canonical
// upper-case code. Lower-case input is accepted because ISO codes are case-insensitive in
// practice and the response states the canonical form anyway.
func ParseCurrency(s string) (string, error) {
	return ParseCurrencyField("targetCurrency", s)
}

// ParseCurrencyField is ParseCurrency for a request field with another name (e.g. a recipient's
// "currency").
func ParseCurrencyField(field, s string) (string, error) {
	if s == "" {
		return "", apierror.FieldErrorf(field, "is required")
	}
	code := asciiUpper(s)
	if hint, ok := withdrawn[code]; ok {
		return "", apierror.FieldErrorf(field, "%s", hint)
	}
	if !Supported(code) {
		// The input is echoed only when it looks like a currency code, so that arbitrary
		// caller text is not reflected into the error body.
		if len(code) == 3 && isUpperAlpha(code) {
			return "", apierror.FieldErrorf(field, "currency %s is not supported", code)
		}
		return "", apierror.FieldErrorf(field, "must be a supported ISO 4217 currency code such as EUR")
	}
	return code, nil
}

// asciiUpper upper-cases the ASCII letters of s and nothing else. strings.ToUpper applies
// Unicode case mapping, which turns the dotless "ı" into "I" and "ſ" into "S", so that "ıls"
// would be read as ILS; ISO 4217 codes are ASCII letters, and any other text must stay
// unsupported.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

func isUpperAlpha(s string) bool {
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}
