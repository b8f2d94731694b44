// Package redact masks the personal and bank fields of a transfer for an API key of another
// account. A transfer lookup is global (spec 4.15) because its id travels as the bank reference
// and in mails, so knowing an id proves nothing: whoever holds one sees the transfer's shape
// and progress, and of the recipient and the customer only enough to recognise them.
package redact

import (
	"strings"
	"unicode/utf8"
)

// hidden stands for the masked part of a value.
const hidden = "****"

// Field masks value, the string at path of a transfer lookup ("customerEmail",
// "recipient.details.iban", "recipient.details.address.firstLine"; keys as spec 2.5 and 2.1.1
// spell them). Account and routing numbers and wallets keep their last four characters
// ("****1234") when they have at least eight, so the owner of the account can recognise it and
// a short code (a sort code) gives nothing away; e-mail addresses keep the first letter and the
// domain ("j***@example.com"); names and address lines keep the first letter of each word
// ("J*** S***"). The fields that describe the transfer rather than a person (the type of
// account, the legal type, the country) are shown as they are. A details field this package
// does not know is masked as a number: a new bank field must not leak until someone looks at it.
// An empty value stays empty, so a field that is null or "" stays so.
func Field(path, value string) string {
	if value == "" {
		return ""
	}
	switch path {
	case "customerEmail", "recipient.details.email":
		return email(value)
	case "recipient.accountHolderName":
		return words(value)
	case "recipient.details.legalType", "recipient.details.accountType", "recipient.details.address.country":
		return value
	}
	if strings.HasPrefix(path, "recipient.details.address.") {
		return words(value)
	}
	return number(value)
}

// number keeps the last four characters of a value of at least eight (spaces aside).
func number(s string) string {
	s = strings.ReplaceAll(s, " ", "")
	if utf8.RuneCountInString(s) < 8 {
		return hidden
	}
	r := []rune(s)
	return hidden + string(r[len(r)-4:])
}

// email keeps the first letter of the local part and the domain.
func email(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 {
		return words(s)
	}
	r, _ := utf8.DecodeRuneInString(s)
	return string(r) + "***" + s[at:]
}

// words keeps the first letter of each word.
func words(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		r, _ := utf8.DecodeRuneInString(f)
		fields[i] = string(r) + "***"
	}
	return strings.Join(fields, " ")
}
