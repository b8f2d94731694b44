// Package completion holds `completion SHELL`: the shell completion script of the plugin.
package completion

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
)

// Shells are the shells a script is written for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Options are the inputs of `completion SHELL`.
type Options struct {
	*cli.Factory
	root *cobra.Command
}

// NewCmdCompletion is `completion`; root is the command tree the script completes.
func NewCmdCompletion(f *cli.Factory, root *cobra.Command) *cobra.Command {
	o := &Options{Factory: f, root: root}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script",
		Long: `Print the completion script of kubectl-payout for a shell. It completes commands,
flags, -o formats, and reads account names, transfer ids and API key ids from the
cluster of $KUBECONFIG (or --kubeconfig) as you type.

As a kubectl plugin, "kubectl payout <TAB>" is completed by kubectl itself (1.26 or
later), which runs an executable named kubectl_complete-payout from $PATH: link it
to this binary, which then answers kubectl's completion requests.

  ln -s "$(command -v kubectl-payout)" "$(dirname "$(command -v kubectl-payout)")/kubectl_complete-payout"`,
		Example: `  # bash, for this session, then for good
  source <(kubectl-payout completion bash)
  kubectl-payout completion bash > ~/.local/share/bash-completion/completions/kubectl-payout
  # zsh (compinit loaded)
  kubectl-payout completion zsh > "${fpath[1]}/_kubectl-payout"
  # fish
  kubectl-payout completion fish > ~/.config/fish/completions/kubectl-payout.fish`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteWords(Shells...)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
}

// Validate checks the shell.
func (o *Options) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the shell"); err != nil {
		return err
	}
	for _, s := range Shells {
		if args[0] == s {
			return nil
		}
	}
	return cli.UsageErrorf("no completion for shell %q: use bash, zsh, fish or powershell", args[0])
}

// Run writes the script.
func (o *Options) Run(_ context.Context, args []string) error {
	return Write(o.Out, o.root, args[0])
}

// Write writes root's completion script for shell.
func Write(w io.Writer, root *cobra.Command, shell string) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return fmt.Errorf("no completion for shell %q", shell)
}
