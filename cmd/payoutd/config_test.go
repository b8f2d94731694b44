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
