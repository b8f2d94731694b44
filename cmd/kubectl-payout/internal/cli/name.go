package cli

import (
	"path/filepath"
	"strings"
)

// DisplayName is how help and usage name the program invoked as argv0. kubectl runs a plugin
// by its file name, kubectl-payout, while users type `kubectl payout`, so that is what help
// shows. Any other name (a renamed binary, `go run`) is shown as it is.
func DisplayName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	plugin, ok := strings.CutPrefix(base, "kubectl-")
	if !ok || plugin == "" {
		return base
	}
	// kubectl's plugin naming: a dash in the file name separates words of the command, an
	// underscore stands for a dash within a word.
	plugin = strings.ReplaceAll(plugin, "-", " ")
	return "kubectl " + strings.ReplaceAll(plugin, "_", "-")
}

// Args are the arguments the command tree runs on. Invoked as kubectl_complete-payout (a link
// to this binary), the program answers kubectl's completion requests for `kubectl payout`:
// kubectl (1.26 and later) runs that executable with the words typed after `kubectl payout`
// and reads cobra's __complete answer.
func Args(argv0 string, args []string) []string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if strings.HasPrefix(base, "kubectl_complete-") {
		return append([]string{"__complete"}, args...)
	}
	return args
}
