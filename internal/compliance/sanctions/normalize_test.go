package sanctions

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"OFAC individual form", "EL MOTASSADEQ, Mounir", "el motassadeq mounir"},
		{"accents and dotted capital I", "MOUNİR el motassadéq", "mounir el motassadeq"},
		{"hyphen and extra spaces", "  Mounir\tEl-Motassadeq ", "mounir el motassadeq"},
		{"periods are deleted", "SAF TECH S.L.", "saf tech sl"},
		{"run-together abbreviation", "Saf Tech SL", "saf tech sl"},
		{"Cherokee look-alikes fold to Latin, both cases alike", "Ꮐ ꮐ", "g g"},
		{"Cherokee without a Latin look-alike folds to its capitals", "Ꮿ ꮿ", "Ꮿ Ꮿ"},
		{"spaced abbreviation stays two words", "SAF TECH S. L.", "saf tech s l"},
		{"apostrophe", "O'Brien", "obrien"},
		{"typographic apostrophe", "O\u2019Brien", "obrien"},
		{"acute accent typed as apostrophe", "O\u00B4Brien", "obrien"},
		{"modifier letter apostrophe", "O\u02BCBrien", "obrien"},
		{"full case folding of sharp s", "GOSCHENSTRAßE", "goschenstrasse"},
		{"fullwidth compatibility forms", "Ｂａｎｃｏ　Ｎａｃｉｏｎａｌ", "banco nacional"},
		{"ligature", "\uFB01nance", "finance"},
		{"digraph with caron", "\u01C4ivan", "dzivan"},
		{"zero-width space inside a word", "Ban\u200Bco", "banco"},
		{"soft hyphen inside a word", "Na\u00ADcional", "nacional"},
		{"ampersand and slash separate", "A&B/C", "a b c"},
		{"invalid UTF-8 separates", "Banco\xffNacional", "banco nacional"},
		{"fullwidth full stop is deleted like a period", "S\uFF0EL\uFF0E", "sl"},
		{"stroke letters are not accents", "Łukasz Øberg", "łukasz øberg"},
		{"dotless i looks like i", "MOUNıR", "mounir"},
		{"Cyrillic look-alikes, capital and small", "ВАNСО Мounіr", "banco mounir"},
		{"Greek look-alikes", "ΒΑΝCΟ ΝΑCΙΟΝΑL", "banco nacional"},
		{"Armenian look-alikes", "Օsama", "osama"},
		{"letters without a Latin look-alike stay", "Иван Жуков", "ивaн жyкoв"},
		{"digits kept", "Tokyo 105-0014", "tokyo 105 0014"},
		{"only punctuation", " ,.-; ", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalize(tt.in); got != tt.want {
				t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The ASCII fast path must agree with the Unicode path, or names would match differently
// depending on whether an accent appears elsewhere in the string.
func TestNormalizeASCIIPathAgrees(t *testing.T) {
	for _, s := range []string{
		"EL MOTASSADEQ, Mounir", "SAF TECH S.L.", "O'Brien `x`", "a\x00b\x7fc", "  --  ", "Tokyo 105-0014",
	} {
		if a, u := normalizeASCII(s), normalizeUnicode(s); a != u {
			t.Errorf("%q: ascii %q, unicode %q", s, a, u)
		}
	}
}

func TestNaturalOrder(t *testing.T) {
	tests := []struct{ in, want string }{
		{"EL MOTASSADEQ, Mounir", "Mounir EL MOTASSADEQ"},
		{"JADHAV, Deepak Subhash", "Deepak Subhash JADHAV"},
		{"DELOS REYES, Feliciano Semborio, Jr.", "Feliciano Semborio DELOS REYES Jr."},
		{"MNANGAGWA, JR., Emmerson Dambudzo", "Emmerson Dambudzo MNANGAGWA JR."},
		{"ABU MUHAMMAD", ""},
		{"SMITH,", ""},
	}
	for _, tt := range tests {
		if got := naturalOrder(tt.in); got != tt.want {
			t.Errorf("naturalOrder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestContainsJoinedRun(t *testing.T) {
	locality := tokens("Zurich CH-8022")
	tests := []struct {
		want string
		ok   bool
	}{
		{"8022", true},
		{"ch8022", true},
		{"zurichch8022", true},
		{"802", false},
		{"80220", false},
		{"h8022", false},
	}
	for _, tt := range tests {
		if got := containsJoinedRun(locality, tt.want); got != tt.ok {
			t.Errorf("containsJoinedRun(%q, %q) = %v, want %v", locality, tt.want, got, tt.ok)
		}
	}
}
