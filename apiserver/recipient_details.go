package apiserver

import (
	"sort"
	"strings"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
)

// detailsFromAPI stores validated recipient details: the fields of spec 2.1.1 in their typed
// slots, every other field of the account type under other, keyed as in the requirements
// ("address.region" for an address field beyond the five of spec 2.1.1). A null value is a
// field not given, as Validate reads it.
func detailsFromAPI(m map[string]any) (payoutv1.RecipientDetails, error) {
	var d payoutv1.RecipientDetails
	for k, v := range m {
		if v == nil {
			// null is "not given", as validation reads it
			continue
		}
		if k == "address" {
			addr, ok := v.(map[string]any)
			if !ok {
				return d, apierror.FieldErrorf("details.address", "must be an object")
			}
			a := &payoutv1.PostalAddress{}
			for ak, av := range addr {
				if av == nil {
					continue
				}
				s, ok := av.(string)
				if !ok {
					return d, apierror.FieldErrorf("details.address."+ak, "must be a string")
				}
				switch ak {
				case "country":
					a.Country = payoutv1.CountryCode(s)
				case "city":
					a.City = s
				case "firstLine":
					a.FirstLine = s
				case "postCode":
					a.PostCode = s
				case "state":
					a.State = s
				default:
					setOther(&d, "address."+ak, s)
				}
			}
			d.Address = a
			continue
		}
		s, ok := v.(string)
		if !ok {
			return d, apierror.FieldErrorf("details."+k, "must be a string")
		}
		switch k {
		case "legalType":
			d.LegalType = s
		case "iban":
			d.IBAN = s
		case "sortCode":
			d.SortCode = s
		case "accountNumber":
			d.AccountNumber = s
		case "abartn":
			d.ABARTN = s
		case "accountType":
			d.AccountType = s
		case "bankCode":
			d.BankCode = s
		case "email":
			d.Email = s
		default:
			setOther(&d, k, s)
		}
	}
	return d, nil
}

func setOther(d *payoutv1.RecipientDetails, k, v string) {
	if d.Other == nil {
		d.Other = map[string]string{}
	}
	d.Other[k] = v
}

// detailsToAPI is the inverse of detailsFromAPI: the details object as the caller sent it.
func detailsToAPI(d payoutv1.RecipientDetails) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{
		"legalType": d.LegalType, "iban": d.IBAN, "sortCode": d.SortCode, "accountNumber": d.AccountNumber,
		"abartn": d.ABARTN, "accountType": d.AccountType, "bankCode": d.BankCode, "email": d.Email,
	} {
		if v != "" {
			m[k] = v
		}
	}
	var addr map[string]any
	if a := d.Address; a != nil {
		addr = map[string]any{"country": string(a.Country)}
		for k, v := range map[string]string{"city": a.City, "firstLine": a.FirstLine, "postCode": a.PostCode, "state": a.State} {
			if v != "" {
				addr[k] = v
			}
		}
		m["address"] = addr
	}
	keys := make([]string, 0, len(d.Other))
	for k := range d.Other {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sub, ok := strings.CutPrefix(k, "address."); ok && addr != nil {
			addr[sub] = d.Other[k]
			continue
		}
		m[k] = d.Other[k]
	}
	return m
}
