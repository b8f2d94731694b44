package bankaccount

// The read side of the catalog: account requirements (spec 4.2), their refresh (4.3)
// and the currency and type lookups Validate shares.

import (
	"slices"
	"strings"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// Currencies returns the supported payout currencies, sorted.
func (c *Catalog) Currencies() []string { return slices.Clone(c.currencies) }

// Requirements returns the account types of currency (spec 4.2), with the fields of a
// PRIVATE recipient; fields that depend on other values come with Refresh. The returned
// descriptors share their field slices with the catalog: treat them as read-only.
func (c *Catalog) Requirements(currency string) ([]AccountType, error) {
	offers, err := c.currencyOffers(currency)
	if err != nil {
		return nil, err
	}
	out := make([]AccountType, len(offers))
	for i, o := range offers {
		out[i] = o.base
	}
	return out, nil
}

// Refresh returns the account types of currency with accountType's fields resolved
// against the details gathered so far (spec 4.3): legalType BUSINESS adds fields, an
// address in the US makes the state required. Partial or invalid details are not an
// error here; Validate judges them. An account type the currency lacks is a 400.
func (c *Catalog) Refresh(currency, accountType string, details map[string]any) ([]AccountType, error) {
	offers, err := c.currencyOffers(currency)
	if err != nil {
		return nil, err
	}
	if accountType == EmailRecipientType && currency == "EUR" {
		return nil, apierror.FieldErrorf("type", "%s has no account requirements; its details are {email}", EmailRecipientType)
	}
	o, err := findOffer(offers, currency, accountType)
	if err != nil {
		return nil, err
	}
	values := stringValues(details)
	out := make([]AccountType, len(offers))
	for i, p := range offers {
		if p == o {
			out[i] = p.descriptor(values)
		} else {
			out[i] = p.base
		}
	}
	return out, nil
}

// currencyOffers resolves a currency code. Codes are matched exactly: the spec names
// ISO 4217 codes, which are upper-case, and a lower-case "eur" gets a 400 that names
// the code it likely meant rather than being silently accepted.
func (c *Catalog) currencyOffers(currency string) ([]*offer, error) {
	if currency == "" {
		return nil, apierror.FieldErrorf("currency", "required: an ISO 4217 code of a supported payout currency, e.g. EUR")
	}
	if offers, ok := c.offers[currency]; ok {
		return offers, nil
	}
	if msg, ok := c.unsupported[currency]; ok {
		return nil, apierror.FieldErrorf("currency", "%s", msg)
	}
	if up := asciiUpper(currency); up != currency && (c.offers[up] != nil || c.unsupported[up] != "") {
		return nil, apierror.FieldErrorf("currency", "%q is not a supported currency: codes are upper-case ISO 4217 (did you mean %s?)", currency, up)
	}
	return nil, apierror.FieldErrorf("currency", "%q is not a supported payout currency; supported: %s", truncate(currency, 16), strings.Join(c.currencies, ", "))
}

func findOffer(offers []*offer, currency, accountType string) (*offer, error) {
	for _, o := range offers {
		if o.typ == accountType {
			return o, nil
		}
	}
	if accountType == "" {
		return nil, apierror.FieldErrorf("type", "required: an account type of %s (%s)", currency, typeNames(offers))
	}
	if accountType == EmailRecipientType {
		return nil, apierror.FieldErrorf("type", "%s is only available for EUR", EmailRecipientType)
	}
	return nil, apierror.FieldErrorf("type", "%q is not an account type of %s; use one of %s", truncate(accountType, 40), currency, typeNames(offers))
}

func typeNames(offers []*offer) string {
	names := make([]string, len(offers))
	for i, o := range offers {
		names[i] = o.typ
	}
	return strings.Join(names, ", ")
}

// descriptor renders the type for the given values (nil: nothing gathered yet).
func (o *offer) descriptor(values map[string]string) AccountType {
	at := AccountType{Type: o.typ, Title: o.title}
	for _, g := range o.groups {
		if !holds(g.when, values) {
			continue
		}
		fg := FieldGroup{Name: g.name, Group: make([]Field, len(g.fields))}
		for i, f := range g.fields {
			fg.Group[i] = f.Field
			fg.Group[i].Required = f.required(values)
		}
		at.Fields = append(at.Fields, fg)
	}
	return at
}

// active reports whether the field belongs to details with these values.
func (f *field) active(values map[string]string) bool { return holds(f.group.when, values) }

func (f *field) required(values map[string]string) bool {
	if len(f.requiredWhen) > 0 {
		return holds(f.requiredWhen, values)
	}
	return f.Required
}

const (
	legalTypeKey = "legalType"
	// defaultLegalType renders forms before the caller has chosen; Validate still
	// requires legalType.
	defaultLegalType = "PRIVATE"
)

func holds(conds []condition, values map[string]string) bool {
	for _, cd := range conds {
		v, ok := values[cd.key]
		if !ok && cd.key == legalTypeKey {
			v = defaultLegalType
		}
		if !slices.Contains(cd.values, v) {
			return false
		}
	}
	return true
}

// asciiUpper upper-cases ASCII letters only: Unicode case mapping would read "ıls" as ILS.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// truncate keeps echoed caller input short in error texts.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
