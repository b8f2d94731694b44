package sanctions

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestNameSampleCollisions measures how many names of a sample of ordinary names equal a name
// of the embedded list, as screening compares them (issue 25 item 2: folding look-alikes must
// not turn ordinary Latin names into hits). It needs name files, one name a line, and only
// reports; docs/benchmarks.md has the numbers before and after the fold:
//
//	PAYOUT_NAME_SAMPLES=latin.txt,cyrillic-greek.txt go test -run TestNameSampleCollisions -v ./internal/compliance/sanctions
func TestNameSampleCollisions(t *testing.T) {
	files := os.Getenv("PAYOUT_NAME_SAMPLES")
	if files == "" {
		t.Skip("PAYOUT_NAME_SAMPLES names no sample files")
	}
	l := embedded(t)
	for _, path := range strings.Split(files, ",") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		names, hits := 0, 0
		entries := map[int32]bool{}
		s := bufio.NewScanner(f)
		for s.Scan() {
			names++
			if refs := l.byName[normalize(s.Text())]; len(refs) > 0 {
				hits++
				if hits <= 5 {
					t.Logf("%s: %q equals %q", path, s.Text(), l.entries[refs[0].entry].names[refs[0].name])
				}
				for _, r := range refs {
					entries[r.entry] = true
				}
			}
		}
		f.Close()
		t.Logf("%s: %d of %d names equal a listed name, %d listed entries hit", path, hits, names, len(entries))
	}
}
