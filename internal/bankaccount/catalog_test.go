package bankaccount

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// specCurrencies is spec 8.3, verbatim.
const specCurrencies = "AED, ALL, ARS, AUD, BAM, BDT, BHD, BMD, BOB, BRL, BWP, CAD, CHF, CLP, CNY, COP, CRC, CVE, CZK, DKK, DOP, EGP, EUR, GBP, GEL, GHS, GMD, GNF, GTQ, HKD, HNL, HUF, IDR, ILS, INR, ISK, JPY, KES, KGS, KHR, KRW, KWD, LAK, LKR, MAD, MNT, MOP, MUR, MXN, MYR, NAD, NGN, NIO, NOK, NPR, NZD, OMR, PEN, PHP, PKR, PLN, PYG, QAR, RON, RSD, RWF, SAR, SCR, SEK, SGD, SRD, THB, TND, TRY, TZS, UAH, UGX, USD, UYU, VND, ZAR"

func TestCurrenciesAreSpec8_3(t *testing.T) {
	got := Default().Currencies()
	want := strings.Split(specCurrencies, ", ")
	if len(want) != 81 || !slices.Equal(got, want) {
		t.Fatalf("Currencies() = %v (%d), want spec 8.3's %d", got, len(got), len(want))
	}
	got[0] = "XXX"
	if Default().Currencies()[0] != "AED" {
		t.Error("Currencies() returned the catalog's own slice")
	}
}

func TestDefaultIsParsedOnce(t *testing.T) {
	if Default() != Default() {
		t.Error("Default() built two catalogs")
	}
}

// fieldsByKey flattens a descriptor.
func fieldsByKey(at AccountType) map[string]Field {
	m := map[string]Field{}
	for _, g := range at.Fields {
		for _, f := range g.Group {
			m[f.Key] = f
		}
	}
	return m
}

func typeOf(t *testing.T, ats []AccountType, typ string) AccountType {
	t.Helper()
	for _, at := range ats {
		if at.Type == typ {
			return at
		}
	}
	t.Fatalf("no type %s in %v", typ, ats)
	return AccountType{}
}

// TestRequirementsOfTheSpecTypes mirrors the conformance suite's checks of 4.2/2.1.1.
func TestRequirementsOfTheSpecTypes(t *testing.T) {
	c := Default()
	cases := []struct {
		currency, typ string
		keys          []string
	}{
		{"EUR", "iban", []string{"legalType", "iban"}},
		{"GBP", "sort_code", []string{"legalType", "sortCode", "accountNumber"}},
		{"USD", "aba", []string{"legalType", "abartn", "accountNumber", "accountType", "address.country", "address.city", "address.firstLine", "address.postCode", "address.state"}},
		{"PHP", "philippines", []string{"legalType", "bankCode", "accountNumber"}},
	}
	for _, tc := range cases {
		ats, err := c.Requirements(tc.currency)
		if err != nil {
			t.Fatal(err)
		}
		fields := fieldsByKey(typeOf(t, ats, tc.typ))
		for _, k := range tc.keys {
			if _, ok := fields[k]; !ok {
				t.Errorf("%s %s lacks %s", tc.currency, tc.typ, k)
			}
		}
	}
	ats, _ := c.Requirements("USD")
	at := fieldsByKey(typeOf(t, ats, "aba"))["accountType"]
	if vals := at.ValuesAllowed; len(vals) != 2 || vals[0].Key != "CHECKING" || vals[1].Key != "SAVINGS" {
		t.Errorf("aba accountType values = %v, want CHECKING, SAVINGS", vals)
	}

	ats, _ = c.Requirements("EUR")
	f := fieldsByKey(typeOf(t, ats, "iban"))["iban"]
	if f.MinLength == nil || *f.MinLength != 14 || f.MaxLength == nil || *f.MaxLength != 42 {
		t.Errorf("iban length = %v..%v, want 14..42", f.MinLength, f.MaxLength)
	}
	re := regexp.MustCompile(`^(?:` + f.ValidationRegexp + `)$`)
	for _, good := range []string{"DE89370400440532013000", "GB29NWBK60161331926819", "FR1420041010050500013M02606"} {
		if !re.MatchString(good) {
			t.Errorf("iban pattern %q rejects %s", f.ValidationRegexp, good)
		}
	}
	for _, bad := range []string{"1289370400440532013000", "de89370400440532013000", "DEXX370400440532013000", "DE89 3704 0044 0532 0130 00"} {
		if re.MatchString(bad) {
			t.Errorf("iban pattern %q accepts %s", f.ValidationRegexp, bad)
		}
	}
}

