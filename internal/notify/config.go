package notify

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/mail"
	"os"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/hostport"
	"github.com/stablepay/payout-operator/internal/secret"
)

// EnvPassword is the environment variable BindFlags takes the SMTP password from. The flag
// --smtp-password is refused: a command line is readable by every process of the machine.
const EnvPassword = "PAYOUT_SMTP_PASSWORD"

// DefaultTimeout bounds one message's whole delivery when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// TLSPolicy says how the connection to the SMTP server is protected.
type TLSPolicy string

const (
	// TLSMandatory: STARTTLS is required; a server without it is an error. The default.
	TLSMandatory TLSPolicy = "mandatory"
	// TLSOpportunistic: STARTTLS when the server offers it, plain text otherwise.
	TLSOpportunistic TLSPolicy = "opportunistic"
	// TLSImplicit: TLS from the first byte (SMTPS, usually port 465).
	TLSImplicit TLSPolicy = "implicit"
	// TLSNone: never TLS; for a server on loopback such as the local sink.
	TLSNone TLSPolicy = "none"
)

func (p TLSPolicy) valid() bool {
	switch p {
	case TLSMandatory, TLSOpportunistic, TLSImplicit, TLSNone:
		return true
	}
	return false
}

// AuthMechanism is the SASL mechanism used when a username is configured.
type AuthMechanism string

const (
	AuthPlain AuthMechanism = "plain"
	AuthLogin AuthMechanism = "login"
)

// Config is the SMTP notifier's configuration. The zero Config with only Addr empty means
// "mail not configured"; see New.
type Config struct {
	// Addr is the SMTP server as host:port. Empty: no mail is sent (New returns a mailer that
	// reports ErrNotConfigured).
	Addr string
	// From is the sender, an address with an optional display name:
	// "Payouts <payouts@example.com>".
	From string
	// TLS is the TLS policy; empty means TLSMandatory.
	TLS TLSPolicy
	// TLSCAFile is a PEM file of CA certificates to trust for the server instead of the
	// system's.
	TLSCAFile string
	// Username enables SMTP AUTH with Auth (PLAIN when empty). Credentials are only ever sent
	// over TLS, or to a server on loopback.
	Username string
	Auth     AuthMechanism
	// Password, or PasswordFile, a file whose content (without a trailing newline) is the
	// password. Set at most one of them.
	Password     secret.Value
	PasswordFile string
	// passwordFlag records that the refused --smtp-password was given.
	passwordFlag bool
	// HELO is the name announced in EHLO; empty means the host name.
	HELO string
	// Timeout bounds one message's whole delivery: connecting, TLS, authentication and the
	// SMTP conversation. Zero means DefaultTimeout.
	Timeout time.Duration
	// MessageIDDomain is the right-hand side of Message-IDs; empty means From's domain.
	MessageIDDomain string
	// MaxPerAccount and MaxPerAddress cap the mails of one account and to one address, each
	// an hour (Limits); zero means DefaultMaxPerAccount and DefaultMaxPerAddress.
	MaxPerAccount int
	MaxPerAddress int
}

// Flag names, used by BindFlags and in Validate's messages.
const (
	FlagAddr            = "smtp-addr"
	FlagFrom            = "smtp-from"
	FlagTLS             = "smtp-tls"
	FlagTLSCAFile       = "smtp-tls-ca-file"
	FlagUsername        = "smtp-username"
	FlagAuth            = "smtp-auth"
	FlagPassword        = "smtp-password"
	FlagPasswordFile    = "smtp-password-file"
	FlagHELO            = "smtp-helo"
	FlagTimeout         = "smtp-timeout"
	FlagMessageIDDomain = "smtp-message-id-domain"
	FlagMaxPerAccount   = "smtp-max-per-account"
	FlagMaxPerAddress   = "smtp-max-per-address"
)

