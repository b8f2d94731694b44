package bankaccount

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/biter777/countries"
)

// withdrawnCodes are in the countries library for history's sake but no longer name a
// country (ISO 3166-3): Netherlands Antilles, Yugoslavia. XK (Kosovo) stays: it is not
// ISO-assigned, but banks, SWIFT and the IBAN registry use it.
var withdrawnCodes = map[string]bool{"AN": true, "YU": true}

// iso3166Names maps every current ISO 3166-1 alpha-2 code to its English name.
func iso3166Names() map[string]string {
	m := map[string]string{}
	for _, c := range countries.All() {
		a2 := c.Alpha2()
		if len(a2) == 2 && !withdrawnCodes[a2] {
			m[a2] = c.String()
		}
	}
	return m
}

// countryValues lists the codes as select values, sorted by name as a person scans them.
func countryValues(names map[string]string) []Value {
	vals := make([]Value, 0, len(names))
	for code, name := range names {
		vals = append(vals, Value{Key: code, Name: name})
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i].Name < vals[j].Name })
	return vals
}

// checkCountry accepts only an upper-case alpha-2 code (spec 2.1.1). The library's
// ByName would also map "USA", "us" and "United States" to US; those are refused, but
// the message names the code the caller likely meant.
func checkCountry(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	if c.countries[v] != "" {
		return v, nil
	}
	msg := fmt.Sprintf("must be an ISO 3166-1 alpha-2 country code (two capital letters, e.g. US), got %q", truncate(v, 40))
	if guess := countries.ByName(v); guess.IsValid() && c.countries[guess.Alpha2()] != "" {
		msg += fmt.Sprintf("; did you mean %s (%s)?", guess.Alpha2(), guess.String())
	}
	return "", errors.New(msg)
}

// usStates are the ISO 3166-2:US subdivision codes without the "US-" prefix (the 50
// states, DC and the inhabited territories), which are also the USPS abbreviations.
var usStates = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range countries.US.Subdivisions() {
		m[strings.TrimPrefix(string(s), "US-")] = true
	}
	return m
}()

// checkUSState checks the state of a US address; other countries' states are free text.
func checkUSState(_ *Catalog, _ *offer, values map[string]string, v string) (string, error) {
	if values["address.country"] != "US" || usStates[v] {
		return "", nil
	}
	return "", fmt.Errorf("must be a US state or territory code (ISO 3166-2:US without the prefix, e.g. NY), got %q", truncate(v, 40))
}

// addressOf returns details.address as validated, or nil when it is absent.
func addressOf(values map[string]string) *Address {
	a := &Address{
		Country:   values["address.country"],
		City:      values["address.city"],
		FirstLine: values["address.firstLine"],
		PostCode:  values["address.postCode"],
		State:     values["address.state"],
	}
	if *a == (Address{}) {
		return nil
	}
	return a
}
