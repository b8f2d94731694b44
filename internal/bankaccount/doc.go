// Package bankaccount is the account-requirements catalog and recipient-details
// validation of the payout API (spec 2.1.1, 2.2, 4.2, 4.3, 4.5, 4.7, 8.3).
//
// The catalog is data: data/catalog.json says which account types each of the 81
// payout currencies pays out to and with which fields, in the spec 2.2 descriptor
// shape; the bank lists, the IBAN registry and the check tables beside it come from the
// project's shared reference data (data/README.md). Default uses the embedded copy;
// LoadDir reads a newer directory of the same layout at start.
//
// Decisions the API relies on:
//   - Currency codes are matched exactly: upper-case ISO 4217. "eur" is a 400 that
//     suggests "EUR"; BGN is a 400 telling the caller to use EUR for Bulgaria.
//   - Validation is strict and never rewrites what the caller sent (the API echoes
//     details as sent): no trimming, no upper-casing. An IBAN with spaces or in lower
//     case fails its pattern; separators are accepted only where a field's pattern
//     shows them (sort code "04-00-75", CPF "529.982.247-25").
//   - Unknown keys in details are refused, naming the key, so a typo never drops data;
//     so are fields that exist only for the other legalType.
//   - Empty strings and nulls count as absent, as forms send them for blank fields.
//   - legalType BUSINESS adds the recipient's address (and, per country, a company
//     number) through Refresh; Requirements shows a PRIVATE recipient's fields.
//   - email_recipient is built in (spec 2.1.1), EUR only, not listed by Requirements.
package bankaccount
