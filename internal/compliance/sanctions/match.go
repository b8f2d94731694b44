package sanctions

import (
	"slices"
	"strings"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// Subject is the recipient as screened: the holder name and, when the recipient has
// details.address, its country and address.
type Subject struct {
	Name    string
	Country string   // ISO 3166-1 alpha-2, or "" when the recipient has none
	Address *Address // nil when the recipient has no address
}

// Address is a recipient's details.address without the country. State is carried for
// completeness but is not a screening signal.
type Address struct {
	Street, City, PostCode, State string
}

// Signal names as they appear in Match.Signals.
const (
	SignalName    = "name"
	SignalCountry = "country"
	SignalAddress = "address"
)

// Match describes the SDN entry that a refused recipient matched, for logs and the audit trail.
// It is not meant for the API caller (see APIError).
type Match struct {
	EntNum      int
	Name        string // SDN_Name as published
	MatchedName string // the published name or alias that the holder name equals
	Type        string // "individual", "vessel", "aircraft", or "" for an entity
	Program     string // e.g. "SDGT" or "SDGT, IFSR"
	// Signals lists the signals that were compared and matched, "name" first. A signal that is
	// missing fell back to name-only because the recipient or the entry lacks it.
	Signals []string
	Source  string // List.Source of the list that matched
}

// APIError is the 403 for a refused recipient. It names neither the entry nor the signals:
// telling a caller which detail tripped the screening would tell them what to change.
func (m *Match) APIError() *apierror.Error {
	return apierror.Errorf(apierror.Forbidden, "recipient refused by sanctions screening")
}

// verdict is the outcome of one signal against one entry.
type verdict int8

const (
	unavailable verdict = iota // one side lacks the signal: fall back to name-only
	matched
	mismatched
)

// Screen returns the first entry (in list order) whose name equals the subject's and whose
// other signals either match or are unavailable, or nil when the subject is clear. The rules
// are in the package documentation.
func (l *List) Screen(s Subject) *Match {
	refs := l.byName[normalize(s.Name)]
	if len(refs) == 0 {
		return nil
	}
	country := subjectCountry(s.Country)
	addr := newSubjectAddress(s.Address)
	for _, ref := range refs {
		e := &l.entries[ref.entry]
		cv, av := e.countryVerdict(country), e.addressVerdict(addr)
		if cv == mismatched || av == mismatched {
			continue
		}
		m := &Match{
			EntNum:      e.entNum,
			Name:        e.names[0],
			MatchedName: e.names[ref.name],
			Type:        e.sdnType,
			Program:     e.program,
			Signals:     []string{SignalName},
			Source:      l.source,
		}
		if cv == matched {
			m.Signals = append(m.Signals, SignalCountry)
		}
		if av == matched {
			m.Signals = append(m.Signals, SignalAddress)
		}
		return m
	}
	return nil
}

// subjectCountry returns the recipient's country as an upper-case alpha-2 code, or "" when it
// is not one. The facade rejects such codes before screening (spec 4.5 rule 2); should one slip
// through, "" makes it name-only, because a code that matches no country would clear every
// listed entry that has a country.
func subjectCountry(c string) string {
	c = strings.ToUpper(strings.TrimSpace(c))
	if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
		return ""
	}
	return c
}

func (e *entry) countryVerdict(country string) verdict {
	switch {
	case country == "":
		return unavailable
	case slices.Contains(e.countries, country):
		return matched
	case len(e.countries) == 0 || e.unknownCountry:
		// No country on record, or some address in an unknown country, which may be the
		// recipient's: the country cannot clear the recipient.
		return unavailable
	default:
		return mismatched
	}
}

// subjectAddress is a recipient address in token form; postal is the normalized postal code
// without spaces ("W8 4SG" → "w84sg"), because postal codes are written with and without
// separators.
type subjectAddress struct {
	street, city []string
	postal       string
}

// newSubjectAddress returns nil when the address has nothing comparable, so that an empty
// address object is treated like an absent one.
func newSubjectAddress(a *Address) *subjectAddress {
	if a == nil {
		return nil
	}
	sa := &subjectAddress{
		street: tokens(a.Street),
		city:   tokens(a.City),
		postal: strings.ReplaceAll(normalize(a.PostCode), " ", ""),
	}
	if len(sa.street) == 0 && len(sa.city) == 0 && sa.postal == "" {
		return nil
	}
	return sa
}

func (e *entry) addressVerdict(sa *subjectAddress) verdict {
	if sa == nil {
		return unavailable
	}
	v := unavailable
	for i := range e.addresses {
		switch e.addresses[i].compare(sa) {
		case matched:
			return matched
		case mismatched:
			v = mismatched
		}
	}
	return v
}

// compare applies the per-row rule of the package documentation: every component that both
// sides have must agree; a row with no component in common with the subject is unavailable.
func (a *address) compare(sa *subjectAddress) verdict {
	compared := false
	if len(sa.street) > 0 && len(a.street) > 0 {
		if !overlaps(sa.street, a.street) {
			return mismatched
		}
		compared = true
	}
	if len(sa.city) > 0 && len(a.locality) > 0 {
		if !overlaps(sa.city, a.locality) {
			return mismatched
		}
		compared = true
	}
	if sa.postal != "" && a.hasPostal {
		if !containsJoinedRun(a.locality, sa.postal) {
			return mismatched
		}
		compared = true
	}
	if !compared {
		return unavailable
	}
	return matched
}

// overlaps reports whether the two token lists share a token. Both are a handful of words, so
// a nested loop beats building a set.
func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// containsJoinedRun reports whether some run of consecutive tokens, joined without spaces,
// equals want: "Zurich CH-8022" has the runs "zurich", "ch", "8022", "zurichch", "ch8022", …
func containsJoinedRun(toks []string, want string) bool {
	for i := range toks {
		rest := want
		for j := i; j < len(toks); j++ {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, toks[j]); !ok {
				break
			}
			if rest == "" {
				return true
			}
		}
	}
	return false
}
