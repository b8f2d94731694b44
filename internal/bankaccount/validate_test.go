package bankaccount

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

func usAddress() map[string]any {
	return map[string]any{"country": "US", "city": "New York", "firstLine": "1 Main Street", "postCode": "10001", "state": "NY"}
}

// abaDetails is the conformance suite's aba recipient, with one address member replaced.
func abaDetails(member string, value any) map[string]any {
	a := usAddress()
	if value == nil {
		delete(a, member)
	} else {
		a[member] = value
	}
	return d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING", "address", a)
}

// TestValidateRules has a case per rule; each error must name the field and the rule.
func TestValidateRules(t *testing.T) {
	c := Default()
	cases := []struct {
		name, currency, typ string
		details             map[string]any
		want                string // "" = valid
	}{
		{"required", "EUR", "iban", d(), "details.iban: required"},
		{"details missing", "EUR", "iban", nil, "details: required"},
		{"type missing", "EUR", "", d(), "type: required: an account type of EUR (iban)"},
		{"unknown key", "EUR", "iban", d("iban", "DE89370400440532013000", "ibna", "x"), "details.ibna: unknown field of account type iban; its fields are legalType, iban, address"},
		{"unknown nested key", "USD", "aba", abaDetails("zip", "10001"), "details.address.zip: unknown field of address; its fields are country, state, city, postCode, firstLine"},
		{"unknown key before wrong type", "EUR", "iban", d("iban", 5.0, "zzz", "x"), "details.zzz: unknown field"},
		{"address not an object", "USD", "aba", d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING", "address", "1 Main Street"), "details.address: must be an object, got a string"},
		{"number instead of string", "EUR", "iban", d("iban", 89370400440532013000.0), "details.iban: must be a string, got a number"},
		{"boolean instead of string", "EUR", "iban", d("iban", true), "details.iban: must be a string, got a boolean"},
		{"array instead of string", "EUR", "iban", d("iban", []any{"DE89370400440532013000"}), "details.iban: must be a string, got an array"},
		{"object instead of string", "EUR", "iban", d("iban", map[string]any{"x": "y"}), "details.iban: must be a string, got an object"},
		{"null is absent: required", "EUR", "iban", d("iban", nil), "details.iban: required"},
		{"empty is absent: required", "EUR", "iban", d("iban", ""), "details.iban: required"},
		{"null is absent: optional", "AUD", "australian", d("bsbCode", "023604", "accountNumber", "123456789", "businessNumber", nil), ""},
		{"empty is absent: optional", "CZK", "czech", d("prefix", "", "accountNumber", "2000145399", "bankCode", "0800"), ""},
		{"min length", "GBP", "sort_code", d("sortCode", "04007", "accountNumber", "37618166"), "details.sortCode: must be at least 6 characters, got 5"},
		{"max length", "EUR", "iban", d("iban", "DE89370400440532013000DE89370400440532013000"), "details.iban: must be at most 42 characters, got 44"},
		{"length in characters, not bytes", "USD", "aba", abaDetails("city", strings.Repeat("é", 100)), ""},
		{"pattern", "USD", "aba", d("abartn", "02600959X", "accountNumber", "12345678", "accountType", "CHECKING", "address", usAddress()), "details.abartn: does not match the pattern ^[0-9]{9}$ (e.g. 026009593)"},
		{"allowed values", "USD", "aba", d("abartn", "026009593", "accountNumber", "12345678", "accountType", "checking", "address", usAddress()), `details.accountType: must be one of CHECKING, SAVINGS, got "checking"`},
		{"allowed values, long list", "PHP", "philippines", d("bankCode", "XYZ", "accountNumber", "001234567890"), `details.bankCode: "XYZ" is not one of the 64 values`},
		{"field of the other legalType", "BRL", "brazil", d("bankCode", "001", "branchCode", "1234", "accountNumber", "12345678-9", "accountType", "CHECKING", "phoneNumber", "+55 21 5555 5555", "cpf", "529.982.247-25", "cnpj", "14.271.665/0001-44"), "details.cnpj: does not apply here: only when legalType is BUSINESS"},
		// spec 2.1.1 gives iban, sort_code and philippines legalType and the account fields
		// alone: an address is optional for either legal type, and screened when given (4.5)
		{"address of a PRIVATE iban recipient", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{"country": "DE"}), ""},
		{"full address of a PRIVATE iban recipient", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{"country": "FR", "city": "Paris", "firstLine": "1 Rue de Rivoli", "postCode": "75001"}), ""},
		{"empty address of a PRIVATE iban recipient", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{}), "details.address.country: required whenever details.address is given"},
		{"address without country of an iban recipient", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{"city": "Berlin"}), "details.address.country: required whenever details.address is given"},
		{"null address of an iban recipient", "EUR", "iban", d("iban", "DE89370400440532013000", "address", nil), ""},
		{"alpha-3 country of an optional address", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{"country": "DEU"}), "details.address.country: must be an ISO 3166-1 alpha-2"},
		{"US state of an optional address", "EUR", "iban", d("iban", "DE89370400440532013000", "address", map[string]any{"country": "US", "state": "New York"}), "details.address.state: must be a US state or territory code"},
		{"BUSINESS iban without an address", "EUR", "iban", d("legalType", "BUSINESS", "iban", "DE89370400440532013000"), ""},
		{"BUSINESS with address", "EUR", "iban", d("legalType", "BUSINESS", "iban", "DE89370400440532013000", "address", map[string]any{"country": "DE", "city": "Berlin", "firstLine": "Unter den Linden 1", "postCode": "10117"}), ""},
		{"BUSINESS sort_code without an address", "GBP", "sort_code", d("legalType", "BUSINESS", "sortCode", "040075", "accountNumber", "37618166"), ""},
		{"PRIVATE sort_code with an address", "GBP", "sort_code", d("sortCode", "040075", "accountNumber", "37618166", "address", map[string]any{"country": "GB", "city": "London"}), ""},
		{"BUSINESS philippines without an address", "PHP", "philippines", d("legalType", "BUSINESS", "bankCode", "BDO", "accountNumber", "001234567890"), ""},
		{"PRIVATE philippines with an address", "PHP", "philippines", d("bankCode", "BDO", "accountNumber", "001234567890", "address", map[string]any{"country": "PH"}), ""},
		// other types keep the address for BUSINESS only (their fields are the requirements')
		{"address of a PRIVATE argentina recipient", "ARS", "argentina", d("taxId", "20-12345678-6", "accountNumber", "0110599520000001234567", "address", map[string]any{"country": "AR"}), "details.address.country: does not apply here: only when legalType is BUSINESS"},
		{"BUSINESS argentina needs the address", "ARS", "argentina", d("legalType", "BUSINESS", "taxId", "20-12345678-6", "accountNumber", "0110599520000001234567"), "details.address.country: required"},

		// details.address.country (spec 2.1.1, 4.5 rule 2, 4.7)
		{"address without country", "USD", "aba", abaDetails("country", nil), "details.address.country: required"},
		{"country alpha-3", "USD", "aba", abaDetails("country", "USA"), `details.address.country: must be an ISO 3166-1 alpha-2 country code (two capital letters, e.g. US), got "USA"; did you mean US (United States)?`},
		{"country name", "USD", "aba", abaDetails("country", "United States"), `got "United States"; did you mean US`},
		{"country 1A", "USD", "aba", abaDetails("country", "1A"), `details.address.country: must be an ISO 3166-1 alpha-2 country code (two capital letters, e.g. US), got "1A"`},
		{"country lower case", "USD", "aba", abaDetails("country", "us"), `got "us"; did you mean US`},
		{"country withdrawn", "USD", "aba", abaDetails("country", "AN"), `details.address.country: must be an ISO 3166-1 alpha-2`},
		{"country as a number", "USD", "aba", abaDetails("country", 840.0), "details.address.country: must be a string, got a number"},
		{"country XK", "USD", "aba", d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING", "address", map[string]any{"country": "XK", "city": "Pristina", "firstLine": "Rr. Nena Tereze 1", "postCode": "10000"}), ""},
		{"US state required", "USD", "aba", abaDetails("state", nil), "details.address.state: required"},
		{"US state code", "USD", "aba", abaDetails("state", "New York"), `details.address.state: must be a US state or territory code`},
		{"US territory", "USD", "aba", abaDetails("state", "PR"), ""},
		{"state outside the US is free", "USD", "aba", d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING", "address", map[string]any{"country": "DE", "city": "Berlin", "firstLine": "Unter den Linden 1", "postCode": "10117", "state": "Berlin"}), ""},

		// email_recipient (spec 2.1.1)
		{"email ok", "EUR", EmailRecipientType, map[string]any{"email": "payee+x@example.com"}, ""},
		{"email other currency", "GBP", EmailRecipientType, map[string]any{"email": "x@example.com"}, "type: email_recipient is only available for EUR, not GBP"},
		{"email extra key", "EUR", EmailRecipientType, map[string]any{"email": "x@example.com", "legalType": "PRIVATE"}, "details.legalType: unknown field of account type email_recipient; its only field is email"},
		{"email missing", "EUR", EmailRecipientType, map[string]any{}, "details.email: required"},
		{"email details missing", "EUR", EmailRecipientType, nil, "details: required: {email}"},
		{"email not a string", "EUR", EmailRecipientType, map[string]any{"email": 5.0}, "details.email: must be a string, got a number"},
		{"email without domain dot", "EUR", EmailRecipientType, map[string]any{"email": "x@localhost"}, "details.email: must have a domain with a dot"},
		{"email two addresses", "EUR", EmailRecipientType, map[string]any{"email": "a@example.com, b@example.com"}, "details.email: must be a plain e-mail address"},
		{"email not an address", "EUR", EmailRecipientType, map[string]any{"email": "not an email"}, "details.email: must be a plain e-mail address"},
		{"email with surrounding space", "EUR", EmailRecipientType, map[string]any{"email": " x@example.com"}, "details.email: must be a plain e-mail address"},

		// BGN and types
		{"BGN", "BGN", "iban", d("iban", "BG80BNBG96611020345678"), "currency: BGN is not supported; use EUR for Bulgaria"},
		{"Bulgarian IBAN in EUR", "EUR", "iban", d("iban", "BG80BNBG96611020345678"), ""},
		{"type of another currency", "EUR", "aba", d(), `type: "aba" is not an account type of EUR; use one of iban`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Validate(tc.currency, tc.typ, tc.details)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var ae *apierror.Error
			if !asAPIError(err, &ae) || ae.Code != apierror.Invalid || ae.Field == "" || !strings.HasPrefix(ae.Message, ae.Field+": ") {
				t.Errorf("error %#v is not a 400 that names its field first", err)
			}
		})
	}
}

