package bankaccount

import (
	"bytes"
	"embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
)

// The embedded reference data; data/README.md gives each file's source and license.
// Regenerate the derived and copied files with:
//
//go:generate go run ./gen -out data
//go:embed data
var embedded embed.FS

// The files of a data directory. LoadDir expects the same names.
const (
	catalogFile      = "catalog.json"
	ibanRegistryFile = "iban-registry.csv"
	ukValacdosFile   = "uk-valacdos.txt"
	ukScsubtabFile   = "uk-scsubtab.txt"
	mxBanksFile      = "mx-banks.json"
	nzBanksFile      = "nz-banks.dat"
	ifscBanksFile    = "in-ifsc-banks.csv"
)

// catalogSpec is data/catalog.json: the policy of which account types each currency
// pays out to. Its field entries are spec 2.2 fields plus package-only keys.
type catalogSpec struct {
	About string `json:"about"`
	// Unsupported maps a currency code to the text of its 400 (e.g. BGN).
	Unsupported map[string]string `json:"unsupported"`
	// Fragments are field groups shared by several types, referenced with "use".
	Fragments map[string][]groupSpec `json:"fragments"`
	Types     map[string]typeSpec    `json:"types"`
	// Currencies lists, per ISO 4217 code, the account types it pays out to.
	Currencies map[string][]offerSpec `json:"currencies"`
}

type typeSpec struct {
	Title  string      `json:"title"`
	Fields []groupSpec `json:"fields"`
	// Checks name rules spanning several fields (see crossChecks).
	Checks []string `json:"checks"`
}

// groupSpec is a field group, or a reference to a fragment when Use is set.
type groupSpec struct {
	Use  string `json:"use"`
	Name string `json:"name"`
	// When limits the group to details whose fields hold one of the listed values,
	// e.g. {"legalType": ["BUSINESS"]}.
	When  map[string][]string `json:"when"`
	Group []fieldSpec         `json:"group"`
}

type fieldSpec struct {
	Field
	// ValuesFrom fills valuesAllowed from a key,name CSV file of the data directory,
	// or from ISO 3166-1 when it is "iso3166".
	ValuesFrom string `json:"valuesFrom"`
	// Check names a rule beyond length and pattern (see fieldChecks).
	Check string `json:"check"`
	// RequiredWhen makes the field required only for the listed values of other fields.
	RequiredWhen map[string][]string `json:"requiredWhen"`
}

// offerSpec is one account type of one currency.
type offerSpec struct {
	Type string `json:"type"`
	// Country is the ISO 3166-1 alpha-2 country the account type implies, if any.
	Country string `json:"country"`
	// IBANCountries are the IBAN country codes accepted by an iban type; the first one's
	// registry example becomes the field's example.
	IBANCountries []string `json:"ibanCountries"`
	// Note says why the currency has this type, where that is not obvious.
	Note string `json:"note"`
}

func readCatalogSpec(fsys fs.FS) (*catalogSpec, error) {
	b, err := fs.ReadFile(fsys, catalogFile)
	if err != nil {
		return nil, err
	}
	// A misspelt key ("requiredWhem") would otherwise drop a rule without a word.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var spec catalogSpec
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%s: %w", catalogFile, err)
	}
	return &spec, nil
}

// readValueList reads a key,name CSV file (with a header row) as select values.
func readValueList(fsys fs.FS, name string) ([]Value, error) {
	rows, err := readCSV(fsys, name)
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 || len(rows[0]) != 2 || rows[0][0] != "key" || rows[0][1] != "name" {
		return nil, fmt.Errorf("%s: want a key,name header and at least one row", name)
	}
	seen := map[string]bool{}
	vals := make([]Value, 0, len(rows)-1)
	for i, r := range rows[1:] {
		if r[0] == "" || seen[r[0]] {
			return nil, fmt.Errorf("%s: row %d: empty or repeated key %q", name, i+2, r[0])
		}
		seen[r[0]] = true
		vals = append(vals, Value{Key: r[0], Name: r[1]})
	}
	return vals, nil
}

func readCSV(fsys fs.FS, name string) ([][]string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}
