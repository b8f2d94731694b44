package redact

import "testing"

func TestField(t *testing.T) {
	for _, c := range []struct{ path, in, want string }{
		{"recipient.details.iban", "DE89370400440532013000", "****3000"},
		{"recipient.details.iban", "DE89 3704 0044 0532 0130 00", "****3000"},
		{"recipient.details.accountNumber", "31926819", "****6819"},
		{"recipient.details.sortCode", "231470", "****"},
		{"recipient.details.abartn", "111000025", "****0025"},
		{"recipient.details.bankCode", "1234", "****"},
		{"wallet_address", "0x52908400098527886E0F7030069857D2E4169EE7", "****9EE7"},
		{"recipient.details.swiftCode", "DEUTDEFFXXX", "****FXXX"}, // a field unknown here is a number
		{"customerEmail", "jane.doe@example.com", "j***@example.com"},
		{"recipient.details.email", "Ölaf@example.org", "Ö***@example.org"},
		{"customerEmail", "not-an-address", "n***"},
		{"customerEmail", "@example.com", "@***"},
		{"recipient.accountHolderName", "Jane Q. Doe", "J*** Q*** D***"},
		{"recipient.details.address.firstLine", "12 Main Street", "1*** M*** S***"},
		{"recipient.details.address.city", "London", "L***"},
		{"recipient.details.address.postCode", "EC1A 1BB", "E*** 1***"},
		{"recipient.details.address.region", "Greater London", "G*** L***"},
		{"recipient.details.address.country", "GB", "GB"},
		{"recipient.details.legalType", "PRIVATE", "PRIVATE"},
		{"recipient.details.accountType", "CHECKING", "CHECKING"},
		{"customerEmail", "", ""},
		{"wallet_address", "", ""},
	} {
		if got := Field(c.path, c.in); got != c.want {
			t.Errorf("Field(%q, %q) = %q, want %q", c.path, c.in, got, c.want)
		}
	}
}