// TestDescriptorJSON pins the wire names of spec 2.2.
func TestDescriptorJSON(t *testing.T) {
	ats, _ := Default().Requirements("USD")
	b, err := json.Marshal(ats)
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	aba := back[0]
	for _, k := range []string{"type", "title", "fields"} {
		if _, ok := aba[k]; !ok {
			t.Errorf("descriptor lacks %q: %s", k, b[:200])
		}
	}
	group := aba["fields"].([]any)[1].(map[string]any)
	if group["name"] != "ACH routing number" {
		t.Errorf("group name = %v", group["name"])
	}
	field := group["group"].([]any)[0].(map[string]any)
	want := map[string]any{"key": "abartn", "name": "ACH routing number", "type": "text", "required": true,
		"refreshRequirementsOnChange": false, "example": "026009593", "minLength": 9.0, "maxLength": 9.0, "validationRegexp": "^[0-9]{9}$"}
	if !reflect.DeepEqual(field, want) {
		t.Errorf("abartn field = %v\nwant %v", field, want)
	}
	legal := aba["fields"].([]any)[0].(map[string]any)["group"].([]any)[0].(map[string]any)
	if _, ok := legal["minLength"]; ok {
		t.Error("unset minLength is serialized")
	}
	if !reflect.DeepEqual(legal["valuesAllowed"], []any{map[string]any{"key": "PRIVATE", "name": "Person"}, map[string]any{"key": "BUSINESS", "name": "Business"}}) {
		t.Errorf("legalType valuesAllowed = %v", legal["valuesAllowed"])
	}
}

