package bankaccount

import (
	"errors"
	"fmt"
)

// checkBICField checks a BIC (ISO 9362): 4 letters of institution, the ISO 3166-1 country
// of the institution, 2 characters of location, an optional 3-character branch. The
// field pattern has checked the shape; here the country must be real. The BIC's country
// is the account's country unless the details say otherwise.
func checkBICField(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	if len(v) != 8 && len(v) != 11 {
		return "", errors.New("must have 8 or 11 characters")
	}
	cc := v[4:6]
	if c.countries[cc] == "" {
		return "", fmt.Errorf("characters 5-6 (%s) must be an ISO 3166-1 country code", cc)
	}
	// A location code with "0" as its second character marks a test BIC (ISO 9362),
	// which cannot receive a payout.
	if v[7] == '0' {
		return "", errors.New("is a test BIC (second location character 0); use the live BIC")
	}
	return cc, nil
}
