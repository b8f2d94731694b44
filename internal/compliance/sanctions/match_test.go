package sanctions

import (
	"slices"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

func embedded(t testing.TB) *List {
	t.Helper()
	l, err := Embedded()
	if err != nil {
		t.Fatalf("Embedded: %v", err)
	}
	return l
}

// Real SDN entries of the embedded release (see data/README.md):
//
//	7266  EL MOTASSADEQ, Mounir — Goschenstasse 13 / Hamburg 21073 / Germany
//	10602 SAF TECH S.L. — Calle Serrano 52 / Barcelona 08031 / Spain
//	40201 JADHAV, Deepak (aka JADHAV, Deepak Subhash) — 203 Topaz Sai Ram Manor, Apartment Yosufguda / Hyderabad 500045 / India
//	306   BANCO NACIONAL DE CUBA (aka NATIONAL BANK OF CUBA) — Zurich CH-8022 CH, Madrid E-28036 ES, Tokyo 103 JP, Panama City PA
//	11609 ASCOTEC JAPAN K.K. — 8th Floor, Shiba East Building, 2-3-9 Shiba, Minato-ku / Tokyo 105-0014 / Japan
//	33256 KAZEMI, Mohammad Reza (aka KAZEMI, Mohammad) — Turkey; 39656 KAZEMI, Mohammad — Tehran, Iran
//	18961 RESORT NIZHNYAYA OREANDA — Yalta addresses in Ukraine and in "Region: Crimea" (no ISO code)
var (
	motassadeqAddr = &Address{Street: "Goschenstasse 13", City: "Hamburg", PostCode: "21073"}
	safTechAddr    = &Address{Street: "Calle Serrano 52", City: "Barcelona", PostCode: "08031"}
	jadhavAddr     = &Address{Street: "203 Topaz Sai Ram Manor, Apartment Yosufguda", City: "Hyderabad", PostCode: "500045"}
	unrelatedAddr  = &Address{Street: "Hauptstrasse 1", City: "Berlin", PostCode: "10115"}
)

const (
	bnc = "Banco Nacional de Cuba"
	em  = "Mounir El Motassadeq"
)

var (
	nameOnly    = []string{SignalName}
	nameCountry = []string{SignalName, SignalCountry}
	nameAddress = []string{SignalName, SignalAddress}
	all         = []string{SignalName, SignalCountry, SignalAddress}
)

func TestScreen(t *testing.T) {
	l := embedded(t)
	tests := []struct {
		name    string
		subj    Subject
		want    int // ent_num, 0 = clear
		signals []string
	}{
		// All signals present.
		{"name, country and address match", Subject{em, "DE", motassadeqAddr}, 7266, all},
		{"OFAC's LAST, First order", Subject{"EL MOTASSADEQ, Mounir", "DE", motassadeqAddr}, 7266, all},
		{"same name, another country", Subject{em, "FR", motassadeqAddr}, 0, nil},
		{"same name and country, unrelated address", Subject{em, "DE", unrelatedAddr}, 0, nil},
		{"lower-case country code", Subject{em, "de", motassadeqAddr}, 7266, all},
		{"a code that is not alpha-2 is no country", Subject{em, "DEU", nil}, 7266, nameOnly},

		// Case and accents do not evade; other spellings are other names.
		{"accents, dotted capital I", Subject{"MOUNİR el motassadéq", "DE", motassadeqAddr}, 7266, all},
		{"hyphenated surname", Subject{"Mounir El-Motassadeq", "DE", nil}, 7266, nameCountry},
		{"dotless i passes for i", Subject{"MOUNıR EL MOTASSADEQ", "", nil}, 7266, nameOnly},

		// Look-alike letters of other scripts (issue 25 item 2): each name below is a listed
		// one with Latin letters swapped for letters that look the same.
		{"Cyrillic а, е, о, с", Subject{"Banсо Nаcional dе Cuba", "", nil}, 306, nameOnly},
		{"Cyrillic capitals", Subject{"ВАNCO NACIОNАL DE CUBА", "", nil}, 306, nameOnly},
		{"Cyrillic і, Е in an individual's name", Subject{"Mounіr Еl Motassadeq", "DE", motassadeqAddr}, 7266, all},
		{"Greek Α, Ο, Ι, Κ", Subject{"ΑSCΟTEC JAPAN Κ.Κ.", "JP", nil}, 11609, nameCountry},
		{"Armenian օ, ս", Subject{"Mօսnir El Mօtassadeq", "", nil}, 7266, nameOnly},
		{"Cherokee capitals", Subject{"ᏦᎪZEMI, Mohammad", "IR", nil}, 39656, nameCountry},
		{"fullwidth letters", Subject{"ＪＡＤＨＡＶ, Deepak", "IN", nil}, 40201, nameCountry},
		{"a name without look-alikes stays clear", Subject{"Иван Петров", "", nil}, 0, nil},
		{"run-together surname is another name", Subject{"Mounir Elmotassadeq", "", nil}, 0, nil},
		{"zero-width space does not evade", Subject{"Mou\u200Bnir El Motassadeq", "", nil}, 7266, nameOnly},

		// Missing signals fall back to name-only for that signal.
		{"no address: name and country", Subject{em, "DE", nil}, 7266, nameCountry},
		{"empty address object is no address", Subject{em, "DE", &Address{}}, 7266, nameCountry},
		{"no country, no address: name only", Subject{em, "", nil}, 7266, nameOnly},
		{"no country, matching address", Subject{em, "", motassadeqAddr}, 7266, nameAddress},
		{"no country, unrelated address", Subject{em, "", unrelatedAddr}, 0, nil},

		// The address rule, component by component.
		{"address without postal code", Subject{em, "DE", &Address{Street: "Goschenstasse 13", City: "Hamburg"}}, 7266, all},
		{"city only", Subject{em, "DE", &Address{City: "Hamburg"}}, 7266, all},
		{"street spelled otherwise, house number shared", Subject{em, "DE", &Address{Street: "Goschenstraße 13", City: "Hamburg", PostCode: "21073"}}, 7266, all},
		{"other postal code", Subject{em, "DE", &Address{Street: "Goschenstasse 13", City: "Hamburg", PostCode: "21079"}}, 0, nil},
		{"other city", Subject{em, "DE", &Address{Street: "Goschenstasse 13", City: "Harburg", PostCode: "21073"}}, 0, nil},
		{"other street, same city and postal code", Subject{em, "DE", &Address{Street: "Hauptstrasse 1", City: "Hamburg", PostCode: "21073"}}, 0, nil},
		{"state is not a signal", Subject{em, "DE", &Address{City: "Hamburg", State: "Bavaria"}}, 7266, all},
		{"only a state: nothing to compare", Subject{em, "DE", &Address{State: "Bavaria"}}, 7266, nameCountry},

		// Punctuation in entity names.
		{"S.L. written SL", Subject{"Saf Tech SL", "ES", safTechAddr}, 10602, all},
		{"hyphen for space", Subject{"SAF-TECH S.L.", "ES", nil}, 10602, nameCountry},
		{"spaced abbreviation is another name", Subject{"SAF TECH S. L.", "ES", safTechAddr}, 0, nil},
		{"postal code without its leading zero", Subject{"SAF TECH S.L.", "ES", &Address{Street: "Calle Serrano 52", City: "Barcelona", PostCode: "8031"}}, 0, nil},
		{"K.K. and postal code without hyphen", Subject{"Ascotec Japan KK", "JP", &Address{Street: "2-3-9 Shiba", City: "Minato-ku, Tokyo", PostCode: "1050014"}}, 11609, all},
		{"postal code with hyphen", Subject{"ASCOTEC JAPAN K.K.", "JP", &Address{Street: "Shiba East Building", City: "Tokyo", PostCode: "105-0014"}}, 11609, all},

		// Aliases.
		{"alias in natural order", Subject{"Deepak Subhash Jadhav", "IN", jadhavAddr}, 40201, all},
		{"alias in OFAC order", Subject{"JADHAV, Deepak Subhash", "", nil}, 40201, nameOnly},
		{"primary name, another country", Subject{"Deepak Jadhav", "US", jadhavAddr}, 0, nil},
		{"entity alias", Subject{"National Bank of Cuba", "", nil}, 306, nameOnly},
		{"suffix stays last", Subject{"Emmerson Dambudzo Mnangagwa Jr.", "ZW", nil}, 39842, nameCountry},

		// Name-only screening (the conformance case) and entries with several addresses.
		{"name only", Subject{bnc, "", nil}, 306, nameOnly},
		{"name only, mixed case", Subject{"bAnCo NaCiOnAl De CuBa", "", nil}, 306, nameOnly},
		{"country of none of its addresses", Subject{bnc, "DE", nil}, 0, nil},
		{"country of one of its addresses", Subject{bnc, "ES", nil}, 306, nameCountry},
		{"Madrid address", Subject{bnc, "ES", &Address{Street: "Avenida de Concha Espina 8", City: "Madrid", PostCode: "28036"}}, 306, all},
		{"postal code with country prefix", Subject{bnc, "CH", &Address{Street: "Zweierstrasse 35", City: "Zurich", PostCode: "CH-8022"}}, 306, all},
		{"country and address of different rows of one entry", Subject{bnc, "ES", &Address{Street: "Zweierstrasse 35", City: "Zurich", PostCode: "8022"}}, 306, all},
		{"row without postal code ignores the recipient's", Subject{bnc, "PA", &Address{Street: "Federico Boyd Avenue", City: "Panama City", PostCode: "0816"}}, 306, all},
		{"not a substring match", Subject{"Banco Nacional", "", nil}, 0, nil},
		{"not a prefix match", Subject{bnc + " SA", "", nil}, 0, nil},

		// A name shared by two entries: each is judged on its own, the first in list order wins.
		{"shared name, second entry's country", Subject{"Mohammad Kazemi", "IR", nil}, 39656, nameCountry},
		{"shared name, first entry's country", Subject{"Mohammad Kazemi", "TR", nil}, 33256, nameCountry},
		{"shared name, neither country", Subject{"Mohammad Kazemi", "DE", nil}, 0, nil},
		{"shared name, name only", Subject{"Mohammad Kazemi", "", nil}, 33256, nameOnly},

		// An address in a country without ISO code cannot be ruled out by country.
		{"unknown country cannot clear", Subject{"Resort Nizhnyaya Oreanda", "RU", &Address{Street: "Oreanda - 12", City: "Yalta", PostCode: "298658"}}, 18961, nameAddress},
		{"unknown country, unrelated address", Subject{"Resort Nizhnyaya Oreanda", "RU", unrelatedAddr}, 0, nil},

		// Clear.
		{"harmless name", Subject{"Jane Doe", "DE", unrelatedAddr}, 0, nil},
		{"empty name", Subject{"", "", nil}, 0, nil},
		{"punctuation only", Subject{" .,- ", "", nil}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := l.Screen(tt.subj)
			if tt.want == 0 {
				if m != nil {
					t.Fatalf("Screen(%+v) = entry %d %q %v, want clear", tt.subj, m.EntNum, m.Name, m.Signals)
				}
				return
			}
			if m == nil {
				t.Fatalf("Screen(%+v) = clear, want entry %d", tt.subj, tt.want)
			}
			if m.EntNum != tt.want || !slices.Equal(m.Signals, tt.signals) {
				t.Errorf("Screen(%+v) = entry %d signals %v, want entry %d signals %v", tt.subj, m.EntNum, m.Signals, tt.want, tt.signals)
			}
		})
	}
}

