// Package flagfile sets a program's flags from a YAML (or JSON) file, so that a deployment can
// keep its settings in a ConfigMap instead of a long argument list. The file's keys are the flag
// names; a nested mapping joins its keys with "-" (fiat: {url: ...} is --fiat-url), so related
// settings can be grouped; a list sets a repeatable flag once per item. Flags given on the
// command line are applied after the file, so they win (a repeatable flag adds to the file's).
//
// Every key must name a flag and every value must parse as that flag's: a bad file fails at start
// with a message that names the setting, rather than run with a setting silently ignored.
package flagfile

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Apply sets the flags of fs from the YAML or JSON document data; name is the file's name, for
// messages.
func Apply(fs *flag.FlagSet, name string, data []byte) error {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config %s: %w", name, err)
	}
	settings := map[string][]string{}
	if err := flatten("", doc, settings); err != nil {
		return fmt.Errorf("config %s: %w", name, err)
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		if fs.Lookup(k) == nil {
			errs = append(errs, fmt.Errorf("config %s: unknown setting %q (settings are the flags of --help)", name, k))
			continue
		}
		for _, v := range settings[k] {
			if err := fs.Set(k, v); err != nil {
				errs = append(errs, fmt.Errorf("config %s: setting %q: invalid value %q: %w", name, k, v, err))
			}
		}
	}
	return errors.Join(errs...)
}

// flatten turns the document into flag names and their values.
func flatten(prefix string, v any, out map[string][]string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == "" || strings.HasPrefix(k, "-") {
				return fmt.Errorf("setting %q: a key is a flag name without dashes", prefix+k)
			}
			name := k
			if prefix != "" {
				name = prefix + "-" + k
			}
			if err := flatten(name, sub, out); err != nil {
				return err
			}
		}
	case []any:
		for _, item := range v {
			s, err := scalar(prefix, item)
			if err != nil {
				return err
			}
			out[prefix] = append(out[prefix], s)
		}
	default:
		s, err := scalar(prefix, v)
		if err != nil {
			return err
		}
		out[prefix] = append(out[prefix], s)
	}
	return nil
}

func scalar(name string, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64: // YAML numbers arrive through JSON
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case nil:
		return "", fmt.Errorf("setting %q has no value", name)
	}
	return "", fmt.Errorf("setting %q: a value is a string, number or boolean, not %T", name, v)
}

// Path finds the value of the flag named flagName in args (-name v, --name v, --name=v) before
// the flags are parsed, so that the file can be applied first.
func Path(args []string, flagName string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, dash := range []string{"--", "-"} {
			switch {
			case a == dash+flagName && i+1 < len(args):
				return args[i+1]
			case strings.HasPrefix(a, dash+flagName+"="):
				return strings.TrimPrefix(a, dash+flagName+"=")
			}
		}
	}
	return ""
}

// Load applies the file named by the flag flagName in args to fs; no such flag, nothing to do.
func Load(fs *flag.FlagSet, args []string, flagName string) error {
	path := Path(args, flagName)
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagName, err)
	}
	return Apply(fs, path, data)
}
