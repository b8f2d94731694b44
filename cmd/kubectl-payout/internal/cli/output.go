package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats, as kubectl names them.
const (
	// OutputText is the default: a table, or a description.
	OutputText = ""
	// OutputWide is a table with more columns.
	OutputWide = "wide"
	OutputJSON = "json"
	OutputYAML = "yaml"
)

// AddOutputFlag registers -o/--output on cmd, storing into format, with the formats it takes
// (besides the default) for --help and shell completion.
func AddOutputFlag(cmd *cobra.Command, format *string, formats ...string) {
	cmd.Flags().StringVarP(format, "output", "o", OutputText, "output format: "+strings.Join(formats, ", ")+" (default: text)")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
}

// ValidateOutput refuses a format that is not one of formats (or the default).
func ValidateOutput(format string, formats ...string) error {
	if format == OutputText || slices.Contains(formats, format) {
		return nil
	}
	return UsageErrorf("--output %q is not one of %s", format, strings.Join(formats, ", "))
}

// PrintStructured writes v as indented JSON or as YAML, the way kubectl prints objects.
func PrintStructured(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	switch format {
	case OutputJSON:
		_, err = fmt.Fprintf(w, "%s\n", data)
	case OutputYAML:
		var y []byte
		if y, err = yaml.JSONToYAML(data); err == nil {
			_, err = w.Write(y)
		}
	default:
		err = fmt.Errorf("no structured output %q", format)
	}
	return err
}
