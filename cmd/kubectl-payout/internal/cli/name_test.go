package cli

import "testing"

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
