package bankaccount

// Tax and company identifiers that some payout types carry, with their published check
// digits. Values have passed the field's pattern, so only separators need stripping.

import (
	"errors"
	"strings"
)

// checkCPF checks a Brazilian CPF: 9 digits and two mod-11 check digits (Receita
// Federal). Numbers of one repeated digit pass the arithmetic but are never issued.
func checkCPF(v string) error {
	d := digitsOnly(v)
	if len(d) != 11 || !allDigits(d) {
		return errors.New("must have 11 digits")
	}
	if strings.Count(d, d[:1]) == 11 {
		return errors.New("is not an issued CPF (one digit repeated)")
	}
	for n := 9; n <= 10; n++ {
		sum := 0
		for i := range n {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		if want := (sum * 10 % 11) % 10; int(d[n]-'0') != want {
			return errors.New("check digits do not match (CPF mod-11)")
		}
	}
	return nil
}

// checkCNPJ checks a Brazilian CNPJ: 12 characters and two mod-11 check digits. Since
// July 2026 the 12 characters may be letters (Receita Federal IN 2.229/2024): a
// character counts as its ASCII code minus 48, which keeps digits as they were.
func checkCNPJ(v string) error {
	d := digitsOnly(v)
	if len(d) != 14 || !allDigits(d[12:]) {
		return errors.New("must have 12 letters or digits and 2 check digits")
	}
	if allDigits(d) && strings.Count(d, d[:1]) == 14 {
		return errors.New("is not an issued CNPJ (one digit repeated)")
	}
	weights := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	for n := 12; n <= 13; n++ {
		sum := 0
		for i := range n {
			sum += int(d[i]-'0') * weights[13-n+i]
		}
		want := 11 - sum%11
		if want >= 10 {
			want = 0
		}
		if int(d[n]-'0') != want {
			return errors.New("check digits do not match (CNPJ mod-11)")
		}
	}
	return nil
}

// checkRUT checks a Chilean RUT: body and a mod-11 check character (0-9 or K), weights
// 2..7 from the right (Servicio de Impuestos Internos).
func checkRUT(v string) error {
	d := digitsOnly(v)
	if len(d) < 2 {
		return errors.New("is too short")
	}
	body, dv := d[:len(d)-1], d[len(d)-1]
	if !allDigits(body) {
		return errors.New("must be digits and a check character 0-9 or K")
	}
	sum, w := 0, 2
	for i := len(body) - 1; i >= 0; i-- {
		sum += int(body[i]-'0') * w
		if w++; w > 7 {
			w = 2
		}
	}
	want := "0123456789K"[(11-sum%11)%11]
	if dv != want {
		return errors.New("check character does not match (RUT mod-11)")
	}
	return nil
}

// checkCUIT checks an Argentine CUIT/CUIL: 2-digit type, 8-digit number, mod-11 check
// digit with weights 5432765432 (AFIP). A result of 10 is issued as 9 with type 23 or 33,
// which the same table maps.
func checkCUIT(v string) error {
	d := digitsOnly(v)
	if len(d) != 11 || !allDigits(d) {
		return errors.New("must have 11 digits")
	}
	switch d[:2] {
	case "20", "23", "24", "27", "30", "33", "34":
	default:
		return errors.New("type (first 2 digits) must be 20, 23, 24, 27, 30, 33 or 34")
	}
	weights := [10]int{5, 4, 3, 2, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i, w := range weights {
		sum += int(d[i]-'0') * w
	}
	if want := "01234567899"[(11-sum%11)%11]; d[10] != want {
		return errors.New("check digit does not match (CUIT mod-11)")
	}
	return nil
}

// checkABN checks an Australian Business Number: subtract 1 from the first digit, weight
// the 11 digits 10,1,3,5,...,19, and the sum is a multiple of 89 (ATO).
func checkABN(v string) error {
	d := digitsOnly(v)
	if len(d) != 11 || !allDigits(d) || d[0] == '0' {
		return errors.New("must have 11 digits, the first not 0")
	}
	weights := [11]int{10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19}
	sum := (int(d[0]-'0') - 1) * weights[0]
	for i := 1; i < 11; i++ {
		sum += int(d[i]-'0') * weights[i]
	}
	if sum%89 != 0 {
		return errors.New("check digits do not match (ABN mod-89)")
	}
	return nil
}
