// Package text is the one rule for caller-supplied text that a terminal or a mail reader shows:
// the facade refuses what Unsafe finds (400 naming the field), and the kubectl plugin prints it
// through Escape, for objects stored before that rule or written with kubectl directly.
package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unsafe returns the first rune of s that can change how the text around it is shown, and true;
// or 0 and false when there is none. Those are the C0 and C1 controls (U+0000-U+001F,
// U+007F-U+009F: ESC and CSI start terminal escape sequences, a newline forges a line of
// output) and the bidirectional embeddings, overrides, isolates and marks (U+202A-U+202E,
// U+2066-U+2069, U+200E, U+200F, U+061C), which reorder the characters shown after them
// (the "Trojan Source" attack, CVE-2021-42574). A byte that is not UTF-8 is unsafe too, as
// utf8.RuneError: a terminal may take a lone 0x9B for CSI.
func Unsafe(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isUnsafe(r, size) {
			return r, true
		}
		i += size
	}
	return 0, false
}

func isUnsafe(r rune, size int) bool {
	return (r == utf8.RuneError && size == 1) || IsUnsafe(r)
}

// IsUnsafe reports whether r is one of the runes Unsafe finds, for code that reads text rune
// by rune (a byte that is not UTF-8 reads as utf8.RuneError there, which is not reported).
func IsUnsafe(r rune) bool {
	switch {
	case r <= 0x1F, r >= 0x7F && r <= 0x9F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

// Check returns nil for text without an Unsafe rune, else an error whose text completes
// "<field>: " and names the rune by its code point (never the rune itself).
func Check(s string) error {
	r, bad := Unsafe(s)
	if !bad {
		return nil
	}
	if r == utf8.RuneError {
		return fmt.Errorf("must be UTF-8 text")
	}
	return fmt.Errorf("must not hold control or bidirectional formatting characters, found U+%04X", r)
}

// Escape returns s with every Unsafe rune written as a visible escape: \u202e for a rune,
// \x9b for a byte that is not UTF-8. Other text, backslashes included, is left as it is.
func Escape(s string) string {
	if _, bad := Unsafe(s); !bad {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isUnsafe(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
