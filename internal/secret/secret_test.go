package secret

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Value held in an unexported field, which fmt cannot call methods of, still prints nothing.
func TestUnexportedFieldDoesNotPrint(t *testing.T) {
	held := struct{ token Value }{New("s3cret")}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, held); strings.Contains(s, "s3cret") {
			t.Errorf("%s shows the secret: %s", verb, s)
		}
	}
	if New("").String() != "" || !New("").IsZero() || New("x").String() != Redacted {
		t.Error("an empty secret is no secret; a secret prints as [redacted]")
	}
}

func TestSettingSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bind := func(args ...string) *Setting {
		s := &Setting{Name: "x-token", Env: "X_TOKEN"}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		s.BindFlags(fs, "token of x")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Setenv("X_TOKEN", "")
	if s := bind("--x-token-file", file); s.Resolve() != nil || s.Value.Reveal() != "from-file" {
		t.Errorf("from the file: %q", s.Value.Reveal())
	}
	t.Setenv("X_TOKEN", "from-env")
	if s := bind(); s.Resolve() != nil || s.Value.Reveal() != "from-env" {
		t.Errorf("from the environment: %q", s.Value.Reveal())
	}
	if err := bind("--x-token-file", file).Resolve(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("file and environment: %v", err)
	}
	if err := bind("--x-token=from-flag").Resolve(); err == nil || strings.Contains(err.Error(), "from-flag") ||
		!strings.Contains(err.Error(), "--x-token-file") {
		t.Errorf("the flag form: %v", err)
	}
}
