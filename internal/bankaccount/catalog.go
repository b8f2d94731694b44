package bankaccount

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Catalog holds the account types of every supported payout currency and the reference
// tables their checks use. It is immutable after loading and safe for concurrent use.
type Catalog struct {
	currencies  []string
	offers      map[string][]*offer // by currency, in catalog order
	unsupported map[string]string

	iban      map[string]*ibanFormat // by IBAN country code
	uk        *ukModulusTable
	mxBanks   map[string]string // CLABE bank code -> name
	nz        *nzRegister
	ifscBanks map[string]bool // 4-letter IFSC bank codes
	countries map[string]string
}

// offer is one account type as offered for one currency, with its fields compiled.
type offer struct {
	currency      string
	typ           string
	title         string
	groups        []*group
	crossChecks   []crossCheck
	country       string
	ibanCountries []string
	fields        map[string]*field // every key the type can have, by key
	objects       map[string]bool   // keys holding a nested object ("address")
	base          AccountType       // the descriptor for details gathered so far = none
}

type group struct {
	name   string
	when   []condition
	fields []*field
}

type field struct {
	Field
	group        *group
	requiredWhen []condition
	re           *regexp.Regexp
	check        fieldCheck
	allowed      map[string]bool
}

// condition holds when the field key has one of values.
type condition struct {
	key    string
	values []string
}

var (
	defaultOnce    sync.Once
	defaultCatalog *Catalog
)

// Default returns the catalog built from the embedded data, parsed once. It panics when
// that data is inconsistent: a build defect that the package's tests catch.
func Default() *Catalog {
	defaultOnce.Do(func() {
		sub, err := fs.Sub(embedded, "data")
		if err == nil {
			defaultCatalog, err = load(sub)
		}
		if err != nil {
			panic("bankaccount: embedded data: " + err.Error())
		}
	})
	return defaultCatalog
}

// LoadDir builds a catalog from a data directory with the layout of the embedded one
// (data/README.md), e.g. to run with newer reference data without a rebuild.
func LoadDir(dir string) (*Catalog, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("bankaccount: %s is not a directory", dir)
	}
	c, err := load(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("bankaccount: %s: %w", dir, err)
	}
	return c, nil
}

func load(fsys fs.FS) (*Catalog, error) {
	spec, err := readCatalogSpec(fsys)
	if err != nil {
		return nil, err
	}
	c := &Catalog{offers: map[string][]*offer{}, unsupported: spec.Unsupported, countries: iso3166Names()}
	if c.iban, err = readIBANRegistry(fsys); err != nil {
		return nil, err
	}
	if c.uk, err = readUKModulusTable(fsys); err != nil {
		return nil, err
	}
	if c.mxBanks, err = readMXBanks(fsys); err != nil {
		return nil, err
	}
	if c.nz, err = readNZRegister(fsys); err != nil {
		return nil, err
	}
	if c.ifscBanks, err = readIFSCBanks(fsys); err != nil {
		return nil, err
	}
	for cur := range spec.Unsupported {
		if !isCurrencyCode(cur) {
			return nil, fmt.Errorf("unsupported currency %q is not an upper-case ISO 4217 code", cur)
		}
	}
	lists := map[string][]Value{"iso3166": countryValues(c.countries)}
	for cur, offers := range spec.Currencies {
		if !isCurrencyCode(cur) {
			return nil, fmt.Errorf("currency %q is not an upper-case ISO 4217 code", cur)
		}
		if _, clash := spec.Unsupported[cur]; clash {
			return nil, fmt.Errorf("currency %s is both supported and unsupported", cur)
		}
		if len(offers) == 0 {
			return nil, fmt.Errorf("currency %s has no account type", cur)
		}
		for _, sp := range offers {
			o, err := c.buildOffer(fsys, spec, cur, sp, lists)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", cur, sp.Type, err)
			}
			if slices.ContainsFunc(c.offers[cur], func(p *offer) bool { return p.typ == o.typ }) {
				return nil, fmt.Errorf("%s lists type %s twice", cur, o.typ)
			}
			c.offers[cur] = append(c.offers[cur], o)
		}
		c.currencies = append(c.currencies, cur)
	}
	sort.Strings(c.currencies)
	return c, nil
}

