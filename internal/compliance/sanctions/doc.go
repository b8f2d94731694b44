// Package sanctions screens payout recipients against the OFAC SDN list (spec 4.5 rule 3 and
// 4.7): a recipient is refused only when all of its available signals — holder name, address
// country and address — point at the same listed entry.
//
// # Matching rules
//
// Name. The holder name and every list name are normalized and compared for equality; there is
// no fuzzy or substring matching. Normalizing (normalize.go) folds case, strips accents (NFKD,
// then nonspacing marks removed), turns look-alike letters of other scripts into the ASCII
// letters they pass for (UTS #39 confusables, confusables.go: Cyrillic "Ваnсо" = "Banco"),
// deletes periods, apostrophes and invisible format characters,
// and turns every other run of non-letters and non-digits into one space: "SAF TECH S.L." =
// "Saf-Tech SL", "MOUNİR el motassadéq" = "Mounir El Motassadeq", but "S. L." ≠ "SL". The list names are each entry's SDN_Name
// and every alias of alt.csv (aka, fka and nka alike). For individuals, whose names OFAC writes
// as "LAST, First", the natural order "First Last" is indexed as well (a suffix such as "Jr."
// stays last). Only entries whose name matches are examined further.
//
// Country. Compared only when the recipient has a country and the entry has at least one
// address country: it matches when the recipient's alpha-2 code is among the entry's address
// countries. A country that cannot be mapped to ISO alpha-2 (e.g. "Region: Crimea",
// "undetermined", or an address without a country) is unknown and cannot rule the entry out,
// so for such an entry a non-matching recipient country falls back to name-only for this
// signal instead of clearing the recipient. A recipient country that is not two letters counts
// as absent (the facade rejects it earlier; a code matching nothing must not clear anyone).
//
// Address. Compared only when both sides have one. The recipient's street, city and postal code
// are set against each address row of the entry: its street field (Address) and its locality
// field (City/State/Province/Postal Code, which holds city and postal code together). A row
// matches when every component that both sides have agrees:
//   - street: the recipient's street and the row's street share at least one token;
//   - city: at least one token of the recipient's city occurs in the row's locality;
//   - postal code: compared only when the row's locality contains a digit; the recipient's
//     postal code, with its spaces removed after normalization, equals a run of consecutive
//     locality tokens joined together ("21073" and "CH-8022" both match "Zurich CH-8022";
//     "8031" does not match "08031").
//
// The address signal matches when some row matches; it fails when rows were compared and none
// matched; and when no component could be compared on any row it falls back to name-only.
// State is not a signal (the spec names street, city and postal code).
//
// Why these rules: the name has already matched exactly, so the country and address signals
// only decide whether the recipient is a different holder of a listed name. A missed match pays
// a sanctioned party, a false match refuses a recipient who can be reviewed by hand, so each
// rule leans towards matching: one shared token per component is enough, and nothing unknown
// ever clears a recipient. What clears a recipient is positive contrary evidence: a known
// country outside the entry's countries, or an address that, for every address of the entry it
// can be compared with, disagrees in a part both sides have.
//
// Signals are judged per entry, not per address row: a recipient whose country is that of one
// of the entry's addresses and whose address matches another of them is refused.
package sanctions
