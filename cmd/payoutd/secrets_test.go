package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// secretFlags are payoutd's secrets, each with the environment variable that may carry it.
var secretFlags = map[string]string{
	"kyc-token": "PAYOUT_KYC_TOKEN", "risk-token": "PAYOUT_RISK_TOKEN", "fiat-token": "PAYOUT_FIAT_TOKEN",
	"smtp-password": "PAYOUT_SMTP_PASSWORD", "archive-dsn": "PAYOUT_ARCHIVE_DSN",
}

// A secret given as a flag, on the command line or in the settings file, is refused with a
// message that says where it goes instead, and that message never holds the secret.
func TestSecretFlagsAreRefused(t *testing.T) {
	for name, env := range secretFlags {
		value := "s3cret-of-" + name
		settings := filepath.Join(t.TempDir(), "payoutd.yaml")
		if err := os.WriteFile(settings, []byte(name+": "+value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for how, args := range map[string][]string{
			"--name=value":    {"--api=false", "--" + name + "=" + value},
			"--name value":    {"--api=false", "--" + name, value},
			"settings file":   {"--api=false", "--config", settings},
			"with the facade": {"--controllers=false", "--" + name + "=" + value},
		} {
			_, err := parseFlags(args)
			if err == nil {
				t.Errorf("--%s (%s) accepted", name, how)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "--"+name+": a secret is not taken from the command line") || !strings.Contains(msg, env) {
				t.Errorf("--%s (%s): %q does not refuse it and name %s", name, how, msg, env)
			}
			if strings.Contains(msg, value) {
				t.Errorf("--%s (%s): the refusal shows the secret: %q", name, how, msg)
			}
		}
	}
}

// Secrets taken from files and the environment never print: not in a dump of the flags, not in
// the options printed by fmt, JSON or a logger (zap, as payoutd logs, and slog).
func TestSecretsNeverPrint(t *testing.T) {
	values := map[string]string{}
	for name, env := range secretFlags {
		values[name] = "s3cret-of-" + name
		t.Setenv(env, values[name])
	}
	// the risk token and the SMTP password from files, the others from the environment
	dir := t.TempDir()
	args := []string{"--fiat-url=http://127.0.0.1:9", "--fiat-profile-id=1", "--smtp-addr=127.0.0.1:25",
		"--smtp-from=p@example.com", "--smtp-tls=none", "--smtp-username=svc", "--trusted-proxies=none"}
	for _, name := range []string{"risk-token", "smtp-password"} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(values[name]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv(secretFlags[name], "")
		args = append(args, "--"+name+"-file="+file)
	}
	o, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	// they were read
	if o.kycToken.Value.Reveal() != values["kyc-token"] || o.riskToken.Value.Reveal() != values["risk-token"] ||
		o.fiat.Token.Reveal() != values["fiat-token"] || o.archive.DSN.Reveal() != values["archive-dsn"] {
		t.Fatalf("secrets not read: kyc %q, risk %q, fiat %q, archive %q", o.kycToken.Value.Reveal(), o.riskToken.Value.Reveal(),
			o.fiat.Token.Reveal(), o.archive.DSN.Reveal())
	}

	var dump bytes.Buffer
	fs := newFlagSet(o)
	fs.VisitAll(func(f *flag.Flag) { fmt.Fprintf(&dump, "--%s=%s\n", f.Name, f.Value) })
	fs.SetOutput(&dump)
	fs.PrintDefaults()
	js, err := json.Marshal(map[string]any{"fiat": o.fiat, "mail": o.mail, "archive": o.archive, "kyc": o.kycToken, "risk": o.riskToken})
	if err != nil {
		t.Fatal(err)
	}
	var zapped, slogged bytes.Buffer
	log := zap.New(zap.WriteTo(&zapped))
	log.Info("settings", "fiat", o.fiat, "mail", o.mail, "archive", o.archive, "kycToken", o.kycToken.Value, "risk", o.riskToken)
	slog.New(slog.NewJSONHandler(&slogged, nil)).Info("settings", "fiat", o.fiat, "kycToken", o.kycToken.Value, "archive", o.archive.DSN)
	printed := map[string]string{
		"flag dump": dump.String(), "json": string(js), "zap": zapped.String(), "slog": slogged.String(),
		"%v": fmt.Sprintf("%v", *o), "%+v": fmt.Sprintf("%+v", *o), "%#v": fmt.Sprintf("%#v", *o),
		"%s of a token": fmt.Sprintf("%s %q %x", o.fiat.Token, o.fiat.Token, o.fiat.Token),
	}
	for what, text := range printed {
		for name, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s shows the %s: %s", what, name, text)
			}
		}
	}
	if !strings.Contains(zapped.String(), "[redacted]") || !strings.Contains(slogged.String(), "[redacted]") {
		t.Errorf("the loggers do not show a secret as [redacted]: %s %s", zapped.String(), slogged.String())
	}
}
