package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

func TestParseBodyReadsFieldsStrictly(t *testing.T) {
	b, err := parseBody([]byte(`{"s":"x","n":25.10,"i":12,"t":true,"o":{"a":"b"},"z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok, err := b.str("s"); s != "x" || !ok || err != nil {
		t.Errorf("str = %q %v %v", s, ok, err)
	}
	if d, ok, err := b.number("n"); d.String() != "25.1" || !ok || err != nil {
		t.Errorf("number = %s %v %v", d, ok, err)
	}
	if i, ok, err := b.integer("i"); i != 12 || !ok || err != nil {
		t.Errorf("integer = %d %v %v", i, ok, err)
	}
	if v, ok, err := b.boolean("t"); !v || !ok || err != nil {
		t.Errorf("boolean = %v %v %v", v, ok, err)
	}
	if o, ok, err := b.object("o"); o["a"] != "b" || !ok || err != nil {
		t.Errorf("object = %v %v %v", o, ok, err)
	}
	if _, ok, _ := b.str("z"); ok {
		t.Error("null counts as absent")
	}
	if err := b.unknown(); err != nil {
		t.Errorf("every field was read: %v", err)
	}

	for _, tc := range []struct{ body, field, want string }{
		{`{"n":"25.00"}`, "n", "n: must be a number"},
		{`{"i":1.5}`, "i", "i: must be an integer"},
		{`{"i":9007199254740992}`, "i", "i: must be an integer"},
		{`{"s":5}`, "s", "s: must be a string"},
		{`{"t":"true"}`, "t", "t: must be true or false"},
		{`{"o":[1]}`, "o", "o: must be an object"},
	} {
		b, err := parseBody([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var got error
		switch tc.field {
		case "n":
			_, _, got = b.number("n")
		case "i":
			_, _, got = b.integer("i")
		case "s":
			_, _, got = b.str("s")
		case "t":
			_, _, got = b.boolean("t")
		case "o":
			_, _, got = b.object("o")
		}
		if got == nil || got.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.body, got, tc.want)
		}
	}
}

// TestObjectRefusesDuplicateKeysAtAnyDepth: the promise of the top level (a duplicate key is a
// 400 naming it) holds inside objects too, where encoding/json would keep the last value.
func TestObjectRefusesDuplicateKeysAtAnyDepth(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"details":{"iban":"DE89370400440532013000","iban":"GB29NWBK60161331926819"}}`, "details.iban: appears more than once"},
		{`{"details":{"address":{"city":"Berlin","country":"DE","city":"Paris"}}}`, "details.address.city: appears more than once"},
		{`{"details":{"a":[{"k":1,"k":2}]}}`, "details.a[0].k: appears more than once"},
	} {
		b, err := parseBody([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.object("details"); err == nil || err.Error() != tc.want || apierror.CodeOf(err) != apierror.Invalid {
			t.Errorf("%s: got %v, want a 400 %q", tc.body, err, tc.want)
		}
	}
	b, _ := parseBody([]byte(`{"details":{"address":{"city":"Berlin","state":null},"iban":"x","n":1.50,"l":[1,"a",null,{}]}}`))
	m, ok, err := b.object("details")
	if err != nil || !ok {
		t.Fatal(err)
	}
	if a := m["address"].(map[string]any); a["city"] != "Berlin" || a["state"] != nil || len(a) != 2 {
		t.Errorf("address = %v", a)
	}
	if n := m["n"].(json.Number); n != "1.50" {
		t.Errorf("numbers keep their text: %v", n)
	}
	if l := m["l"].([]any); len(l) != 4 || l[2] != nil {
		t.Errorf("array = %v", l)
	}
}

func TestParseBodyRefusesWhatIsNotOneObject(t *testing.T) {
	for _, body := range []string{``, `  `, `[]`, `"x"`, `{"a":1`, `{"a":1}{}`, `{"a":1,"a":2}`, `{"a":}`, `nul`} {
		if _, err := parseBody([]byte(body)); apierror.CodeOf(err) != apierror.Invalid {
			t.Errorf("parseBody(%q) = %v, want an Invalid error", body, err)
		}
	}
}

// FuzzParseBody: no input makes the decoder panic, and every refusal is a 400 for the caller.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"amount":25.00,"recipientId":1}`, `{"details":{"address":{"country":"US"}}}`, `[`, `{"a":"\u0000"}`, strings.Repeat("[", 100)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := parseBody(data)
		if err != nil {
			if apierror.CodeOf(err) != apierror.Invalid {
				t.Fatalf("parseBody error %v is not a 400", err)
			}
			return
		}
		for name := range b.fields {
			for _, read := range []func(string) error{
				func(n string) error { _, _, err := b.str(n); return err },
				func(n string) error { _, _, err := b.number(n); return err },
				func(n string) error { _, _, err := b.integer(n); return err },
				func(n string) error { _, _, err := b.boolean(n); return err },
				func(n string) error { _, _, err := b.object(n); return err },
			} {
				if err := read(name); err != nil && apierror.CodeOf(err) != apierror.Invalid {
					t.Fatalf("reading %q: %v is not a 400", name, err)
				}
			}
		}
		if err := b.unknown(); err != nil {
			t.Fatalf("all fields were read, yet unknown() = %v", err)
		}
	})
}
