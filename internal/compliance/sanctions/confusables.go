package sanctions

// Look-alike letters (issue 25 item 2). A listed name spelled with a Cyrillic "а", a Greek "Ο"
// or an Armenian "օ" is the same name to a reader and must be to the screening. Unicode's
// answer is UTS #39's skeleton: two strings are confusable when their skeletons, built from
// the confusables.txt table, are equal. normalize does not take the whole skeleton, whose
// prototypes are not the letters names are written in ("m" becomes "rn", "I" and "l" and "1"
// become one letter, case survives): applied to every name it would turn Latin names into each
// other. It takes the part that matters for names written to dodge a Latin listing: each
// character outside ASCII whose skeleton is a single ASCII letter or digit (or the skeleton of
// one, as "ɱ"'s is "rn", that of "m") is replaced by that ASCII character, of the same case
// where the table leaves the choice ("І" to "I", "ӏ" to "l"). ASCII itself, and every
// character whose skeleton is not ASCII ("Ж", "И", "ł", "ø"), stays as it is, so Latin names
// compare exactly as before and names in other scripts compare as before among themselves:
// both sides of a comparison go through the same fold.
//
// The table (confusables_table.go, written by ./gen) comes from github.com/mtibben/confusables,
// generated from Unicode's confusables.txt of 2020-02-13 (Unicode 13.0). Later releases added look-alikes of letters of scripts encoded
// since; the Cyrillic, Greek, Armenian, Cherokee and fullwidth letters that pass for Latin
// ones are in it.

//go:generate go run ./gen

// foldConfusable returns the ASCII letter or digit r folds to, or false when it has none.
func foldConfusable(r rune) (byte, bool) {
	c, ok := asciiFold[r]
	return c, ok
}
