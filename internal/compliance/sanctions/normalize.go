package sanctions

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// normalize maps a name or an address fragment to the form in which the spec's "case-folded,
// accents removed, exact match" is decided: two strings match when their normalized forms are
// equal.
//
//   - Compatibility decomposition (NFKD) and removal of nonspacing marks (Mn) strip accents:
//     "é" → "e", "İ" → "i". NFKD rather than NFD also folds look-alike compatibility forms
//     (fullwidth "ＢＡＮＣＯ", ligatures "ﬁ", superscripts) to plain letters, which would otherwise
//     be a cheap way to dodge an exact match. Letters that are not composed of a base letter
//     and a mark stay distinct, unless they are look-alikes (below): "ø" ≠ "o", "ł" ≠ "l".
//   - Look-alike letters of other scripts become the ASCII letters they pass for (UTS #39
//     confusables, confusables.go): Cyrillic "ВАNCО", Greek "ΒΑΝCΟ", Cherokee "ᏴᎪNᏟO" =
//     "BANCO", and "ı" (dotless i) = "i". Characters without an ASCII look-alike stay.
//   - Full Unicode case folding: "MOUNİR" = "mounir", "Straße" = "strasse".
//   - Periods and apostrophes are deleted without leaving a gap, so abbreviations and elisions
//     compare equal to their run-together spelling: "S.L." = "SL", "K.K." = "KK",
//     "O'Brien" = "OBrien". The price is that a spaced abbreviation is a different word:
//     "S. L." ("s l") ≠ "SL" ("sl"). Deleting them is the reading that makes "SAF TECH S.L." and
//     "Saf Tech SL" the same name, which is how such names are written on payout forms.
//   - Invisible format characters (Unicode Cf: zero-width space and joiners, soft hyphen, BOM,
//     bidi marks) are deleted, so "Ban\u200Bco" = "Banco".
//   - Any other run of characters that are not letters, digits or marks (spaces, commas,
//     hyphens, slashes, "&", control characters, invalid UTF-8) becomes one space, and the
//     result is trimmed: "AL-HARAMAIN" = "al haramain", "EL MOTASSADEQ, Mounir" =
//     "el motassadeq mounir". Word order is kept, so "Mounir El Motassadeq" matches only
//     because natural-order names are indexed too (see List.buildIndex), and "Elmotassadeq" ≠
//     "El Motassadeq".
//
// normalize is idempotent, and its output contains only letters, digits, marks other than Mn,
// and single spaces between them.
func normalize(s string) string {
	if isASCII(s) {
		return normalizeASCII(s)
	}
	return normalizeUnicode(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isDeleted reports the characters that vanish without leaving a word break: periods and
// apostrophes (see normalize). The acute accent U+00B4 is listed because it is typed as an
// apostrophe and NFKD would otherwise turn it into a space plus a combining mark.
func isDeleted(r rune) bool {
	switch r {
	case '.', '\'', '`', '\u00B4', '\u2018', '\u2019', '\u02BC':
		return true
	}
	return false
}

// normalizeASCII is the fast path for the common all-ASCII input (the whole SDN list and most
// recipient names); it must give exactly what normalizeUnicode gives for ASCII, which a fuzz
// test checks.
func normalizeASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case isDeleted(rune(c)):
			continue
		default:
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

func normalizeUnicode(s string) string {
	// Deleting before decomposition matters for U+00B4 (see isDeleted); strings.Map also turns
	// invalid UTF-8 into U+FFFD, which later becomes a word break.
	s = strings.Map(func(r rune) rune {
		if isDeleted(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		// Look-alikes are folded before case folding, which would lose the shapes of capitals
		// ("В" looks like "B", its small "в" like nothing Latin), and again below.
		if c, ok := foldConfusable(r); ok {
			return rune(c)
		}
		return r
	}, s)
	// Decompose before folding so that compatibility forms of capitals ("ᴬ", "㎒") are folded
	// too, and again after folding because folding can produce marks ("İ" folds to "i" + U+0307).
	// A Caser keeps state and must not be shared between goroutines, hence one per call.
	s = removeMn(norm.NFKD.String(s))
	s = strings.Map(cherokeeCapital, cases.Fold().String(s))
	s = removeMn(norm.NFKD.String(s))

	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s {
		if r >= utf8.RuneSelf {
			// a look-alike that decomposition or case folding produced ("ё" → "е" + mark; a
			// Cherokee small letter → its capital): its ASCII letter, in lower case like the rest
			if c, ok := foldConfusable(r); ok {
				r = unicode.ToLower(rune(c))
			}
		}
		switch {
		case isDeleted(r) || unicode.Is(unicode.Cf, r):
			// Checked before letters: U+02BC is a letter (Lm) yet an apostrophe, and decomposition
			// produces it ("ŉ" is U+02BC + "n"); a fullwidth full stop or "…" decomposes to ".",
			// which is deleted like ".".
			continue
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r):
		default:
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cherokeeCapital maps Cherokee small letters to their capitals. Unicode's case folding folds
// Cherokee to the capitals (CaseFolding.txt, since Unicode 8), but golang.org/x/text's Fold
// swaps the two cases, so folding twice gave back the input and normalize was not idempotent
// (found by FuzzScreen: "Ꮐ" → "ꮐ" → "Ꮐ").
func cherokeeCapital(r rune) rune {
	switch {
	case r >= 0xAB70 && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0
	case r >= 0x13F8 && r <= 0x13FD:
		return r - 0x13F8 + 0x13F0
	}
	return r
}

func removeMn(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// tokens splits a string into its normalized words.
func tokens(s string) []string {
	return strings.Fields(normalize(s))
}