func TestMatchDescribesTheEntry(t *testing.T) {
	l := embedded(t)
	m := l.Screen(Subject{Name: "Deepak Subhash Jadhav"})
	if m == nil {
		t.Fatal("no match")
	}
	want := Match{
		EntNum: 40201, Name: "JADHAV, Deepak", MatchedName: "JADHAV, Deepak Subhash",
		Type: "individual", Program: "DPRK3", Signals: nameOnly, Source: l.Source(),
	}
	if m.EntNum != want.EntNum || m.Name != want.Name || m.MatchedName != want.MatchedName ||
		m.Type != want.Type || m.Program != want.Program || m.Source != want.Source || !slices.Equal(m.Signals, want.Signals) {
		t.Errorf("match = %+v, want %+v", *m, want)
	}
	if m := l.Screen(Subject{Name: "KAZEMI, Mohammad Reza"}); m == nil || m.Program != "SDGT, IFSR" {
		t.Errorf("multi-program entry: %+v, want Program %q", m, "SDGT, IFSR")
	}
	if m := l.Screen(Subject{Name: bnc}); m == nil || m.Type != "" {
		t.Errorf("entity: %+v, want Type \"\"", m)
	}
	e := m.APIError()
	if e.Code != apierror.Forbidden {
		t.Errorf("APIError code %q, want %q", e.Code, apierror.Forbidden)
	}
}

// Removing a signal can only keep or create a refusal, never lift one: the fallback to
// name-only must not become a way around the screening.
func TestDroppingSignalsNeverClears(t *testing.T) {
	l := embedded(t)
	subjects := []Subject{
		{em, "DE", motassadeqAddr},
		{"Saf Tech SL", "ES", safTechAddr},
		{bnc, "CH", &Address{Street: "Zweierstrasse 35", City: "Zurich", PostCode: "8022"}},
		{"Deepak Subhash Jadhav", "IN", jadhavAddr},
	}
	for _, s := range subjects {
		if l.Screen(s) == nil {
			t.Fatalf("%+v: fixture does not match", s)
		}
		for _, reduced := range []Subject{{s.Name, "", s.Address}, {s.Name, s.Country, nil}, {s.Name, "", nil}} {
			if l.Screen(reduced) == nil {
				t.Errorf("%+v matches but %+v is clear", s, reduced)
			}
		}
	}
}
