package bankaccount

import (
	"errors"
	"fmt"
)

// checkABA checks a 9-digit ABA routing transit number: its Federal Reserve routing
// symbol prefix and the 3-7-1 weighted check digit.
//
// The Fed directories of the reference data are from 2018, so a routing number's existence is
// not checked: a bank chartered since would be refused. Tests use numbers from them.
func checkABA(v string) error {
	if len(v) != 9 || !allDigits(v) {
		return errors.New("must be 9 digits")
	}
	// The first two digits are the Fed district prefix: 01-12 for banks, 21-32 for
	// thrifts, 61-72 for electronic-only numbers. 00 (US government) and 80 (traveler's
	// cheques) are never ACH credit destinations, the rest is unassigned.
	p := int(v[0]-'0')*10 + int(v[1]-'0')
	if !(p >= 1 && p <= 12 || p >= 21 && p <= 32 || p >= 61 && p <= 72) {
		return fmt.Errorf("prefix %s is not a Federal Reserve routing symbol (01-12, 21-32, 61-72)", v[:2])
	}
	weights := [9]int{3, 7, 1, 3, 7, 1, 3, 7, 1}
	sum := 0
	for i := range 9 {
		sum += int(v[i]-'0') * weights[i]
	}
	if sum%10 != 0 {
		return errors.New("check digit does not match (ABA 3-7-1 checksum)")
	}
	return nil
}
