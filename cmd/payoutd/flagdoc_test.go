package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/test/docgen"
)

// flagTable renders every flag of payoutd as a markdown table, in the order of --help.
func flagTable(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | value | default | what |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if kind == "" {
			kind = "bool"
		}
		def := "`" + f.DefValue + "`"
		if f.DefValue == "" || f.DefValue == "[]" {
			def = ""
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.Name, kind, cell(def), cell(usage))
	})
	return b.String()
}

// cell keeps a table cell on one line and its pipes inside it.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// flagMention is a flag named in the prose of docs/configuration.md.
var flagMention = regexp.MustCompile("`--([a-z0-9][a-z0-9-]*)")

// TestConfigurationDoc: docs/configuration.md lists every flag of payoutd with its default and
// help, rendered from the flag set (`make docs` rewrites it), and its prose names no flag
// payoutd does not have.
func TestConfigurationDoc(t *testing.T) {
	fs := newFlagSet(newOptions())
	path := filepath.Join("..", "..", "docs", "configuration.md")
	docgen.Check(t, path, "flags", flagTable(fs))

	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range flagMention.FindAllStringSubmatch(string(doc), -1) {
		if fs.Lookup(m[1]) == nil {
			t.Errorf("docs/configuration.md names --%s, which is no flag of payoutd", m[1])
		}
	}
}
