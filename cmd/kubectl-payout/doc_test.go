package main_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/commands"
	"github.com/stablepay/payout-operator/test/docgen"
)

// commandReference renders the help of every command of the plugin, as cobra's doc package
// writes it, into one markdown text whose "SEE ALSO" links point at its own sections.
func commandReference(t *testing.T) string {
	t.Helper()
	root := commands.NewRoot("kubectl payout", cli.NewFactory(cli.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
	var b bytes.Buffer
	link := func(name string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "_", "-")
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		c.DisableAutoGenTag = true // no date: the text must be the same on every run
		if err := doc.GenMarkdownCustom(c, &b, link); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// TestKubectlPayoutDoc: docs/kubectl-payout.md holds the help of every command as the plugin
// prints it (`make docs` rewrites it).
func TestKubectlPayoutDoc(t *testing.T) {
	docgen.Check(t, filepath.Join("..", "..", "docs", "kubectl-payout.md"), "commands", commandReference(t))
}
