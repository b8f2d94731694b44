package pricing

import (
	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// Bounds of any USD amount the service quotes or prices a fee for (spec §4.9, §4.14, §8.2).
var (
	MinAmount = decimal.New(1, -usdMinorUnits) // 0.01
	MaxAmount = decimal.New(1000000, 0)
)

// maxAmountTextLen caps the accepted text so that a long run of leading zeros or decimals cannot
// make the parser allocate; "1000000.00" is 10 characters.
const maxAmountTextLen = 24

// ParseSourceAmount parses the sourceAmount parameter of a quote.
//
// Accepted: plain decimal text, digits with an optional fraction ("25", "25.5", "25.00"), between
// 0.01 and 1000000 inclusive, and representable in whole cents. Trailing zeros beyond the cents
// are harmless ("25.000" is 25.00) but "25.001" is refused: the spec allows quotes on any amount
// in range, yet a transfer amount has at most 2 decimals and must match its quote within 0.01, so
// a sub-cent quote could never be honoured exactly. Refused as well: signs, exponents ("1e3"),
// "NaN", "Inf", hex, grouping separators, surrounding spaces and a bare ".5" or "5.". Go's
// decimal and float parsers accept several of these, hence the explicit grammar check first.
func ParseSourceAmount(s string) (decimal.Decimal, error) {
	return ParseAmount("sourceAmount", s)
}

// ParseAmount is ParseSourceAmount for a parameter with another name (the amount of GET fee, the
// amount of a transfer); errors name field.
func ParseAmount(field, s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, apierror.FieldErrorf(field, "is required")
	}
	if len(s) > maxAmountTextLen || !isPlainDecimal(s) {
		return decimal.Decimal{}, apierror.FieldErrorf(field, "must be a plain decimal number of USD such as 25.00")
	}
	d, err := decimal.NewFromString(s)
	if err != nil { // unreachable after isPlainDecimal, kept so a parser change cannot slip through
		return decimal.Decimal{}, apierror.FieldErrorf(field, "must be a plain decimal number of USD such as 25.00")
	}
	if err := checkAmount(field, d); err != nil {
		return decimal.Decimal{}, err
	}
	return d.Truncate(usdMinorUnits), nil
}

// checkAmount enforces the service-wide bounds and cent precision on an already parsed amount.
func checkAmount(field string, d decimal.Decimal) error {
	if !d.Equal(d.Truncate(usdMinorUnits)) {
		return apierror.FieldErrorf(field, "must have at most 2 decimal places")
	}
	if d.LessThan(MinAmount) {
		return apierror.FieldErrorf(field, "must be at least %s USD", MinAmount.StringFixed(usdMinorUnits))
	}
	if d.GreaterThan(MaxAmount) {
		return apierror.FieldErrorf(field, "must be at most %s USD", MaxAmount.String())
	}
	return nil
}

// isPlainDecimal reports whether s is digits, optionally followed by '.' and digits.
func isPlainDecimal(s string) bool {
	dot := -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	return dot != 0 && dot != len(s)-1
}

// CheckLimits enforces an account's inclusive amount limits (spec §4.13) on a quote's
// sourceAmount; nil means no limit for that bound.
func CheckLimits(amount decimal.Decimal, min, max *decimal.Decimal) error {
	return CheckLimitsField("sourceAmount", amount, min, max)
}

// CheckLimitsField is CheckLimits for a request field with another name, e.g. the "amount" of a
// transfer, which must respect the same limits.
func CheckLimitsField(field string, amount decimal.Decimal, min, max *decimal.Decimal) error {
	if min != nil && amount.LessThan(*min) {
		return apierror.FieldErrorf(field, "%s USD is below this account's minimum amount of %s USD",
			amount.StringFixed(usdMinorUnits), min.StringFixed(usdMinorUnits))
	}
	if max != nil && amount.GreaterThan(*max) {
		return apierror.FieldErrorf(field, "%s USD is above this account's maximum amount of %s USD",
			amount.StringFixed(usdMinorUnits), max.StringFixed(usdMinorUnits))
	}
	return nil
}

// PlatformFee is the platform (service) fee of spec §4.14 on a USD amount: amount × percent / 100
// rounded half-up to cents. It is the same figure a quote deducts as its service fee (see Price),
// so the fee endpoint and the quote never disagree. The amount must lie in 0.01..1000000 with at
// most 2 decimals; errors name the field "amount".
func PlatformFee(amount, percent decimal.Decimal) (decimal.Decimal, error) {
	if err := checkAmount("amount", amount); err != nil {
		return decimal.Decimal{}, err
	}
	if err := checkPercent("service fee percent", percent); err != nil {
		return decimal.Decimal{}, err
	}
	return percentOf(amount, percent).Round(usdMinorUnits), nil
}

// percentOf is amount × percent / 100, exactly: a decimal shift instead of a division, which
// would be cut at decimal.DivisionPrecision digits.
func percentOf(amount, percent decimal.Decimal) decimal.Decimal {
	return amount.Mul(percent).Shift(-2)
}
