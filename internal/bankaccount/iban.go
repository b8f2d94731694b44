package bankaccount

// IBAN validation (ISO 13616) against the SWIFT IBAN registry. No maintained Go IBAN
// library is served by the module proxy here (jacoelho/banking, jbub/banking,
// almerlucke/go-iban, fourcube/goiban and others answer "not available"), so the
// mod-97 check is implemented below; the per-country length and BBAN structure come
// from data/iban-registry.csv, so a new registry release needs no code change.

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type ibanFormat struct {
	country       string
	length        int
	bbanStructure string // SWIFT notation, for messages
	bban          *regexp.Regexp
	example       string
}

func readIBANRegistry(fsys fs.FS) (map[string]*ibanFormat, error) {
	rows, err := readCSV(fsys, ibanRegistryFile)
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: no rows", ibanRegistryFile)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"country_code", "iban_length", "bban_structure", "bban_regex", "example_iban"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: no column %s", ibanRegistryFile, h)
		}
	}
	m := map[string]*ibanFormat{}
	for i, r := range rows[1:] {
		line := i + 2
		f := &ibanFormat{country: r[col["country_code"]], bbanStructure: r[col["bban_structure"]], example: r[col["example_iban"]]}
		if len(f.country) != 2 || m[f.country] != nil {
			return nil, fmt.Errorf("%s:%d: bad or repeated country code %q", ibanRegistryFile, line, f.country)
		}
		if f.length, err = strconv.Atoi(r[col["iban_length"]]); err != nil || f.length < 5 || f.length > 34 {
			return nil, fmt.Errorf("%s:%d: bad iban_length %q", ibanRegistryFile, line, r[col["iban_length"]])
		}
		if f.bban, err = regexp.Compile(r[col["bban_regex"]]); err != nil {
			return nil, fmt.Errorf("%s:%d: bban_regex: %w", ibanRegistryFile, line, err)
		}
		// A registry example that fails its own row means the row is wrong.
		if f.example != "" {
			if err := f.validate(f.example); err != nil {
				return nil, fmt.Errorf("%s:%d: example %s: %w", ibanRegistryFile, line, f.example, err)
			}
		}
		m[f.country] = f
	}
	return m, nil
}

// validate checks an IBAN of this format's country: length, BBAN structure, check digits.
func (f *ibanFormat) validate(iban string) error {
	if len(iban) != f.length {
		return fmt.Errorf("a %s IBAN has %d characters, got %d", f.country, f.length, len(iban))
	}
	if iban[:2] != f.country || !allDigits(iban[2:4]) {
		return fmt.Errorf("must start with %s and two check digits", f.country)
	}
	if !f.bban.MatchString(iban[4:]) {
		return fmt.Errorf("the part after the check digits does not have the %s BBAN structure %s", f.country, f.bbanStructure)
	}
	return ibanCheckDigits(iban)
}

// ibanCheckDigits applies ISO 7064 MOD 97-10 to an IBAN of upper-case letters and digits.
func ibanCheckDigits(iban string) error {
	if len(iban) < 5 {
		return errors.New("too short for an IBAN")
	}
	// 00, 01 and 99 can satisfy the remainder (as aliases of 97 and 98) but are never
	// issued: ISO 13616 computes check digits in 02..98.
	if cd := iban[2:4]; cd == "00" || cd == "01" || cd == "99" {
		return fmt.Errorf("check digits %s are never issued (ISO 13616 allows 02 to 98)", cd)
	}
	rem := 0
	for _, r := range iban[4:] + iban[:4] {
		switch {
		case r >= '0' && r <= '9':
			rem = (rem*10 + int(r-'0')) % 97
		case r >= 'A' && r <= 'Z':
			rem = (rem*100 + int(r-'A') + 10) % 97
		default:
			return fmt.Errorf("%q is not an upper-case letter or digit", r)
		}
	}
	if rem != 1 {
		return errors.New("check digits do not match (ISO 13616 mod-97)")
	}
	return nil
}

func checkIBANField(c *Catalog, o *offer, _ map[string]string, v string) (string, error) {
	cc := v[:2]
	f := c.iban[cc]
	if f == nil {
		return "", fmt.Errorf("%s is not a country code of the SWIFT IBAN registry", cc)
	}
	if err := f.validate(v); err != nil {
		return "", err
	}
	if !slices.Contains(o.ibanCountries, cc) {
		return "", fmt.Errorf("%s IBANs are not accepted for %s payouts; accepted: %s", cc, o.currency, strings.Join(o.ibanCountries, " "))
	}
	return cc, nil
}

// checkNRB checks a Polish NRB, which is a PL IBAN without its "PL": the first two
// digits are the IBAN check digits.
func checkNRB(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	f := c.iban["PL"]
	if f == nil {
		return "", errors.New("no PL entry in the IBAN registry to check against")
	}
	if err := f.validate("PL" + v); err != nil {
		return "", errors.New("check digits do not match (NRB = PL IBAN without PL, ISO 13616 mod-97)")
	}
	return "PL", nil
}
