package sanctions

import "testing"

func BenchmarkScreen(b *testing.B) {
	l := embedded(b)
	cases := []struct {
		name string
		subj Subject
	}{
		{"clear", Subject{"Jane Doe", "DE", unrelatedAddr}},
		{"clear_accented", Subject{"Zoë Ångström-Müller", "SE", nil}},
		{"refused_name_only", Subject{bnc, "", nil}},
		{"refused_all_signals", Subject{em, "DE", motassadeqAddr}},
		{"cleared_by_address", Subject{em, "DE", unrelatedAddr}},
		{"refused_lookalikes", Subject{"B\u0430nco N\u0430cion\u0430l d\u0435 Cub\u0430", "", nil}},
		{"clear_cyrillic", Subject{"\u0418\u0432\u0430\u043D \u041F\u0435\u0442\u0440\u043E\u0432", "RU", nil}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Screen(c.subj)
			}
		})
	}
}

// BenchmarkParseEmbedded is the start-up cost of Embedded (parsing and indexing the list); the
// first call of Embedded pays it once.
func BenchmarkParseEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseEmbedded(); err != nil {
			b.Fatal(err)
		}
	}
}
