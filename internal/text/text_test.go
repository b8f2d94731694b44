package text

import "testing"

func TestUnsafe(t *testing.T) {
	for _, c := range []struct {
		in   string
		want rune
		bad  bool
	}{
		{"Jane Doe", 0, false},
		{"José Müller-Lüdenscheidt", 0, false},
		{"王小明", 0, false},
		{"محمد بن سلمان", 0, false},         // right-to-left script, no formatting characters
		{"Ünïcödé \u200d joiner", 0, false}, // ZWJ is not a bidi control
		{"a\\u202eb", 0, false},             // a literal backslash sequence is text
		{"", 0, false},
		{"\x00", 0x00, true},
		{"tab\there", '\t', true},
		{"line\nbreak", '\n', true},
		{"\x1b[31mred", 0x1B, true},
		{"\x1f", 0x1F, true},
		{" ~", 0, false},
		{"\x7f", 0x7F, true},
		{"a\u0080", 0x80, true},
		{"a\u009b31m", 0x9B, true},
		{"\u00a0nbsp", 0, false},
		{"a\u061cb", 0x061C, true},
		{"a\u200eb", 0x200E, true},
		{"a\u200fb", 0x200F, true},
		{"\u2029", 0, false},
		{"a\u202ab", 0x202A, true},
		{"evil\u202egnp.exe", 0x202E, true},
		{"\u202f", 0, false},
		{"\u2065", 0, false},
		{"a\u2066b", 0x2066, true},
		{"a\u2069b", 0x2069, true},
		{"\u206a", 0, false},
		{"first \u202e then \x1b", 0x202E, true},
		{"bad\x9bbyte", 0xFFFD, true},
		{"\ufffd is a real rune", 0, false},
	} {
		got, bad := Unsafe(c.in)
		if got != c.want || bad != c.bad {
			t.Errorf("Unsafe(%q) = %U, %v; want %U, %v", c.in, got, bad, c.want, c.bad)
		}
		if err := Check(c.in); (err != nil) != c.bad {
			t.Errorf("Check(%q) = %v; want an error: %v", c.in, err, c.bad)
		}
	}
}

func TestCheckNamesTheRune(t *testing.T) {
	if got, want := Check("Ann\u202eeoD").Error(), "must not hold control or bidirectional formatting characters, found U+202E"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := Check("x\x1b[2J").Error(), "must not hold control or bidirectional formatting characters, found U+001B"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := Check("x\xff").Error(), "must be UTF-8 text"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Jane Doe", "Jane Doe"},
		{"محمد \\u202e", "محمد \\u202e"},
		{"\x1b[31mRed\x1b[0m", `\u001b[31mRed\u001b[0m`},
		{"Ann\u202eeoD", `Ann\u202eeoD`},
		{"a\nb\tc\r", `a\u000ab\u0009c\u000d`},
		{"\u2066x\u2069\u200e\u200f\u061c\u0085", `\u2066x\u2069\u200e\u200f\u061c\u0085`},
		{"bad\x9bbyte", `bad\x9bbyte`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if _, bad := Unsafe(Escape(c.in)); bad {
			t.Errorf("Escape(%q) is still unsafe", c.in)
		}
	}
}
