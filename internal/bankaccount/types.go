package bankaccount

// AccountType is one account-requirements descriptor (spec 2.2): an account type a
// currency pays out to, with the fields its recipient details carry.
type AccountType struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Fields []FieldGroup `json:"fields"`
}

// FieldGroup is one entry of a descriptor's fields: a display name and its fields.
type FieldGroup struct {
	Name  string  `json:"name"`
	Group []Field `json:"group"`
}

// Field describes one key of the recipient details. Keys with a dot ("address.city")
// name a member of a nested object ("details.address.city").
type Field struct {
	Key                         string  `json:"key"`
	Name                        string  `json:"name"`
	Type                        string  `json:"type"` // text, select or radio
	Required                    bool    `json:"required"`
	RefreshRequirementsOnChange bool    `json:"refreshRequirementsOnChange"`
	ValuesAllowed               []Value `json:"valuesAllowed,omitempty"`
	Example                     string  `json:"example,omitempty"`
	MinLength                   *int    `json:"minLength,omitempty"`
	MaxLength                   *int    `json:"maxLength,omitempty"`
	ValidationRegexp            string  `json:"validationRegexp,omitempty"`
}

// Value is one allowed value of a select or radio field.
type Value struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// Details is what Validate learned from valid recipient details; the sanctions
// screener uses Country and Address.
type Details struct {
	Currency  string
	Type      string
	LegalType string // PRIVATE or BUSINESS; empty for email_recipient
	// Country is the ISO 3166-1 alpha-2 code of details.address.country when present,
	// else the country the account implies (an IBAN's or BIC's country, GB for a sort
	// code, IN for an IFSC, ...); empty when nothing implies one.
	Country string
	// Address is details.address, nil when absent.
	Address *Address
	// Warnings are advisory findings that did not make the details invalid, each
	// naming its field (e.g. an account number failing the UK modulus check).
	Warnings []string
}

// Address is details.address as sent.
type Address struct {
	Country   string
	City      string
	FirstLine string
	PostCode  string
	State     string
}

// EmailRecipientType is the spec's e-mail recipient (2.1.1): EUR only, details {email},
// no account requirements. It is not part of the data-driven catalog because its rules
// are fixed by the spec, not by a bank format.
const EmailRecipientType = "email_recipient"