func (c *Catalog) buildOffer(fsys fs.FS, spec *catalogSpec, cur string, sp offerSpec, lists map[string][]Value) (*offer, error) {
	ts, ok := spec.Types[sp.Type]
	if !ok {
		return nil, fmt.Errorf("no such type in %s", catalogFile)
	}
	if sp.Type == EmailRecipientType {
		return nil, fmt.Errorf("%s is built in, not a catalog type", EmailRecipientType)
	}
	o := &offer{currency: cur, typ: sp.Type, title: ts.Title, country: sp.Country, ibanCountries: sp.IBANCountries,
		fields: map[string]*field{}, objects: map[string]bool{}}
	if o.country != "" && c.countries[o.country] == "" {
		return nil, fmt.Errorf("country %q is not ISO 3166-1 alpha-2", o.country)
	}
	for _, cc := range o.ibanCountries {
		if c.iban[cc] == nil {
			return nil, fmt.Errorf("IBAN country %s is not in %s", cc, ibanRegistryFile)
		}
	}
	for _, gs := range expandFragments(ts.Fields, spec.Fragments) {
		if gs.Use != "" {
			return nil, fmt.Errorf("unknown fragment %q", gs.Use)
		}
		g := &group{name: gs.Name, when: conditions(gs.When)}
		for _, fs0 := range gs.Group {
			f, err := buildField(fsys, fs0, lists)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", fs0.Key, err)
			}
			if o.fields[f.Key] != nil {
				return nil, fmt.Errorf("field %s listed twice", f.Key)
			}
			f.group = g
			o.fields[f.Key] = f
			if obj, _, nested := strings.Cut(f.Key, "."); nested {
				o.objects[obj] = true
			}
			g.fields = append(g.fields, f)
		}
		if len(g.fields) == 0 {
			return nil, fmt.Errorf("group %q has no fields", g.name)
		}
		o.groups = append(o.groups, g)
	}
	for obj := range o.objects {
		if o.fields[obj] != nil {
			return nil, fmt.Errorf("%s is both a field and an object", obj)
		}
	}
	if lt := o.fields[legalTypeKey]; lt == nil || !lt.allowed["PRIVATE"] || !lt.allowed["BUSINESS"] || len(lt.allowed) != 2 {
		return nil, fmt.Errorf("every type needs the legalType select with PRIVATE and BUSINESS")
	}
	if err := o.checkConditions(); err != nil {
		return nil, err
	}
	for _, name := range ts.Checks {
		cc, ok := crossChecks[name]
		if !ok {
			return nil, fmt.Errorf("unknown check %q", name)
		}
		o.crossChecks = append(o.crossChecks, cc)
	}
	if f := o.fields["iban"]; f != nil && len(o.ibanCountries) > 0 {
		f.Example = c.iban[o.ibanCountries[0]].example
	}
	if _, hasIBAN := o.fields["iban"]; hasIBAN != (len(o.ibanCountries) > 0) {
		return nil, fmt.Errorf("ibanCountries must be given exactly when the type has an iban field")
	}
	o.base = o.descriptor(nil)
	return o, nil
}

func buildField(fsys fs.FS, fs0 fieldSpec, lists map[string][]Value) (*field, error) {
	f := &field{Field: fs0.Field, requiredWhen: conditions(fs0.RequiredWhen)}
	if f.Key == "" || f.Name == "" {
		return nil, fmt.Errorf("a field needs a key and a name")
	}
	if strings.Count(f.Key, ".") > 1 {
		return nil, fmt.Errorf("keys nest one level at most")
	}
	switch f.Type {
	case "text", "select", "radio":
	default:
		return nil, fmt.Errorf("type %q is not text, select or radio", f.Type)
	}
	if fs0.ValuesFrom != "" {
		vals, ok := lists[fs0.ValuesFrom]
		if !ok {
			var err error
			if vals, err = readValueList(fsys, fs0.ValuesFrom); err != nil {
				return nil, err
			}
			lists[fs0.ValuesFrom] = vals
		}
		f.ValuesAllowed = vals
	}
	if (f.Type != "text") != (len(f.ValuesAllowed) > 0) {
		return nil, fmt.Errorf("select and radio fields, and only they, need valuesAllowed")
	}
	if len(f.ValuesAllowed) > 0 {
		f.allowed = make(map[string]bool, len(f.ValuesAllowed))
		for _, v := range f.ValuesAllowed {
			f.allowed[v.Key] = true
		}
	}
	if f.ValidationRegexp != "" {
		// The pattern applies to the whole value, as the conformance suite and browsers
		// apply it, so anchoring it here keeps an unanchored pattern in the data honest.
		re, err := regexp.Compile(`^(?:` + f.ValidationRegexp + `)$`)
		if err != nil {
			return nil, fmt.Errorf("validationRegexp: %w", err)
		}
		f.re = re
	}
	if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
		return nil, fmt.Errorf("minLength %d > maxLength %d", *f.MinLength, *f.MaxLength)
	}
	if fs0.Check != "" {
		chk, ok := fieldChecks[fs0.Check]
		if !ok {
			return nil, fmt.Errorf("unknown check %q", fs0.Check)
		}
		f.check = chk
	}
	return f, nil
}

// expandFragments replaces each "use" entry by the fragment's groups, each taking the
// referring entry's condition.
func expandFragments(groups []groupSpec, fragments map[string][]groupSpec) []groupSpec {
	var out []groupSpec
	for _, g := range groups {
		frag, ok := fragments[g.Use]
		if g.Use == "" || !ok {
			out = append(out, g)
			continue
		}
		for _, fg := range frag {
			if g.When != nil {
				fg.When = g.When
			}
			out = append(out, fg)
		}
	}
	return out
}

func conditions(m map[string][]string) []condition {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]condition, 0, len(keys))
	for _, k := range keys {
		out = append(out, condition{key: k, values: m[k]})
	}
	return out
}

// checkConditions makes sure every condition refers to a field of the type that asks
// for a refresh when it changes; otherwise a form could never reach the conditional
// fields.
func (o *offer) checkConditions() error {
	for _, g := range o.groups {
		conds := slices.Clone(g.when)
		for _, f := range g.fields {
			conds = append(conds, f.requiredWhen...)
		}
		for _, cd := range conds {
			d := o.fields[cd.key]
			if d == nil || !d.RefreshRequirementsOnChange {
				return fmt.Errorf("condition on %s: not a field with refreshRequirementsOnChange", cd.key)
			}
			if len(cd.values) == 0 {
				return fmt.Errorf("condition on %s lists no values", cd.key)
			}
		}
	}
	return nil
}