// BindFlags registers the --smtp-* flags on fs, storing into c. The current values of c are
// the defaults. The password is taken from $PAYOUT_SMTP_PASSWORD now, unless c already has
// one, or from --smtp-password-file; --smtp-password is refused (Resolve).
func (c *Config) BindFlags(fs *flag.FlagSet) {
	if c.Password.IsZero() {
		c.Password = secret.New(os.Getenv(EnvPassword))
	}
	if c.TLS == "" {
		c.TLS = TLSMandatory
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	fs.StringVar(&c.Addr, FlagAddr, c.Addr, "SMTP server for customer e-mail notifications, host:port; empty: no e-mail is sent")
	fs.StringVar(&c.From, FlagFrom, c.From, `sender of notifications, e.g. "Payouts <payouts@example.com>"`)
	fs.Func(FlagTLS, "TLS toward the SMTP server: mandatory (STARTTLS required), opportunistic, implicit (SMTPS) or none (default "+string(c.TLS)+")", func(s string) error {
		p := TLSPolicy(strings.ToLower(strings.TrimSpace(s)))
		if !p.valid() {
			return fmt.Errorf("%q is not one of mandatory, opportunistic, implicit, none", s)
		}
		c.TLS = p
		return nil
	})
	fs.StringVar(&c.TLSCAFile, FlagTLSCAFile, c.TLSCAFile, "PEM file of CA certificates to trust for the SMTP server (default: the system's)")
	fs.StringVar(&c.Username, FlagUsername, c.Username, "SMTP AUTH username; empty: no authentication")
	fs.Func(FlagAuth, "SMTP AUTH mechanism when --smtp-username is set: plain or login (default plain)", func(s string) error {
		a := AuthMechanism(strings.ToLower(strings.TrimSpace(s)))
		if a != AuthPlain && a != AuthLogin {
			return fmt.Errorf("%q is not one of plain, login", s)
		}
		c.Auth = a
		return nil
	})
	secret.Refuse(fs, FlagPassword, passwordInstead, &c.passwordFlag)
	fs.StringVar(&c.PasswordFile, FlagPasswordFile, c.PasswordFile, "file holding the SMTP AUTH password, e.g. a mounted Secret")
	fs.StringVar(&c.HELO, FlagHELO, c.HELO, "name announced in EHLO (default: the host name)")
	fs.DurationVar(&c.Timeout, FlagTimeout, c.Timeout, "bound of one message's whole delivery to the SMTP server")
	fs.StringVar(&c.MessageIDDomain, FlagMessageIDDomain, c.MessageIDDomain, "right-hand side of Message-IDs (default: the domain of --smtp-from)")
	if c.MaxPerAccount == 0 {
		c.MaxPerAccount = DefaultMaxPerAccount
	}
	if c.MaxPerAddress == 0 {
		c.MaxPerAddress = DefaultMaxPerAddress
	}
	fs.IntVar(&c.MaxPerAccount, FlagMaxPerAccount, c.MaxPerAccount, "outcome e-mails one account's transfers may cause an hour; more are not sent (recorded refused)")
	fs.IntVar(&c.MaxPerAddress, FlagMaxPerAddress, c.MaxPerAddress, "outcome e-mails one address may be sent an hour; more are not sent (recorded refused)")
}

// Limits is the mail limits of this configuration (NewLimits), with the defaults for unset
// caps.
func (c Config) Limits() *Limits {
	perAccount, perAddress := c.MaxPerAccount, c.MaxPerAddress
	if perAccount == 0 {
		perAccount = DefaultMaxPerAccount
	}
	if perAddress == 0 {
		perAddress = DefaultMaxPerAddress
	}
	return NewLimits(perAccount, perAddress, nil)
}

// passwordInstead says where the SMTP password goes instead of --smtp-password.
const passwordInstead = "give the SMTP AUTH password in a file named by --" + FlagPasswordFile + " (a mounted Secret) or in the environment variable " + EnvPassword

// Resolve refuses the password given as the flag --smtp-password (or in the settings file).
func (c Config) Resolve() error {
	if c.passwordFlag {
		return secret.Refused(FlagPassword, passwordInstead)
	}
	return nil
}

// Configured reports whether an SMTP server is set.
func (c Config) Configured() bool { return c.Addr != "" }

// Validate checks the configuration and names every bad setting by its flag. A Config without
// Addr is valid (mail is not configured) as long as nothing else contradicts it.
func (c Config) Validate() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if !c.Password.IsZero() && c.PasswordFile != "" {
		bad(FlagPasswordFile, "set either %s or --%s, not both", EnvPassword, FlagPasswordFile)
	}
	if !c.Configured() {
		return errors.Join(errs...)
	}

	if err := hostport.Check(c.Addr); err != nil {
		bad(FlagAddr, "%v", err)
	}
	host, _, addrErr := net.SplitHostPort(c.Addr) // for the clear-text check below

	if c.From == "" {
		bad(FlagFrom, "is required when --%s is set", FlagAddr)
	} else if _, err := mail.ParseAddress(c.From); err != nil {
		bad(FlagFrom, "%q is not an e-mail address such as \"Payouts <payouts@example.com>\" (%v)", c.From, err)
	}

	if c.TLS != "" && !c.TLS.valid() {
		bad(FlagTLS, "%q is not one of mandatory, opportunistic, implicit, none", c.TLS)
	}
	if c.TLSCAFile != "" {
		if _, err := os.Stat(c.TLSCAFile); err != nil {
			bad(FlagTLSCAFile, "%v", err)
		}
	}

	if c.Auth != "" && c.Auth != AuthPlain && c.Auth != AuthLogin {
		bad(FlagAuth, "%q is not one of plain, login", c.Auth)
	}
	hasPassword := !c.Password.IsZero() || c.PasswordFile != ""
	switch {
	case c.Username == "" && hasPassword:
		bad(FlagUsername, "is required when a password is set")
	case c.Username != "" && !hasPassword:
		bad(FlagPasswordFile, "a password is required with --%s: set --%s or %s", FlagUsername, FlagPasswordFile, EnvPassword)
	case c.Username != "" && c.TLS == TLSNone && addrErr == nil && !isLoopbackHost(host):
		bad(FlagTLS, "none would send the SMTP password in clear to %s; use mandatory or implicit", host)
	}
	if c.PasswordFile != "" {
		if _, err := os.Stat(c.PasswordFile); err != nil {
			bad(FlagPasswordFile, "%v", err)
		}
	}

	if strings.ContainsFunc(c.HELO, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		bad(FlagHELO, "%q must be a host name without spaces", c.HELO)
	}
	if c.Timeout < 0 {
		bad(FlagTimeout, "%v must be positive", c.Timeout)
	}
	if c.MaxPerAccount < 0 {
		bad(FlagMaxPerAccount, "%d must be positive", c.MaxPerAccount)
	}
	if c.MaxPerAddress < 0 {
		bad(FlagMaxPerAddress, "%d must be positive", c.MaxPerAddress)
	}
	if c.MessageIDDomain != "" {
		if err := checkDomain(c.MessageIDDomain); err != nil {
			bad(FlagMessageIDDomain, "%q is not a domain", c.MessageIDDomain)
		}
	}
	return errors.Join(errs...)
}

// MessageDomain is the right-hand side of the Message-IDs of this configuration:
// MessageIDDomain, else the domain of From, else "localhost".
func (c Config) MessageDomain() string {
	if c.MessageIDDomain != "" {
		return c.MessageIDDomain
	}
	if a, err := mail.ParseAddress(c.From); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && checkDomain(d) == nil {
			return d
		}
	}
	return "localhost"
}

// isLoopbackHost matches the hosts go-mail sends credentials to without TLS.
func isLoopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}
