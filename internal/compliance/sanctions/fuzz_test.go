package sanctions

import (
	"testing"
	"unicode/utf8"
)

// FuzzScreen checks that screening never panics and that its invariants hold for any input:
// normalize is idempotent and its ASCII fast path agrees with the Unicode path; a match is an
// entry that bears the normalized name; and dropping the country or address never lifts a
// refusal.
func FuzzScreen(f *testing.F) {
	l := embedded(f)
	f.Add("Mounir El Motassadeq", "DE", "Goschenstasse 13", "Hamburg", "21073", true)
	f.Add("MOUNİR el motassadéq", "de", "", "Hamburg", "", true)
	f.Add("Banco Nacional de Cuba", "", "", "", "", false)
	f.Add("SAF TECH S.L.", "ES", "Calle Serrano 52", "Barcelona", "08031", true)
	f.Add("Ｂａｎｃｏ\u200b Nacional", "\xff", "\u0130\u0307", "ǅ", "CH-8022", true)
	f.Add("", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, name, country, street, city, postCode string, hasAddr bool) {
		n := normalize(name)
		if normalize(n) != n {
			t.Fatalf("normalize not idempotent: %q → %q → %q", name, n, normalize(n))
		}
		if !utf8.ValidString(n) {
			t.Fatalf("normalize(%q) = %q is not valid UTF-8", name, n)
		}
		if isASCII(name) && normalizeASCII(name) != normalizeUnicode(name) {
			t.Fatalf("%q: ascii path %q, unicode path %q", name, normalizeASCII(name), normalizeUnicode(name))
		}
		s := Subject{Name: name, Country: country}
		if hasAddr {
			s.Address = &Address{Street: street, City: city, PostCode: postCode}
		}
		m := l.Screen(s)
		if m == nil {
			return
		}
		found := false
		for _, r := range l.byName[n] {
			found = found || l.entries[r.entry].entNum == m.EntNum
		}
		if !found || len(m.Signals) == 0 || m.Signals[0] != SignalName {
			t.Fatalf("Screen(%+v) = %+v: not an entry indexed under %q", s, m, n)
		}
		if l.Screen(Subject{Name: name}) == nil {
			t.Fatalf("Screen(%+v) matches but the name alone does not", s)
		}
	})
}
