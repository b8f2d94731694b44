package bankaccount

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// FuzzValidate feeds arbitrary JSON as details to every account type of every currency:
// Validate and Refresh must not panic, must not change the details, and must answer
// either a result with a real country or a 400 that names its field.
func FuzzValidate(f *testing.F) {
	c := Default()
	curs := c.Currencies()
	index := map[string]int{}
	for i, cur := range curs {
		index[cur] = i
	}
	for _, v := range vectors {
		raw, err := json.Marshal(v.details)
		if err != nil {
			f.Fatal(err)
		}
		offers := c.offers[v.currency]
		ti := len(offers) // email_recipient and unknown types map past the offers
		for i, o := range offers {
			if o.typ == v.typ {
				ti = i
			}
		}
		f.Add(uint8(index[v.currency]), uint8(ti), raw)
	}
	f.Add(uint8(0), uint8(0), []byte(`{"address":{"country":{"a":[1,2,{}]}},"legalType":null}`))
	f.Add(uint8(22), uint8(1), []byte(`{"email":"\u0000@\u00e9.com"}`))

	f.Fuzz(func(t *testing.T, ci, ti uint8, raw []byte) {
		var details map[string]any
		if json.Unmarshal(raw, &details) != nil {
			return
		}
		cur := curs[int(ci)%len(curs)]
		offers := c.offers[cur]
		typ := EmailRecipientType
		if n := int(ti) % (len(offers) + 1); n < len(offers) {
			typ = offers[n].typ
		}
		before, _ := json.Marshal(details)

		got, err := c.Validate(cur, typ, details)
		if err != nil {
			checkFieldError(t, err)
		} else if got == nil || (got.Country != "" && c.countries[got.Country] == "") {
			t.Fatalf("Validate(%s, %s, %s) = %+v", cur, typ, raw, got)
		}
		if _, err := c.Refresh(cur, typ, details); err != nil && typ != EmailRecipientType {
			t.Fatalf("Refresh(%s, %s, %s) = %v", cur, typ, raw, err)
		}
		if after, _ := json.Marshal(details); !bytes.Equal(before, after) {
			t.Fatalf("details changed: %s -> %s", before, after)
		}
	})
}

func checkFieldError(t *testing.T, err error) {
	t.Helper()
	var ae *apierror.Error
	if !asAPIError(err, &ae) || ae.Code != apierror.Invalid || ae.Field == "" || !strings.HasPrefix(ae.Message, ae.Field+": ") {
		t.Fatalf("error %#v is not a 400 naming its field", err)
	}
}