func TestValidateResult(t *testing.T) {
	c := Default()
	cases := []struct {
		name, currency, typ string
		details             map[string]any
		want                Details
	}{
		{"country from the address", "USD", "aba", abaDetails("country", "US"),
			Details{Currency: "USD", Type: "aba", LegalType: "PRIVATE", Country: "US", Address: &Address{Country: "US", City: "New York", FirstLine: "1 Main Street", PostCode: "10001", State: "NY"}}},
		{"country from the IBAN", "EUR", "iban", d("iban", "FR1420041010050500013M02606"),
			Details{Currency: "EUR", Type: "iban", LegalType: "PRIVATE", Country: "FR"}},
		{"address beats the IBAN", "EUR", "iban", d("legalType", "BUSINESS", "iban", "FR1420041010050500013M02606", "address", map[string]any{"country": "MC", "city": "Monaco", "firstLine": "1 Avenue", "postCode": "98000"}),
			Details{Currency: "EUR", Type: "iban", LegalType: "BUSINESS", Country: "MC", Address: &Address{Country: "MC", City: "Monaco", FirstLine: "1 Avenue", PostCode: "98000"}}},
		{"country from the BIC", "UYU", "swift_code", d("swiftCode", "BROUUYMM", "accountNumber", "0012345678", "address", map[string]any{"country": "AR", "city": "Buenos Aires", "firstLine": "Av. 1", "postCode": "C1000"}),
			Details{Currency: "UYU", Type: "swift_code", LegalType: "PRIVATE", Country: "AR", Address: &Address{Country: "AR", City: "Buenos Aires", FirstLine: "Av. 1", PostCode: "C1000"}}},
		{"country implied by the type", "PHP", "philippines", d("bankCode", "BDO", "accountNumber", "001234567890"),
			Details{Currency: "PHP", Type: "philippines", LegalType: "PRIVATE", Country: "PH"}},
		{"modulus failure is a warning", "GBP", "sort_code", d("sortCode", "040075", "accountNumber", "37618166"),
			Details{Currency: "GBP", Type: "sort_code", LegalType: "PRIVATE", Country: "GB", Warnings: []string{
				"details.accountNumber: 37618166 fails the UK modulus check for sort code 040075 (Vocalink valacdos); payments to it may be returned"}}},
		{"e-mail recipient", "EUR", EmailRecipientType, map[string]any{"email": "x@example.com"},
			Details{Currency: "EUR", Type: EmailRecipientType}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Validate(tc.currency, tc.typ, tc.details)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %+v (address %+v)\nwant %+v (address %+v)", *got, got.Address, tc.want, tc.want.Address)
			}
		})
	}
}

// TestValidateLeavesDetailsAlone: the API echoes details as sent, so Validate must not
// normalise them in place.
func TestValidateLeavesDetailsAlone(t *testing.T) {
	c := Default()
	for _, v := range vectors {
		before, err := json.Marshal(v.details)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Validate(v.currency, v.typ, v.details)
		after, _ := json.Marshal(v.details)
		if string(before) != string(after) {
			t.Errorf("%s %s: details changed from %s to %s", v.currency, v.typ, before, after)
		}
	}
}
