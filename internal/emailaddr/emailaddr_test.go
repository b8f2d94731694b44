package emailaddr

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{
		"payee@example.com", "payee+x@example.com", "jörg@example.com", "用户@例子.广告", "a.b-c_d@mail.example.co.uk", "A@B.CO",
		strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com", // 254 characters
	} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v", ok, err)
		}
	}
	for bad, want := range map[string]error{
		"a@b":                             ErrNoDot,
		"x@localhost":                     ErrNoDot,
		"":                                ErrNotPlain,
		"nobody":                          ErrNotPlain,
		"not an email":                    ErrNotPlain,
		" x@example.com":                  ErrNotPlain,
		"x@example.com ":                  ErrNotPlain,
		"Ann <ann@example.com>":           ErrNotPlain,
		"a@example.com, b@example.com":    ErrNotPlain,
		"a@b.":                            ErrNotPlain,
		"a@.com":                          ErrNotPlain,
		"a@b..c":                          ErrNotPlain,
		`"a b"@example.com`:               ErrNotPlain,
		"a@example.com (comment)":         ErrNotPlain,
		strings.Repeat("a", 251) + "@b.c": ErrTooLong,  // 255 characters
		"payee\u202e@example.com":         ErrNotPlain, // a bidi override net/mail takes as a letter
		"payee@exam\u202eple.com":         ErrNotPlain,
		"pay\u0085ee@example.com":         ErrNotPlain, // a C1 control, also a letter to net/mail
		"pay\u2066ee@example.com":         ErrNotPlain,
	} {
		if err := Check(bad); err != want {
			t.Errorf("Check(%q) = %v, want %v", bad, err, want)
		}
	}
}
