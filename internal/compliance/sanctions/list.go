package sanctions

import (
	"slices"
	"strings"
	"time"
)

// List is one parsed SDN release with its name index. It is never modified after Parse
// returns, so any number of goroutines may screen against it while a Screener swaps in a new
// one.
type List struct {
	entries []entry
	// byName maps a normalized name to every entry that bears it; several entries share names
	// (common personal names, vessels renamed after owners), and each is judged on its own.
	byName map[string][]nameRef
	source string
	// published is the release's publish date (Publish_Date of its sdn.xml); zero when the
	// release came without one, which no age limit accepts.
	published time.Time
	// unmapped lists add.csv country names missing from the country mapping file.
	unmapped []string
}

type entry struct {
	entNum  int
	sdnType string // "individual", "vessel", "aircraft"; "" for an entity
	program string
	// names[0] is SDN_Name, the rest are the aliases of alt.csv, all as published.
	names []string
	// countries holds the distinct alpha-2 codes of the entry's addresses.
	countries []string
	// unknownCountry is set when some address has a country that has no alpha-2 code, or has a
	// street or locality but no country: the entry may be located anywhere, so a recipient
	// country outside countries does not clear it.
	unknownCountry bool
	addresses      []address
}

// address holds the normalized tokens of one add.csv row that has a street or a locality.
type address struct {
	street   []string
	locality []string // the City/State/Province/Postal Code field
	// hasPostal tells whether the locality can hold a postal code at all (some token has a
	// digit); without one, a recipient's postal code has nothing to be compared with.
	hasPostal bool
}

type nameRef struct {
	entry int32 // index into List.entries
	name  int32 // index into entry.names
}

// Len returns the number of SDN entries.
func (l *List) Len() int { return len(l.entries) }

// Source describes where the list was loaded from and which data it is (entry count and
// SHA-256 prefixes of the files), for start-up logs and the audit trail of a refusal.
func (l *List) Source() string { return l.source }

// Published returns the release's publish date, or the zero time when it is not known.
func (l *List) Published() time.Time { return l.published }

// UnmappedCountries returns the add.csv country names that the country mapping file does not
// list (blank codes in the file are deliberate and not reported). A newer release can bring new
// names; they are screened as unknown countries, and the operator should extend the mapping.
func (l *List) UnmappedCountries() []string { return slices.Clone(l.unmapped) }

// buildIndex fills byName from the entries' names.
func (l *List) buildIndex() {
	l.byName = make(map[string][]nameRef, 2*len(l.entries))
	for ei := range l.entries {
		e := &l.entries[ei]
		for ni, name := range e.names {
			ref := nameRef{entry: int32(ei), name: int32(ni)}
			l.add(normalize(name), ref)
			if e.sdnType == "individual" {
				if nat := naturalOrder(name); nat != "" {
					l.add(normalize(nat), ref)
				}
			}
		}
	}
}

// add indexes ref under key once per entry: an alias that normalizes like the primary name
// adds nothing, and keeping the first name that matched makes Match.MatchedName stable.
func (l *List) add(key string, ref nameRef) {
	if key == "" {
		return
	}
	refs := l.byName[key]
	for _, r := range refs {
		if r.entry == ref.entry {
			return
		}
	}
	l.byName[key] = append(refs, ref)
}

// suffixes are generational suffixes that OFAC writes after the given names ("DELOS REYES,
// Feliciano Semborio, Jr.") or between surname and given names ("MNANGAGWA, JR., Emmerson
// Dambudzo"); in natural order they go last, as they are written on forms.
var suffixes = map[string]bool{"jr": true, "sr": true, "ii": true, "iii": true, "iv": true}

// naturalOrder turns an individual's "LAST, First" into "First LAST", or returns "" when the
// name has no comma (a single name or an alias written in natural order already).
func naturalOrder(name string) string {
	parts := strings.Split(name, ",")
	if len(parts) < 2 {
		return ""
	}
	var given, suffix []string
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
		case suffixes[normalize(p)]:
			suffix = append(suffix, p)
		default:
			given = append(given, p)
		}
	}
	if len(given) == 0 {
		return ""
	}
	out := append(given, strings.TrimSpace(parts[0]))
	return strings.Join(append(out, suffix...), " ")
}

// merge returns one list screening against the entries of both: the SDN list and the
// consolidated non-SDN list are separate releases (their ent_num values are not promised to be
// disjoint), each parsed on its own, so the index is rebuilt over the concatenation.
func merge(a, b *List) *List {
	l := &List{
		entries:   append(slices.Clip(a.entries), b.entries...),
		source:    a.source + "; " + b.source,
		published: a.published,
		unmapped:  slices.Compact(slices.Sorted(slices.Values(append(slices.Clip(a.unmapped), b.unmapped...)))),
	}
	l.buildIndex()
	return l
}
