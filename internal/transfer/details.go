package transfer

import (
	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// DetailsMap flattens a recipient's details into the keys of the account requirements, nested
// groups with dotted keys ("address.country"), as a payout provider takes them.
func DetailsMap(d payoutv1.RecipientDetails) map[string]string {
	m := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	put("legalType", d.LegalType)
	put("iban", d.IBAN)
	put("sortCode", d.SortCode)
	put("accountNumber", d.AccountNumber)
	put("abartn", d.ABARTN)
	put("accountType", d.AccountType)
	put("bankCode", d.BankCode)
	put("email", d.Email)
	if a := d.Address; a != nil {
		put("address.country", string(a.Country))
		put("address.city", a.City)
		put("address.firstLine", a.FirstLine)
		put("address.postCode", a.PostCode)
		put("address.state", a.State)
	}
	for k, v := range d.Other {
		put(k, v)
	}
	return m
}
