package pricing

import (
	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
)

// Bounds of any USD amount the service quotes or prices a fee for (spec §4.9, §4.14, §8.2).
var (
	MinAmount = decimal.New(1, -usdMinorUnits) // 0.01
	MaxAmount = decimal.New(1000000, 0)
)

// maxAmountTextLen caps the accepted text so that a long run of leading zeros or decimals cannot
// make the parser allocate; "1000000.00" is 10 characters. A priced amount may carry more
// decimals than a paid one, so its cap is longer.
const (
	maxAmountTextLen       = 24
	maxPricedAmountTextLen = 64
)

// ParseSourceAmount parses the sourceAmount parameter of a quote (spec §4.9): see
// ParsePricedAmount.
func ParseSourceAmount(s string) (asked, priced decimal.Decimal, err error) {
	return ParsePricedAmount("sourceAmount", s)
}

// ParsePricedAmount parses a USD amount that the service prices rather than moves: the
// sourceAmount of a quote (§4.9) and the amount of GET fee (§4.14). The spec bounds both to 0.01
// to 1000000 inclusive and sets no precision, so any number of decimals is accepted.
//
// asked is the amount as sent, exactly; every bound (the service's here, the account's limits
// with CheckLimits) is checked on it, so 0.005 and 1000000.001 are out of range. priced is asked
// rounded half-up to cents, the precision of every USD amount the service moves and of a
// transfer's amount (at most 2 decimals, §4.10): it is what the quote is computed on, stores and
// answers as its sourceAmount, and what the fee is a percentage of. Rounding a value inside
// bounds that are whole cents never leaves them.
//
// Accepted text: digits with an optional fraction ("25", "25.5", "10.005"). Refused: signs,
// exponents ("1e3"), "NaN", "Inf", hex, grouping separators, surrounding spaces, a bare ".5" or
// "5.", and text over 64 characters. Go's decimal and float parsers accept several of these,
// hence the explicit grammar check first.
func ParsePricedAmount(field, s string) (asked, priced decimal.Decimal, err error) {
	if s == "" {
		return decimal.Decimal{}, decimal.Decimal{}, apierror.FieldErrorf(field, "is required")
	}
	if len(s) > maxPricedAmountTextLen {
		return decimal.Decimal{}, decimal.Decimal{}, apierror.FieldErrorf(field, "must be at most %d characters", maxPricedAmountTextLen)
	}
	d, err := parsePlainDecimal(field, s)
	if err != nil {
		return decimal.Decimal{}, decimal.Decimal{}, err
	}
	if err := checkRange(field, d); err != nil {
		return decimal.Decimal{}, decimal.Decimal{}, err
	}
	return d, d.Round(usdMinorUnits), nil
}

// ParseAmount parses a USD amount that is paid, such as the amount of a transfer (§4.10): the
// bounds of ParsePricedAmount and at most 2 decimals ("25.001" is refused; trailing zeros past the
// cents, "25.000", are harmless). Errors name field.
func ParseAmount(field, s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, apierror.FieldErrorf(field, "is required")
	}
	if len(s) > maxAmountTextLen {
		return decimal.Decimal{}, apierror.FieldErrorf(field, "must be a plain decimal number of USD such as 25.00")
	}
	d, err := parsePlainDecimal(field, s)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if err := checkAmount(field, d); err != nil {
		return decimal.Decimal{}, err
	}
	return d.Truncate(usdMinorUnits), nil
}

// parsePlainDecimal parses digits with an optional fraction, and nothing else.
func parsePlainDecimal(field, s string) (decimal.Decimal, error) {
	if !isPlainDecimal(s) {
		return decimal.Decimal{}, apierror.FieldErrorf(field, "must be a plain decimal number of USD such as 25.00")
	}
	d, err := decimal.NewFromString(s)
	if err != nil { // unreachable after isPlainDecimal, kept so a parser change cannot slip through
		return decimal.Decimal{}, apierror.FieldErrorf(field, "must be a plain decimal number of USD such as 25.00")
	}
	return d, nil
}

// checkAmount enforces the service-wide bounds and cent precision on an already parsed amount.
func checkAmount(field string, d decimal.Decimal) error {
	if !d.Equal(d.Truncate(usdMinorUnits)) {
		return apierror.FieldErrorf(field, "must have at most 2 decimal places")
	}
	return checkRange(field, d)
}

// checkRange enforces the service-wide bounds, 0.01 to 1000000 inclusive.
func checkRange(field string, d decimal.Decimal) error {
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

// Limit is an account's amount bound as stored (its schema validated it); nil means no limit.
func Limit(a *payoutv1.USDAmount) *decimal.Decimal {
	if a == nil {
		return nil
	}
	d := decimal.RequireFromString(string(*a))
	return &d
}

// CheckLimits enforces an account's inclusive amount limits (spec §4.13) on a quote's
// sourceAmount as asked (see ParsePricedAmount); nil means no limit for that bound.
func CheckLimits(amount decimal.Decimal, min, max *decimal.Decimal) error {
	return CheckLimitsField("sourceAmount", amount, min, max)
}

// CheckLimitsField is CheckLimits for a request field with another name, e.g. the "amount" of a
// transfer, which must respect the same limits.
func CheckLimitsField(field string, amount decimal.Decimal, min, max *decimal.Decimal) error {
	// an amount finer than a cent is shown as asked: rounded, 9.995 would read as 10.00
	text := amount.StringFixed(usdMinorUnits)
	if !amount.Equal(amount.Truncate(usdMinorUnits)) {
		text = amount.String()
	}
	if min != nil && amount.LessThan(*min) {
		return apierror.FieldErrorf(field, "%s USD is below this account's minimum amount of %s USD",
			text, min.StringFixed(usdMinorUnits))
	}
	if max != nil && amount.GreaterThan(*max) {
		return apierror.FieldErrorf(field, "%s USD is above this account's maximum amount of %s USD",
			text, max.StringFixed(usdMinorUnits))
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
