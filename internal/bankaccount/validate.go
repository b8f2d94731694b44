package bankaccount

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/emailaddr"
	"github.com/stablepay/payout-operator/internal/text"
)

// Validate checks recipient details (spec 2.1.1, 4.5, 4.7) for an account type of a
// currency and returns what the rest of the service needs from them. details is the
// request's "details" object as encoding/json decodes it; it is read, never changed.
//
// Every error is an *apierror.Error of code Invalid naming the field at fault and the
// rule it breaks. The first problem found is reported, in this order: unknown keys, the
// fields that shape the form (legalType, address.country), fields that do not apply to
// the chosen shape, the other fields in descriptor order, then rules spanning fields.
func (c *Catalog) Validate(currency, accountType string, details map[string]any) (*Details, error) {
	offers, err := c.currencyOffers(currency)
	if err != nil {
		return nil, err
	}
	if accountType == EmailRecipientType {
		if currency != "EUR" {
			return nil, apierror.FieldErrorf("type", "%s is only available for EUR, not %s", EmailRecipientType, currency)
		}
		return validateEmailRecipient(details)
	}
	o, err := findOffer(offers, currency, accountType)
	if err != nil {
		return nil, err
	}
	if details == nil {
		return nil, apierror.FieldErrorf("details", "required: an object with the fields of account type %s", o.typ)
	}
	values, objects, aerr := o.flatten(details)
	if aerr != nil {
		return nil, aerr
	}
	implied := ""
	run := func(f *field) *apierror.Error {
		country, err := c.validateField(o, f, values)
		if implied == "" {
			implied = country
		}
		return err
	}
	for _, g := range o.groups {
		for _, f := range g.fields {
			if f.RefreshRequirementsOnChange && f.active(values) {
				if err := run(f); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := o.checkApplicable(values, objects); err != nil {
		return nil, err
	}
	// Spec 2.1.1: whenever details.address is present, its country is required, also where
	// the address itself is optional.
	if objects[addressObject] && values[addressObject+".country"] == "" {
		return nil, apierror.FieldErrorf("details.address.country", "required whenever details.address is given: an ISO 3166-1 alpha-2 code such as US")
	}
	for _, g := range o.groups {
		for _, f := range g.fields {
			if !f.RefreshRequirementsOnChange && f.active(values) {
				if err := run(f); err != nil {
					return nil, err
				}
			}
		}
	}
	var warnings []string
	for _, cc := range o.crossChecks {
		w, err := cc(c, values)
		if err != nil {
			return nil, err
		}
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	d := &Details{Currency: currency, Type: o.typ, LegalType: values[legalTypeKey], Address: addressOf(values), Warnings: warnings}
	switch {
	case values["address.country"] != "":
		d.Country = values["address.country"]
	case implied != "":
		d.Country = implied
	default:
		d.Country = o.country
	}
	return d, nil
}

// flatten reads details into key -> value, with nested objects' members under
// "object.member" keys, and returns which objects were present. Empty strings and JSON
// nulls count as absent, as forms send them for fields left blank. Unknown keys are
// reported before values of the wrong JSON type.
func (o *offer) flatten(details map[string]any) (map[string]string, map[string]bool, *apierror.Error) {
	for _, k := range sortedKeys(details) {
		if o.objects[k] {
			m, _ := details[k].(map[string]any)
			for _, mk := range sortedKeys(m) {
				if o.fields[k+"."+mk] == nil {
					return nil, nil, apierror.FieldErrorf("details."+k+"."+truncate(mk, 40), "unknown field of %s; its fields are %s", k, o.memberList(k))
				}
			}
		} else if o.fields[k] == nil {
			return nil, nil, apierror.FieldErrorf("details."+truncate(k, 40), "unknown field of account type %s; its fields are %s", o.typ, o.keyList())
		}
	}
	values := make(map[string]string, len(details))
	objects := map[string]bool{}
	for _, k := range sortedKeys(details) {
		v := details[k]
		if !o.objects[k] {
			if err := putString(values, k, v); err != nil {
				return nil, nil, err
			}
			continue
		}
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, apierror.FieldErrorf("details."+k, "must be an object, got %s", jsonKind(v))
		}
		objects[k] = true
		for _, mk := range sortedKeys(m) {
			if err := putString(values, k+"."+mk, m[mk]); err != nil {
				return nil, nil, err
			}
		}
	}
	return values, objects, nil
}

func putString(values map[string]string, key string, v any) *apierror.Error {
	switch s := v.(type) {
	case nil:
	case string:
		// details are stored and shown (describe, mails) as sent: no terminal or bidi controls
		if err := text.Check(s); err != nil {
			return apierror.FieldErrorf("details."+key, "%s", err)
		}
		if s != "" {
			values[key] = s
		}
	default:
		return apierror.FieldErrorf("details."+key, "must be a string, got %s", jsonKind(v))
	}
	return nil
}

// checkApplicable refuses values of fields that exist for the type but not for the
// chosen legalType (or other condition): silently dropping them would lose data the
// caller thinks it sent.
func (o *offer) checkApplicable(values map[string]string, objects map[string]bool) *apierror.Error {
	for _, k := range sortedKeys(values) {
		if f := o.fields[k]; !f.active(values) {
			return apierror.FieldErrorf("details."+k, "does not apply here: only %s", describe(f.group.when))
		}
	}
	for _, obj := range sortedKeys(objects) {
		applies := false
		var first *field
		for k, f := range o.fields {
			if strings.HasPrefix(k, obj+".") {
				applies = applies || f.active(values)
				if first == nil || k < first.Key {
					first = f
				}
			}
		}
		if !applies {
			return apierror.FieldErrorf("details."+obj, "does not apply here: only %s", describe(first.group.when))
		}
	}
	return nil
}

// validateField applies one field's rules: presence, length, pattern, its named check,
// allowed values. It returns the country the value implies, if any.
func (c *Catalog) validateField(o *offer, f *field, values map[string]string) (string, *apierror.Error) {
	path := "details." + f.Key
	v, ok := values[f.Key]
	if !ok {
		if f.required(values) {
			return "", apierror.FieldErrorf(path, "required")
		}
		return "", nil
	}
	n := utf8.RuneCountInString(v)
	if f.MinLength != nil && n < *f.MinLength {
		return "", apierror.FieldErrorf(path, "must be at least %d characters, got %d", *f.MinLength, n)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return "", apierror.FieldErrorf(path, "must be at most %d characters, got %d", *f.MaxLength, n)
	}
	if f.re != nil && !f.re.MatchString(v) {
		hint := ""
		if f.Example != "" {
			hint = fmt.Sprintf(" (e.g. %s)", f.Example)
		}
		return "", apierror.FieldErrorf(path, "does not match the pattern %s%s", f.ValidationRegexp, hint)
	}
	var country string
	if f.check != nil {
		var err error
		if country, err = f.check(c, o, values, v); err != nil {
			return "", apierror.FieldErrorf(path, "%s", err.Error())
		}
	}
	if f.allowed != nil && !f.allowed[v] {
		if len(f.ValuesAllowed) <= 8 {
			keys := make([]string, len(f.ValuesAllowed))
			for i, a := range f.ValuesAllowed {
				keys[i] = a.Key
			}
			return "", apierror.FieldErrorf(path, "must be one of %s, got %q", strings.Join(keys, ", "), truncate(v, 40))
		}
		return "", apierror.FieldErrorf(path, "%q is not one of the %d values in the field's valuesAllowed (account requirements of %s)", truncate(v, 40), len(f.ValuesAllowed), o.currency)
	}
	return country, nil
}

// validateEmailRecipient checks the spec's e-mail recipient: details are exactly {email}
// with one plain address.
func validateEmailRecipient(details map[string]any) (*Details, error) {
	if details == nil {
		return nil, apierror.FieldErrorf("details", "required: {email}")
	}
	for _, k := range sortedKeys(details) {
		if k != "email" {
			return nil, apierror.FieldErrorf("details."+truncate(k, 40), "unknown field of account type %s; its only field is email", EmailRecipientType)
		}
	}
	v, ok := details["email"].(string)
	switch {
	case details["email"] == nil || (ok && v == ""):
		return nil, apierror.FieldErrorf("details.email", "required")
	case !ok:
		return nil, apierror.FieldErrorf("details.email", "must be a string, got %s", jsonKind(details["email"]))
	}
	// the address the payout is sent to: the service's one e-mail check
	if err := emailaddr.Check(v); err != nil {
		return nil, apierror.FieldErrorf("details.email", "%s", err)
	}
	return &Details{Currency: "EUR", Type: EmailRecipientType}, nil
}

// addressObject is the key of the postal address in details (spec 2.1.1).
const addressObject = "address"

// stringValues reads details leniently for Refresh: only string values count.
func stringValues(details map[string]any) map[string]string {
	values := map[string]string{}
	for k, v := range details {
		switch x := v.(type) {
		case string:
			if x != "" {
				values[k] = x
			}
		case map[string]any:
			for mk, mv := range x {
				if s, ok := mv.(string); ok && s != "" {
					values[k+"."+mk] = s
				}
			}
		}
	}
	return values
}

func (o *offer) keyList() string {
	var keys []string
	seen := map[string]bool{}
	for _, g := range o.groups {
		for _, f := range g.fields {
			k, _, _ := strings.Cut(f.Key, ".")
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return strings.Join(keys, ", ")
}

func (o *offer) memberList(obj string) string {
	var keys []string
	for _, g := range o.groups {
		for _, f := range g.fields {
			if m, ok := strings.CutPrefix(f.Key, obj+"."); ok {
				keys = append(keys, m)
			}
		}
	}
	return strings.Join(keys, ", ")
}

func describe(conds []condition) string {
	parts := make([]string, len(conds))
	for i, cd := range conds {
		parts[i] = fmt.Sprintf("when %s is %s", cd.key, strings.Join(cd.values, " or "))
	}
	return strings.Join(parts, " and ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case string:
		return "a string"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
