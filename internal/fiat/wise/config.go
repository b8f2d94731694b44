package wise

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/secret"
)

// TokenEnv is the environment variable Resolve reads the token from when no --fiat-token-file
// names a file. There is no token flag: a command line is readable by every process.
const TokenEnv = "PAYOUT_FIAT_TOKEN"

// Config is how to reach the payout API.
type Config struct {
	// BaseURL of the API, e.g. https://api.wise.com or the simulated bank's URL. Plain http is
	// accepted for a loopback host only.
	BaseURL string
	// ProfileID is the Wise profile that quotes, owns and funds the payouts.
	ProfileID int64
	// Token is the bearer token.
	Token secret.Value
	// TokenSource is where Resolve takes Token from (--fiat-token-file or TokenEnv). Not a
	// setting of its own.
	TokenSource secret.Setting
	// Timeout bounds each HTTP call; default 10 s.
	Timeout time.Duration
	// Retries is how many times a call that failed transiently is repeated within one
	// operation, with exponential backoff from RetryBackoff; default 3. The caller's own
	// requeue is the outer retry.
	Retries      int
	RetryBackoff time.Duration
	// OmitRate stops sending the quoted rate with each quote request. The rate is an extension
	// the simulated bank honours; set OmitRate against a provider that sets its own rate.
	OmitRate bool
	// Name is the provider's name in transfers' status; default "wise".
	Name string
	// ReturnWindow is how long after a payout was sent (outgoing_payment_sent) the recipient's
	// bank may still return it: the transfer controller asks about a completed payout, rarely,
	// until then. Default DefaultReturnWindow; 0 stops asking.
	ReturnWindow time.Duration
	// HTTPClient sends the calls; default a client of its own. Not a flag.
	HTTPClient *http.Client
}

// DefaultReturnWindow is six weeks: Wise documents that most bounce-backs come within 2-3
// business days "however, they can happen up to several weeks after a transfer is sent"
// (docs.wise.com, "Tracking transfers"), as outgoing_payment_sent ⇒ bounced_back ⇒ processing ⇒
// cancelled ⇒ funds_refunded.
const DefaultReturnWindow = 42 * 24 * time.Hour

// maxReturnWindow bounds the setting: a SEPA recall for fraud may come 13 months after the
// payment, the longest return any corridor here knows.
const maxReturnWindow = 400 * 24 * time.Hour

// DefaultConfig returns the defaults of every setting but BaseURL, ProfileID and Token.
func DefaultConfig() Config {
	return Config{Timeout: 10 * time.Second, Retries: 3, RetryBackoff: 250 * time.Millisecond, Name: "wise", ReturnWindow: DefaultReturnWindow,
		TokenSource: secret.Setting{Name: "fiat-token", Env: TokenEnv}}
}

// BindFlags registers the settings on fs, with c's current values as defaults:
// --fiat-url, --fiat-profile-id, --fiat-token-file (and --fiat-token, refused), --fiat-timeout, --fiat-retries,
// --fiat-retry-backoff, --fiat-omit-rate, --fiat-provider-name, --fiat-return-window.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.BaseURL, "fiat-url", c.BaseURL, "base URL of the Wise-style payout API (the simulated bank under make run)")
	fs.Int64Var(&c.ProfileID, "fiat-profile-id", c.ProfileID, "profile id at the payout provider that quotes, owns and funds the payouts")
	c.TokenSource.BindFlags(fs, "bearer token of the payout API")
	fs.DurationVar(&c.Timeout, "fiat-timeout", c.Timeout, "deadline of each HTTP call to the payout API")
	fs.IntVar(&c.Retries, "fiat-retries", c.Retries, "repeats of a payout API call that failed transiently, within one operation")
	fs.DurationVar(&c.RetryBackoff, "fiat-retry-backoff", c.RetryBackoff, "pause before the first repeat; it doubles after each")
	fs.BoolVar(&c.OmitRate, "fiat-omit-rate", c.OmitRate, "do not send the quoted rate with quote requests (a simulated-bank extension)")
	fs.StringVar(&c.Name, "fiat-provider-name", c.Name, "name of the payout provider recorded on transfers")
	fs.DurationVar(&c.ReturnWindow, "fiat-return-window", c.ReturnWindow, "how long after a payout was sent the recipient's bank may still return it; completed payouts are asked about, rarely, until then (0: never)")
}

// Resolve fills an empty Token from TokenSource: --fiat-token-file, else TokenEnv; the flag
// form --fiat-token is refused.
func (c *Config) Resolve() error {
	if err := c.TokenSource.Resolve(); err != nil {
		return err
	}
	if c.Token.IsZero() {
		c.Token = c.TokenSource.Value
	}
	return nil
}

var providerName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// Validate reports every bad setting, each message naming the setting and its flag.
func (c Config) Validate() error {
	var errs []error
	bad := func(setting, flagName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("fiat %s (--%s): %s", setting, flagName, fmt.Sprintf(format, args...)))
	}
	if err := checkBaseURL(c.BaseURL); err != nil {
		bad("BaseURL", "fiat-url", "%v", err)
	}
	if c.ProfileID <= 0 {
		bad("ProfileID", "fiat-profile-id", "must be a positive profile id")
	}
	switch {
	case c.Token.IsZero():
		bad("Token", "fiat-token-file", "is required (or set %s)", TokenEnv)
	case strings.ContainsFunc(c.Token.Reveal(), func(r rune) bool { return r <= ' ' || r == 0x7f }):
		bad("Token", "fiat-token-file", "contains spaces or control characters")
	}
	if c.Timeout <= 0 || c.Timeout > 5*time.Minute {
		bad("Timeout", "fiat-timeout", "must be between 0 and 5m, not %s", c.Timeout)
	}
	if c.Retries < 0 || c.Retries > 10 {
		bad("Retries", "fiat-retries", "must be between 0 and 10, not %d", c.Retries)
	}
	if c.Retries > 0 && (c.RetryBackoff <= 0 || c.RetryBackoff > time.Minute) {
		bad("RetryBackoff", "fiat-retry-backoff", "must be between 0 and 1m, not %s", c.RetryBackoff)
	}
	if c.ReturnWindow < 0 || c.ReturnWindow > maxReturnWindow {
		bad("ReturnWindow", "fiat-return-window", "must be between 0 and %s, not %s", maxReturnWindow, c.ReturnWindow)
	}
	if c.Name != "" && !providerName.MatchString(c.Name) {
		bad("Name", "fiat-provider-name", "%q must be lower-case letters, digits and hyphens, at most 32", c.Name)
	}
	return errors.Join(errs...)
}

func checkBaseURL(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", s)
	}
	switch {
	case u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return fmt.Errorf("%q must be an absolute http or https URL", s)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q must not carry credentials, a query or a fragment", s)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("%q sends the token in clear; plain http is for a loopback host only", s)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
