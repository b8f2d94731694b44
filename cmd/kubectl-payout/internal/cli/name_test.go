package cli

import (
	"strings"
	"testing"
)

func TestDisplayName(t *testing.T) {
	for argv0, want := range map[string]string{
		"/usr/local/bin/kubectl-payout": "kubectl payout",
		"kubectl-payout":                "kubectl payout",
		"kubectl-payout.exe":            "kubectl payout",
		"/tmp/kubectl-payout_admin":     "kubectl payout-admin",
		"/tmp/kubectl-payout-admin":     "kubectl payout admin",
		"/tmp/go-build123/payout":       "payout",
		"kubectl-":                      "kubectl-",
	} {
		if got := DisplayName(argv0); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", argv0, got, want)
		}
	}
}

func TestArgs(t *testing.T) {
	for _, c := range []struct {
		argv0 string
		args  []string
		want  string
	}{
		{"/usr/local/bin/kubectl-payout", []string{"get", "transfers"}, "get transfers"},
		{"/usr/local/bin/kubectl_complete-payout", []string{"describe", "transfer", ""}, "__complete describe transfer "},
		{"kubectl_complete-payout.exe", nil, "__complete"},
	} {
		if got := strings.Join(Args(c.argv0, c.args), " "); got != c.want {
			t.Errorf("Args(%q, %q) = %q, want %q", c.argv0, c.args, got, c.want)
		}
	}
}
