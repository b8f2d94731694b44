package bankaccount

// National account numbers with published check digits, for the local (non-IBAN)
// account types. Values have passed the field's pattern.

import (
	"errors"
	"strings"
)

// checkCBU checks an Argentine CBU/CVU: two blocks, each ending in a check digit, block 1
// (bank 3, branch 4) with weights 7139713 and block 2 (13 digits) with 3971397139713
// (BCRA).
func checkCBU(v string) error {
	if len(v) != 22 || !allDigits(v) {
		return errors.New("must be 22 digits")
	}
	if !weightedMod10(v[:7], v[7], []int{7, 1, 3, 9, 7, 1, 3}) {
		return errors.New("check digit of the first block (digit 8) does not match (CBU, BCRA)")
	}
	if !weightedMod10(v[8:21], v[21], []int{3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3}) {
		return errors.New("check digit of the second block (digit 22) does not match (CBU, BCRA)")
	}
	return nil
}

// weightedMod10 reports whether check equals (10 - sum(digit*weight) mod 10) mod 10.
func weightedMod10(digits string, check byte, weights []int) bool {
	sum := 0
	for i, w := range weights {
		sum += int(digits[i]-'0') * w
	}
	return int(check-'0') == (10-sum%10)%10
}

// checkCzechPrefix and checkCzechAccount check the two parts of a Czech account number:
// each, zero-padded to 6 or 10 digits, has a weighted sum divisible by 11 (CNB decree
// 169/2011).
func checkCzechPrefix(v string) error {
	if !czechMod11(v, []int{10, 5, 8, 4, 2, 1}) {
		return errors.New("check digit does not match (Czech prefix mod-11, CNB decree 169/2011)")
	}
	return nil
}

func checkCzechAccount(v string) error {
	// The decree asks for at least two non-zero digits in the base part.
	if len(v)-strings.Count(v, "0") < 2 {
		return errors.New("must have at least two non-zero digits")
	}
	if !czechMod11(v, []int{6, 3, 7, 9, 10, 5, 8, 4, 2, 1}) {
		return errors.New("check digit does not match (Czech account mod-11, CNB decree 169/2011)")
	}
	return nil
}

func czechMod11(v string, weights []int) bool {
	if len(v) > len(weights) || !allDigits(v) {
		return false
	}
	pad := len(weights) - len(v)
	sum := 0
	for i := range v {
		sum += int(v[i]-'0') * weights[pad+i]
	}
	return sum%11 == 0
}

// checkHungarianGiro checks a Hungarian account number (GIRO): an 8-digit bank/branch
// block and an 8- or 16-digit account block, each with a weighted sum (9,7,3,1
// repeating) divisible by 10 (MNB).
func checkHungarianGiro(v string) error {
	d := digitsOnly(v)
	if (len(d) != 16 && len(d) != 24) || !allDigits(d) {
		return errors.New("must have 16 or 24 digits")
	}
	if !giroBlock(d[:8]) {
		return errors.New("check digit of the bank block (digit 8) does not match (Hungarian GIRO 9-7-3-1)")
	}
	if !giroBlock(d[8:]) {
		return errors.New("check digit of the account block does not match (Hungarian GIRO 9-7-3-1)")
	}
	return nil
}

func giroBlock(d string) bool {
	weights := [4]int{9, 7, 3, 1}
	sum := 0
	for i := range d {
		sum += int(d[i]-'0') * weights[i%4]
	}
	return sum%10 == 0
}

// checkLuhn checks a payment card number's Luhn (ISO/IEC 7812) check digit.
func checkLuhn(v string) error {
	if !allDigits(v) {
		return errors.New("must be digits")
	}
	sum := 0
	for i := range v {
		d := int(v[len(v)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	if sum%10 != 0 {
		return errors.New("check digit does not match (Luhn, ISO/IEC 7812)")
	}
	return nil
}
