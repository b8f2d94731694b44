package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError is a mistake in the command line itself (unknown command or flag, wrong
// arguments): the place where pointing at --help helps.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// UsageErrorf formats a UsageError.
func UsageErrorf(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// ExpectArgs checks that args holds exactly the named positional arguments.
func ExpectArgs(args []string, names ...string) error {
	if len(args) == len(names) {
		return nil
	}
	if len(names) == 0 {
		return UsageErrorf("unexpected argument %q", args[0])
	}
	return UsageErrorf("expected %s, got %d argument(s)", strings.Join(names, " and "), len(args))
}

// Group is a command that only holds subcommands. Without this, cobra answers an unknown
// subcommand of a group with the group's help and exit code 0.
func Group(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	AsGroup(cmd)
	cmd.AddCommand(subcommands...)
	return cmd
}

func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return UsageErrorf("%s", msg)
}

// AsGroup makes cmd answer like a group: help when run alone, an error (with suggestions)
// when run with an unknown subcommand.
func AsGroup(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = runGroup
	cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which it only sets for the root
}

// FlagErrors marks errors of flag parsing as usage errors, for root and every subcommand.
func FlagErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return UsageErrorf("%v", err)
	})
}
