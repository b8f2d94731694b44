// Package docgen keeps the generated parts of the docs equal to what the code says: each part
// sits in a markdown file between <!-- NAME:begin --> and <!-- NAME:end --> lines, the rest of
// the file is written by hand, and a test of the code that the part describes renders it and
// calls Check. `make docs` runs those tests with PAYOUT_UPDATE_DOCS=1, which writes the parts
// instead of comparing them.
package docgen

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// UpdateEnv is the environment variable that makes Check write the file instead of failing.
const UpdateEnv = "PAYOUT_UPDATE_DOCS"

// Splice returns doc with the lines between its NAME:begin and NAME:end markers replaced by
// body. Each marker must be on a line of its own, exactly once, begin before end.
func Splice(doc, name, body string) (string, error) {
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, "\n"+end)
	if i < 0 || j < 0 || j < i {
		return "", fmt.Errorf("no %q and %q lines, in that order", strings.TrimSpace(begin), end)
	}
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("the markers of %s appear more than once", name)
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return doc[:i+len(begin)] + body + doc[j+1:], nil
}

// Check fails t when the part NAME of the file at path is not body, saying how to regenerate
// it; with PAYOUT_UPDATE_DOCS=1 in the environment it writes the part instead.
func Check(t testing.TB, path, name, body string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Splice(string(old), name, body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if want == string(old) {
		return
	}
	if os.Getenv(UpdateEnv) != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: wrote %s", path, name)
		return
	}
	t.Errorf("%s: the part %s is not what the code says; run `make docs` and commit the result. First difference:\n%s",
		path, name, firstDifference(string(old), want))
}

// firstDifference shows the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var a, b string
		if i < len(h) {
			a = h[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\n  file: %s\n  code: %s", i+1, a, b)
		}
	}
	return "(none)"
}
