package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The sample configuration file is valid, and its settings reach payoutd's options.
func TestConfigFileSample(t *testing.T) {
	t.Setenv("PAYOUT_FIAT_TOKEN", "sample")
	password := filepath.Join(t.TempDir(), "password") // the sample's is a mounted Secret
	if err := os.WriteFile(password, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--config", "../../config/samples/payoutd.yaml", "--transfer-workers", "4", "--smtp-password-file", password})
	if err != nil {
		t.Fatal(err)
	}
	if !o.leaderElect || o.leaseDuration != 15*time.Second || o.fiat.BaseURL != "https://api.bank.example" ||
		o.mail.Addr != "smtp.example.com:587" || o.transferExpiry != 24*time.Hour || o.chains.File != "/etc/payout/chains.yaml" ||
		o.sanctionsURL != "https://www.treasury.gov/ofac/downloads/" || o.sanctionsMaxAge != 7*24*time.Hour {
		t.Errorf("settings not applied: %+v", o)
	}
	if o.transferWorkers != 4 {
		t.Errorf("the command line wins: transfer-workers %d", o.transferWorkers)
	}
}

// A bad file stops payoutd at start with a message that names the setting.
func TestConfigFileErrors(t *testing.T) {
	t.Setenv("PAYOUT_FIAT_TOKEN", "sample")
	dir := t.TempDir()
	for doc, want := range map[string]string{
		"fiat: {urls: x}\n":           `unknown setting "fiat-urls"`,
		"transfer-expiry: tomorrow\n": `setting "transfer-expiry": invalid value "tomorrow"`,
		"transfer-expiry: 30s\n":      `--transfer-expiry: 30s is shorter than a minute`,
		"leader-elect-lease-duration: 5s\nleader-elect-renew-deadline: 10s\n": "--leader-elect-lease-duration (5s) > --leader-elect-renew-deadline (10s)",
		"sanctions-url: https://x.example/\nsanctions-dir: /data\n":           "set one source of the sanctions list, not both",
		"sanctions-consolidated-url: https://x.example/c/\n":                  "--sanctions-consolidated-url needs --sanctions-url",
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parseFlags([]string{"--config=" + path})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	if _, err := parseFlags([]string{"--config", filepath.Join(dir, "missing.yaml")}); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestTrustedProxiesRequired (issue 25 item 3): a facade that listens beyond loopback does not
// start without --trusted-proxies (CIDRs, or none); on loopback, as make run and the tests
// listen, it starts without.
func TestTrustedProxiesRequired(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		refused string // "" when payoutd starts
		proxies int
	}{
		{[]string{}, "--trusted-proxies: the facade listens on :8080, beyond loopback", 0},
		{[]string{"--api-bind-address", "0.0.0.0:8080"}, "beyond loopback", 0},
		{[]string{"--api-bind-address", "[::]:8080"}, "beyond loopback", 0},
		{[]string{"--api-bind-address", "payout.example:8080"}, "beyond loopback", 0},
		{[]string{"--trusted-proxies", "none"}, "", 0},
		{[]string{"--trusted-proxies", "10.0.0.0/8, 192.168.1.1"}, "", 2},
		{[]string{"--trusted-proxies", "none,10.0.0.0/8"}, "CIDRs separated by commas, or none", 0},
		{[]string{"--trusted-proxies", "ingress"}, "--trusted-proxies", 0},
		{[]string{"--api-bind-address", "127.0.0.1:0"}, "", 0},
		{[]string{"--api-bind-address", "[::1]:8080"}, "", 0},
		{[]string{"--api-bind-address", "localhost:8080"}, "", 0},
		// the controllers alone serve no facade
		{[]string{"--api=false", "--controllers", "--fiat-url", "https://bank.invalid", "--fiat-profile-id", "1"}, "", 0},
	} {
		t.Setenv("PAYOUT_FIAT_TOKEN", "test")
		args := append([]string{"--controllers=false"}, tc.args...)
		o, err := parseFlags(args)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%v: refused: %v", tc.args, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%v: %v, want refused with %q", tc.args, err, tc.refused)
		case err == nil && len(o.proxies) != tc.proxies:
			t.Errorf("%v: %d trusted proxies, want %d", tc.args, len(o.proxies), tc.proxies)
		}
	}
}

// TestDeploymentTrustedProxies: the deployment's facade (config/manager: --api-bind-address=:8080,
// --trusted-proxies from TRUSTED_PROXIES of payoutd.env) starts: the setting is not left empty.
func TestDeploymentTrustedProxies(t *testing.T) {
	env, err := os.ReadFile("../../config/manager/payoutd.env")
	if err != nil {
		t.Fatal(err)
	}
	var value string
	found := false
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "TRUSTED_PROXIES="); ok {
			value, found = v, true
		}
	}
	if !found {
		t.Fatal("config/manager/payoutd.env has no TRUSTED_PROXIES")
	}
	if _, err := parseFlags([]string{"--controllers=false", "--api-bind-address=:8080", "--trusted-proxies=" + value}); err != nil {
		t.Errorf("the deployment's facade would not start: %v", err)
	}
}

// TestSweeperRunsAlone: --sweeper starts only without the controllers and the facade, so that no
// process that serves callers or talks to the bank holds the deposit master key, and with the
// gas wallet's key file and a sane schedule.
func TestSweeperRunsAlone(t *testing.T) {
	alone := []string{"--sweeper", "--controllers=false", "--api=false", "--sweeper-gas-key-file", "/run/gas"}
	for _, tc := range []struct {
		args    []string
		refused string // "" when payoutd starts
	}{
		{alone, ""},
		{[]string{"--sweeper", "--api=false", "--sweeper-gas-key-file", "/run/gas"}, "--sweeper runs alone"},
		{[]string{"--sweeper", "--controllers=false", "--trusted-proxies", "none", "--sweeper-gas-key-file", "/run/gas"}, "--sweeper runs alone"},
		{[]string{"--sweeper", "--controllers=false", "--api=false"}, "--sweeper needs --sweeper-gas-key-file"},
		{append(alone, "--sweep-max-batch", "65"), "--sweep-max-batch"},
		{append(alone, "--sweep-threshold", "1.5"), "--sweep-threshold"},
		{append(alone, "--sweep-threshold", "0"), "--sweep-threshold"},
		{[]string{"--controllers=false", "--api=false"}, "nothing to run"},
	} {
		_, err := parseFlags(tc.args)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%v: refused: %v", tc.args, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%v: %v, want refused with %q", tc.args, err, tc.refused)
		}
	}
}
