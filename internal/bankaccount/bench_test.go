package bankaccount

import "testing"

func BenchmarkValidate(b *testing.B) {
	c := Default()
	cases := []struct {
		name, currency, typ string
		details             map[string]any
	}{
		{"EUR_iban", "EUR", "iban", d("iban", "FR1420041010050500013M02606")},
		{"GBP_sort_code", "GBP", "sort_code", d("sortCode", "089999", "accountNumber", "66374958")},
		{"USD_aba", "USD", "aba", abaDetails("state", "NY")},
		{"JPY_japanese", "JPY", "japanese", d("bankCode", "0001", "branchCode", "001", "accountType", "CURRENT", "accountNumber", "1234567")},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Validate(tc.currency, tc.typ, tc.details); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
