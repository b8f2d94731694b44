// Package secret holds credentials (bearer tokens, passwords, DSNs) so that they never print:
// a Value shows "[redacted]" to fmt (every verb, %#v too), encoding/json, YAML, log/slog and
// logr/zap, also as an unexported field of a struct printed with %+v. A Setting takes a
// secret from a file or an environment variable only: its flag form is refused, since a
// command line is readable by every process of the machine and lands in shell histories,
// process listings and pod specs.
package secret

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/stablepay/payout-operator/internal/secretfile"
)

// Redacted is what a Value prints instead of itself.
const Redacted = "[redacted]"

// Value is a secret. Its zero value is no secret. The text sits behind a pointer: fmt prints a
// pointer held in an unexported field as an address, so even a struct that fmt cannot call
// methods of shows no secret.
type Value struct{ p *string }

// New is a Value holding s; an empty s is no secret.
func New(s string) Value {
	if s == "" {
		return Value{}
	}
	return Value{p: &s}
}

// Reveal is the secret itself, for the one place that sends it (an Authorization header, a
// connection's password).
func (v Value) Reveal() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

// IsZero reports whether there is no secret.
func (v Value) IsZero() bool { return v.p == nil }

// String is Redacted, or "" for no secret.
func (v Value) String() string {
	if v.IsZero() {
		return ""
	}
	return Redacted
}

// Format prints String for every verb, so that %x, %q or %#v reveal nothing either.
func (v Value) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(v.String())) }

// GoString is String, for callers of GoString itself.
func (v Value) GoString() string { return v.String() }

// MarshalText keeps encoding/json, YAML and zap's reflection from printing the secret.
func (v Value) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// LogValue keeps log/slog from printing the secret.
func (v Value) LogValue() slog.Value { return slog.StringValue(v.String()) }

// Refuse registers --name on fs as a flag that is refused: a secret is never taken from a
// command line or the settings file. Its value is dropped unseen and *given set, so that the
// flag package's and the settings file's messages, which quote a bad value, never show it; the
// caller reports Refused(name, ...) once the flags are parsed. instead says where the secret
// goes instead (a file flag, an environment variable).
func Refuse(fs *flag.FlagSet, name, instead string, given *bool) {
	fs.Func(name, "refused: a secret is never taken from the command line or the settings file; "+instead,
		func(string) error { *given = true; return nil })
}

// Refused is the error for a secret given as the flag --name.
func Refused(name, instead string) error {
	return fmt.Errorf("--%s: a secret is not taken from the command line or the settings file, where every process of the machine can read it: %s", name, instead)
}

// Setting is a secret that payoutd takes from a file (--NAME-file, e.g. a mounted Kubernetes
// Secret) or from an environment variable, and never from the flag --NAME, which exists only
// to be refused with a message that says where the secret goes instead.
type Setting struct {
	// Name is the refused flag's name, e.g. "kyc-token"; the file flag is Name + "-file".
	Name string
	// Env is the environment variable read when no file is named.
	Env string
	// File is the file named by --NAME-file.
	File string
	// Value is the secret, once Resolve has read it.
	Value Value
	// given records that --NAME was used (in the arguments or the settings file).
	given bool
}

// BindFlags registers --NAME-file and the refused --NAME on fs; what says what the secret is.
func (s *Setting) BindFlags(fs *flag.FlagSet, what string) {
	fs.StringVar(&s.File, s.Name+"-file", s.File, fmt.Sprintf("file holding the %s, e.g. a mounted Secret (or env %s)", what, s.Env))
	Refuse(fs, s.Name, s.instead(what), &s.given)
}

func (s *Setting) instead(what string) string {
	return fmt.Sprintf("give the %s in a file named by --%s-file (a mounted Secret) or in the environment variable %s", what, s.Name, s.Env)
}

// Resolve refuses the flag form and reads the secret from the file, else the environment.
// Neither: Value stays zero (whether the secret is needed is for its user to say).
func (s *Setting) Resolve() error {
	if s.given {
		return Refused(s.Name, s.instead("secret"))
	}
	env := os.Getenv(s.Env)
	switch {
	case s.File != "" && env != "":
		return fmt.Errorf("--%s-file: set either --%s-file or %s, not both", s.Name, s.Name, s.Env)
	case s.File != "":
		v, err := secretfile.Read(s.File)
		if err != nil {
			return fmt.Errorf("--%s-file: %w", s.Name, err)
		}
		s.Value = New(v)
	default:
		s.Value = New(env)
	}
	return nil
}
