package notify

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/secret"
)

func TestBindFlags(t *testing.T) {
	t.Setenv(EnvPassword, "from-env")
	var c Config
	fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
	c.BindFlags(fs)
	if c.TLS != TLSMandatory || c.Timeout != DefaultTimeout || c.Password.Reveal() != "from-env" ||
		c.MaxPerAccount != DefaultMaxPerAccount || c.MaxPerAddress != DefaultMaxPerAddress {
		t.Fatalf("defaults: %+v", c)
	}
	err := fs.Parse([]string{
		"--smtp-addr=mail.example.com:587", "--smtp-from", "Payouts <payouts@example.com>",
		"--smtp-tls=Opportunistic", "--smtp-username=svc", "--smtp-auth=login",
		"--smtp-helo=payoutd.example.com", "--smtp-timeout=3s",
		"--smtp-message-id-domain=mail.example.com", "--smtp-tls-ca-file=/etc/ca.pem",
		"--smtp-max-per-account=100", "--smtp-max-per-address=3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Addr: "mail.example.com:587", From: "Payouts <payouts@example.com>", TLS: TLSOpportunistic,
		TLSCAFile: "/etc/ca.pem", Username: "svc", Auth: AuthLogin, Password: secret.New("from-env"),
		HELO: "payoutd.example.com", Timeout: 3 * time.Second, MessageIDDomain: "mail.example.com",
		MaxPerAccount: 100, MaxPerAddress: 3,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", c, want)
	}
	if err := c.Resolve(); err != nil {
		t.Error(err)
	}

	for _, bad := range [][]string{{"--smtp-tls=sometimes"}, {"--smtp-auth=cram-md5"}} {
		fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		var c Config
		c.BindFlags(fs)
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestPasswordNeverPrinted: neither usage, nor fmt, nor JSON shows the password.
func TestPasswordNeverPrinted(t *testing.T) {
	const password = "hunter2-very-secret"
	t.Setenv(EnvPassword, password)
	var c Config
	fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	c.BindFlags(fs)
	fs.PrintDefaults()
	if c.Password.Reveal() != password {
		t.Fatal("the password was not taken from the environment")
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{
		"usage": usage.String(), "%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c),
		"%#v": fmt.Sprintf("%#v", c), "%s": fmt.Sprintf("%s", c.Password), "json": string(js),
	} {
		if strings.Contains(s, password) {
			t.Errorf("%s shows the password: %s", what, s)
		}
	}
	m, err := NewSMTP(Config{Addr: "127.0.0.1:25", From: "p@example.com", TLS: TLSNone, Username: "u", Password: secret.New(password)})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v", m, m); strings.Contains(s, password) {
		t.Errorf("the mailer prints the password: %s", s)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Config{Addr: "mail.example.com:587", From: "Payouts <payouts@example.com>"}
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string // "" means valid; else a part of the message
	}{
		{"minimal", func(*Config) {}, ""},
		{"not configured", func(c *Config) { *c = Config{} }, ""},
		{"not configured with a stray password", func(c *Config) { *c = Config{Password: secret.New("x"), PasswordFile: pwFile} }, "--smtp-password-file"},
		{"auth over tls", func(c *Config) { c.Username, c.PasswordFile = "svc", pwFile }, ""},
		{"auth in clear to loopback", func(c *Config) {
			c.Addr, c.TLS, c.Username, c.Password = "127.0.0.1:2525", TLSNone, "svc", secret.New("x")
		}, ""},
		{"no port", func(c *Config) { c.Addr = "mail.example.com" }, "--smtp-addr"},
		{"bad port", func(c *Config) { c.Addr = "mail.example.com:99999" }, "--smtp-addr"},
		{"no host", func(c *Config) { c.Addr = ":25" }, "--smtp-addr"},
		{"no from", func(c *Config) { c.From = "" }, "--smtp-from: is required"},
		{"bad from", func(c *Config) { c.From = "payouts at example" }, "--smtp-from"},
		{"bad tls", func(c *Config) { c.TLS = "sometimes" }, "--smtp-tls"},
		{"missing ca file", func(c *Config) { c.TLSCAFile = filepath.Join(dir, "nope.pem") }, "--smtp-tls-ca-file"},
		{"bad auth", func(c *Config) { c.Username, c.Password, c.Auth = "svc", secret.New("x"), "ntlm" }, "--smtp-auth"},
		{"user without password", func(c *Config) { c.Username = "svc" }, "--smtp-password"},
		{"password without user", func(c *Config) { c.Password = secret.New("x") }, "--smtp-username"},
		{"password twice", func(c *Config) { c.Username, c.Password, c.PasswordFile = "svc", secret.New("x"), pwFile }, "not both"},
		{"missing password file", func(c *Config) { c.Username, c.PasswordFile = "svc", filepath.Join(dir, "nope") }, "--smtp-password-file"},
		{"password in clear", func(c *Config) { c.TLS, c.Username, c.Password = TLSNone, "svc", secret.New("x") }, "--smtp-tls: none would send the SMTP password in clear"},
		{"bad helo", func(c *Config) { c.HELO = "my host" }, "--smtp-helo"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "--smtp-timeout"},
		{"bad message-id domain", func(c *Config) { c.MessageIDDomain = "a@b" }, "--smtp-message-id-domain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want an error naming %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}

	// Every problem is reported at once.
	err := Config{Addr: "nohost", From: "bad", TLS: "x"}.Validate()
	for _, f := range []string{"--smtp-addr", "--smtp-from", "--smtp-tls"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("joined error %v misses %s", err, f)
		}
	}
}

func TestMessageDomain(t *testing.T) {
	cases := []struct {
		c    Config
		want string
	}{
		{Config{From: "Payouts <payouts@pay.example.com>"}, "pay.example.com"},
		{Config{From: "payouts@pay.example.com", MessageIDDomain: "ids.example.com"}, "ids.example.com"},
		{Config{}, "localhost"},
	}
	for _, c := range cases {
		if got := c.c.MessageDomain(); got != c.want {
			t.Errorf("%+v: MessageDomain = %q, want %q", c.c, got, c.want)
		}
	}
}

func TestNewReadsPasswordFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewSMTP(Config{Addr: "mail.example.com:587", From: "p@example.com", Username: "svc", PasswordFile: pw})
	if err != nil {
		t.Fatal(err)
	}
	if m.password != "s3cret" || m.cfg.Auth != AuthPlain || m.cfg.TLS != TLSMandatory || m.cfg.Timeout != DefaultTimeout {
		t.Errorf("mailer %+v, password %q", m.cfg, m.password)
	}
	if err := os.WriteFile(pw, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSMTP(Config{Addr: "mail.example.com:587", From: "p@example.com", Username: "svc", PasswordFile: pw}); err == nil || !strings.Contains(err.Error(), "--smtp-password-file") {
		t.Errorf("an empty password file: %v", err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSMTP(Config{Addr: "mail.example.com:587", From: "p@example.com", TLSCAFile: ca}); err == nil || !strings.Contains(err.Error(), "--smtp-tls-ca-file") {
		t.Errorf("a CA file without certificates: %v", err)
	}
}