// allViews returns every descriptor of every currency as a PRIVATE and as a BUSINESS
// recipient in the US, so that every conditional field shows.
func allViews(t *testing.T, c *Catalog) map[string]AccountType {
	t.Helper()
	views := map[string]AccountType{}
	for _, cur := range c.Currencies() {
		ats, err := c.Requirements(cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range ats {
			for _, lt := range []string{"PRIVATE", "BUSINESS"} {
				refreshed, err := c.Refresh(cur, at.Type, map[string]any{"legalType": lt, "address": map[string]any{"country": "US"}})
				if err != nil {
					t.Fatal(err)
				}
				views[cur+"/"+at.Type+"/"+lt] = typeOf(t, refreshed, at.Type)
			}
		}
	}
	return views
}

func TestEveryTypeIsWellFormed(t *testing.T) {
	c := Default()
	for name, at := range allViews(t, c) {
		if at.Title == "" || len(at.Fields) == 0 {
			t.Errorf("%s: empty title or fields", name)
		}
		first := at.Fields[0].Group[0]
		if first.Key != "legalType" || first.Type != "select" || !first.Required || !first.RefreshRequirementsOnChange ||
			!reflect.DeepEqual(first.ValuesAllowed, []Value{{"PRIVATE", "Person"}, {"BUSINESS", "Business"}}) {
			t.Errorf("%s: first field is not the spec's legalType: %+v", name, first)
		}
		seen := map[string]bool{}
		for _, g := range at.Fields {
			if g.Name == "" || len(g.Group) == 0 {
				t.Errorf("%s: group without name or fields", name)
			}
			for _, f := range g.Group {
				if seen[f.Key] {
					t.Errorf("%s: key %s twice", name, f.Key)
				}
				seen[f.Key] = true
				if (f.Type == "text") == (len(f.ValuesAllowed) > 0) {
					t.Errorf("%s %s: type %s with %d values", name, f.Key, f.Type, len(f.ValuesAllowed))
				}
				if f.ValidationRegexp == "" {
					continue
				}
				// RE2 as written, anchored, and free of flags JavaScript lacks, so a
				// browser applies the same rule.
				if _, err := regexp.Compile(f.ValidationRegexp); err != nil {
					t.Errorf("%s %s: validationRegexp %q is not RE2: %v", name, f.Key, f.ValidationRegexp, err)
				}
				if !strings.HasPrefix(f.ValidationRegexp, "^") || !strings.HasSuffix(f.ValidationRegexp, "$") || strings.Contains(f.ValidationRegexp, "(?") {
					t.Errorf("%s %s: validationRegexp %q is not anchored or uses inline flags", name, f.Key, f.ValidationRegexp)
				}
			}
		}
	}
}

// exampleDetails fills a descriptor with its examples (selects take their first value).
func exampleDetails(at AccountType, legalType string) map[string]any {
	d := map[string]any{}
	for _, g := range at.Fields {
		for _, f := range g.Group {
			v := f.Example
			if v == "" && len(f.ValuesAllowed) > 0 {
				v = f.ValuesAllowed[0].Key
			}
			if f.Key == "legalType" {
				v = legalType
			}
			if obj, member, nested := strings.Cut(f.Key, "."); nested {
				m, _ := d[obj].(map[string]any)
				if m == nil {
					m = map[string]any{}
					d[obj] = m
				}
				m[member] = v
			} else {
				d[f.Key] = v
			}
		}
	}
	return d
}

// TestExamplesValidate: every field's example passes its own rules, in details made of
// the examples of all fields of the type (so cross-field rules see them too).
func TestExamplesValidate(t *testing.T) {
	c := Default()
	for name, at := range allViews(t, c) {
		parts := strings.Split(name, "/")
		for _, g := range at.Fields {
			for _, f := range g.Group {
				if f.Type == "text" && f.Example == "" {
					t.Errorf("%s %s: text field without example", name, f.Key)
				}
			}
		}
		if _, err := c.Validate(parts[0], parts[1], exampleDetails(at, parts[2])); err != nil {
			t.Errorf("%s: examples do not validate: %v", name, err)
		}
	}
}

func TestRefresh(t *testing.T) {
	c := Default()
	keysOf := func(cur, typ string, details map[string]any) map[string]Field {
		t.Helper()
		ats, err := c.Refresh(cur, typ, details)
		if err != nil {
			t.Fatalf("Refresh(%s, %s, %v): %v", cur, typ, details, err)
		}
		return fieldsByKey(typeOf(t, ats, typ))
	}
	// spec 2.1.1: iban, sort_code and philippines take an optional address for either legal
	// type; the other types ask a business for its address
	base, _ := c.Requirements("GBP")
	for _, lt := range []string{"PRIVATE", "BUSINESS"} {
		for _, cur := range []struct{ cur, typ string }{{"GBP", "sort_code"}, {"EUR", "iban"}, {"PHP", "philippines"}} {
			fields := keysOf(cur.cur, cur.typ, map[string]any{"legalType": lt, "address": map[string]any{"country": "US"}})
			for _, k := range []string{"address.country", "address.city", "address.firstLine", "address.postCode", "address.state"} {
				if f, ok := fields[k]; !ok || f.Required {
					t.Errorf("%s %s %s: %s listed %t, required %t; want listed and optional", cur.cur, cur.typ, lt, k, ok, f.Required)
				}
			}
		}
	}
	if _, ok := fieldsByKey(typeOf(t, base, "sort_code"))["address.country"]; !ok {
		t.Error("GBP sort_code lists no optional address for a PRIVATE recipient")
	}
	ars, _ := c.Requirements("ARS")
	if _, ok := fieldsByKey(typeOf(t, ars, "argentina"))["address.country"]; ok {
		t.Error("ARS argentina lists an address for a PRIVATE recipient")
	}
	biz := keysOf("ARS", "argentina", map[string]any{"legalType": "BUSINESS"})
	for _, k := range []string{"address.country", "address.city", "address.firstLine", "address.postCode", "address.state"} {
		if _, ok := biz[k]; !ok {
			t.Errorf("ARS argentina BUSINESS lacks %s", k)
		}
	}
	if !biz["address.country"].Required || biz["address.state"].Required {
		t.Error("BUSINESS address: want country required, state optional outside the US")
	}
	if us := keysOf("USD", "aba", map[string]any{"legalType": "PRIVATE", "address": map[string]any{"country": "US"}}); !us["address.state"].Required {
		t.Error("USD aba with a US address: state not required")
	}
	if de := keysOf("USD", "aba", map[string]any{"address": map[string]any{"country": "DE"}}); de["address.state"].Required {
		t.Error("USD aba with a German address: state required")
	}
	br := keysOf("BRL", "brazil", map[string]any{"legalType": "BUSINESS"})
	if _, ok := br["cnpj"]; !ok {
		t.Error("BRL BUSINESS lacks cnpj")
	}
	if _, ok := br["cpf"]; ok {
		t.Error("BRL BUSINESS still asks for a CPF")
	}
	if _, ok := keysOf("AUD", "australian", map[string]any{"legalType": "BUSINESS"})["businessNumber"]; !ok {
		t.Error("AUD BUSINESS lacks businessNumber")
	}
	// Values of the wrong JSON type do not break a refresh; Validate reports them.
	keysOf("EUR", "iban", map[string]any{"legalType": 7, "iban": []any{1}, "address": "x"})
	keysOf("EUR", "iban", nil)

	// The conformance suite's refresh requests (4.3).
	for _, tc := range []struct {
		cur, typ string
		details  map[string]any
	}{
		{"GBP", "sort_code", map[string]any{"legalType": "BUSINESS"}},
		{"GBP", "sort_code", map[string]any{"legalType": "PRIVATE", "sortCode": "040075"}},
		{"EUR", "iban", map[string]any{"legalType": "BUSINESS"}},
		{"USD", "aba", map[string]any{"legalType": "PRIVATE", "address": map[string]any{"country": "US"}}},
	} {
		keysOf(tc.cur, tc.typ, tc.details)
	}

	// Refresh answers for all types of the currency, the others unchanged.
	ats, _ := c.Refresh("USD", "aba", map[string]any{"legalType": "BUSINESS"})
	base, _ = c.Requirements("USD")
	if len(ats) != len(base) || !reflect.DeepEqual(ats[1], base[1]) {
		t.Error("Refresh changed the other types")
	}

	for _, tc := range []struct{ cur, typ, want string }{
		{"EUR", "sort_code", `type: "sort_code" is not an account type of EUR; use one of iban`},
		{"EUR", "", "type: required"},
		{"EUR", EmailRecipientType, "type: email_recipient has no account requirements"},
		{"GBP", EmailRecipientType, "type: email_recipient is only available for EUR"},
		{"BGN", "iban", "currency: BGN is not supported; use EUR for Bulgaria"},
	} {
		_, err := c.Refresh(tc.cur, tc.typ, map[string]any{})
		if err == nil || apierror.CodeOf(err) != apierror.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Refresh(%s, %q) = %v, want a 400 containing %q", tc.cur, tc.typ, err, tc.want)
		}
	}
}

