package bankaccount

import (
	"github.com/stablepay/payout-operator/internal/apierror"
)

// fieldCheck is a rule beyond length and pattern, named by "check" in catalog.json. It
// gets a value that already has the field's length and pattern, and returns the country
// the value implies (an IBAN's or BIC's), if any. The error text completes
// "details.<key>: ", so it states the rule that failed.
type fieldCheck func(c *Catalog, o *offer, values map[string]string, v string) (country string, err error)

// crossCheck is a rule over several fields of a type, named by "checks" in catalog.json.
// It runs after every field passed on its own, and returns either an error or, for an
// advisory rule, a warning for Details.Warnings.
type crossCheck func(c *Catalog, values map[string]string) (warning string, err *apierror.Error)

var fieldChecks = map[string]fieldCheck{
	"iban":          checkIBANField,
	"nrb":           checkNRB,
	"aba":           pure(checkABA),
	"bic":           checkBICField,
	"country":       checkCountry,
	"usState":       checkUSState,
	"clabe":         checkCLABEField,
	"ifsc":          checkIFSCField,
	"nzAccount":     checkNZAccountField,
	"cuit":          pure(checkCUIT),
	"cbu":           pure(checkCBU),
	"abn":           pure(checkABN),
	"cpf":           pure(checkCPF),
	"cnpj":          pure(checkCNPJ),
	"rut":           pure(checkRUT),
	"luhn":          pure(checkLuhn),
	"czechPrefix":   pure(checkCzechPrefix),
	"czechAccount":  pure(checkCzechAccount),
	"hungarianGiro": pure(checkHungarianGiro),
}

var crossChecks = map[string]crossCheck{
	"ukModulus": checkUKSortCodeAccount,
}

// pure adapts a check that needs nothing but the value.
func pure(check func(string) error) fieldCheck {
	return func(_ *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
		return "", check(v)
	}
}

// digitsOnly returns s without the separators people type into account numbers
// ("-", ".", "/", " "); callers have already matched s against the field's pattern.
func digitsOnly(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '.', '/', ' ':
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

// allDigits reports whether s is a non-empty string of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