func TestCurrencyErrors(t *testing.T) {
	c := Default()
	cases := []struct{ currency, want string }{
		{"", "currency: required"},
		{"BGN", "currency: BGN is not supported; use EUR for Bulgaria"},
		{"eur", `currency: "eur" is not a supported currency: codes are upper-case ISO 4217 (did you mean EUR?)`},
		{"bgn", "did you mean BGN?"},
		{"XYZ", `currency: "XYZ" is not a supported payout currency; supported: AED, ALL`},
		{"EURO", `"EURO" is not a supported payout currency`},
		{"ıls", `"ıls" is not a supported payout currency`}, // no hint through Unicode case mapping
	}
	for _, tc := range cases {
		errs := map[string]error{}
		_, errs["Requirements"] = c.Requirements(tc.currency)
		_, errs["Refresh"] = c.Refresh(tc.currency, "iban", nil)
		_, errs["Validate"] = c.Validate(tc.currency, "iban", map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"})
		for fn, err := range errs {
			var ae *apierror.Error
			if err == nil || !asAPIError(err, &ae) || ae.Code != apierror.Invalid || ae.Field != "currency" || !strings.Contains(ae.Message, tc.want) {
				t.Errorf("%s(%q) = %v, want a 400 on currency containing %q", fn, tc.currency, err, tc.want)
			}
		}
	}
}

func asAPIError(err error, target **apierror.Error) bool {
	e, ok := err.(*apierror.Error)
	*target = e
	return ok
}

// copyData writes the embedded data to a temporary directory.
func copyData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(embedded, "data", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(path, "data"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := embedded.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadDir(t *testing.T) {
	dir := copyData(t)
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, cur := range Default().Currencies() {
		got, _ := c.Requirements(cur)
		want, _ := Default().Requirements(cur)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LoadDir of the embedded data differs from Default", cur)
		}
	}

	// A newer directory can change the policy: a currency dropped from catalog.json.
	edit(t, dir, catalogFile, `"BGN": "BGN is not supported; use EUR for Bulgaria"`, `"BGN": "BGN is not supported; use EUR for Bulgaria", "XAU": "gold is not paid out"`)
	c, err = LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Requirements("XAU"); err == nil || !strings.Contains(err.Error(), "gold is not paid out") {
		t.Errorf("reloaded catalog ignores the new unsupported entry: %v", err)
	}
}

func edit(t *testing.T, dir, name, old, new string) {
	t.Helper()
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q", name, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDirRefusesBrokenData(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"bad regexp", catalogFile, `"^[0-9]{9}$"`, `"^([0-9]{9}$"`, "validationRegexp"},
		{"misspelt key", catalogFile, `"requiredWhen": {`, `"requiredWhem": {`, `unknown field "requiredWhem"`},
		{"unknown check", catalogFile, `"check": "aba"`, `"check": "abba"`, `unknown check "abba"`},
		{"unknown bank list", catalogFile, `"banks/philippines.csv"`, `"banks/nowhere.csv"`, "nowhere.csv"},
		{"lower-case currency", catalogFile, `"AED": [`, `"aed": [`, `currency "aed"`},
		{"unknown type", catalogFile, `"type": "philippines"`, `"type": "filipino"`, "no such type"},
		{"select without values", catalogFile, `"valuesFrom": "banks/philippines.csv"`, `"valuesFrom": ""`, "need valuesAllowed"},
		{"condition on a field without refresh", catalogFile, `"requiredWhen": {`, `"requiredWhen": {"accountType": ["X"], `, "condition on accountType"},
		{"unknown IBAN country", catalogFile, `"ibanCountries": [
     "AE"`, `"ibanCountries": [
     "ZZ"`, "IBAN country ZZ"},
		{"registry example failing its row", ibanRegistryFile, "DE89370400440532013000", "DE88370400440532013000", "example DE88370400440532013000"},
		{"bad valacdos row", ukValacdosFile, "040003 040003 DBLAL", "040003 040003 MOD12", `unknown method "MOD12"`},
		{"bad NZ branch range", nzBanksFile, " 0001 branch=", " 00x1 branch=", "bad branch range"},
		{"bad IFSC bank code", ifscBanksFile, "ABHY,", "ABHYX,", "not 4 characters"},
		{"bad CLABE bank code", mxBanksFile, `"code": "002"`, `"code": "02"`, "not 3 digits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyData(t)
			edit(t, dir, tc.file, tc.old, tc.new)
			if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadDir = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		dir := copyData(t)
		if err := os.Remove(filepath.Join(dir, ukScsubtabFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDir(dir); err == nil {
			t.Error("LoadDir without uk-scsubtab.txt succeeded")
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		dir := copyData(t)
		if _, err := LoadDir(filepath.Join(dir, catalogFile)); err == nil {
			t.Error("LoadDir of a file succeeded")
		}
		if _, err := LoadDir(filepath.Join(dir, "absent")); err == nil {
			t.Error("LoadDir of a missing directory succeeded")
		}
	})
}
