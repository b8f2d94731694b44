package sharedlimits

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/hostport"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/secretfile"
)

// EnvPassword is the environment variable BindFlags takes the Redis password from. There is no
// password flag: a command line is readable by every process of the machine.
const EnvPassword = "PAYOUT_LIMITS_REDIS_PASSWORD"

// Defaults of the timeouts. The store is on the request path of every API call, so a slow
// store costs every caller: a call that takes longer than Timeout fails, the replica counts on
// its own for Backoff, and then tries the store again with one request.
const (
	DefaultKeyPrefix   = "payout:limits:"
	DefaultDialTimeout = 500 * time.Millisecond
	DefaultTimeout     = 200 * time.Millisecond
	DefaultBackoff     = 2 * time.Second
)

// Flag names, used by BindFlags and in Validate's messages.
const (
	FlagAddr          = "limits-redis-addr"
	FlagUsername      = "limits-redis-username"
	FlagPasswordFile  = "limits-redis-password-file"
	FlagDB            = "limits-redis-db"
	FlagTLS           = "limits-redis-tls"
	FlagTLSCAFile     = "limits-redis-tls-ca-file"
	FlagTLSServerName = "limits-redis-tls-server-name"
	FlagKeyPrefix     = "limits-redis-key-prefix"
	FlagDialTimeout   = "limits-redis-dial-timeout"
	FlagTimeout       = "limits-redis-timeout"
	FlagBackoff       = "limits-redis-backoff"
)

// Config is where the facade replicas keep the counts they share: a Redis server. The zero
// Config (no Addr) means no shared store: each replica counts in its own memory.
type Config struct {
	// Addr is the Redis server, host:port. Empty: the limits are counted per replica.
	Addr string
	// Username is the ACL user (Redis 6+); empty: the default user.
	Username string
	// Password, or PasswordFile, a file whose content (without a trailing newline) is the
	// password. Set at most one of them.
	Password     secret.Value
	PasswordFile string
	// DB is the database number.
	DB int
	// TLS connects with TLS, verifying the server against TLSCAFile (default: the system's
	// roots) under TLSServerName (default: the host of Addr).
	TLS           bool
	TLSCAFile     string
	TLSServerName string
	// KeyPrefix starts every key the limits write, so that several services or environments
	// can share one Redis. Empty means DefaultKeyPrefix.
	KeyPrefix string
	// DialTimeout bounds connecting; Timeout bounds one command (and the wait for a pooled
	// connection). Zero means the defaults.
	DialTimeout time.Duration
	Timeout     time.Duration
	// Backoff is how long a replica counts on its own after the store failed, before it tries
	// the store again. Zero means DefaultBackoff.
	Backoff time.Duration
}

// BindFlags registers the --limits-redis-* flags on fs, storing into c. The current values of
// c are the defaults. The password is taken from $PAYOUT_LIMITS_REDIS_PASSWORD now, unless c
// already has one; --limits-redis-password-file is the other way to give it.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	if c.Password.IsZero() {
		c.Password = secret.New(os.Getenv(EnvPassword))
	}
	d := c.withDefaults() // the defaults --help shows
	c.KeyPrefix, c.DialTimeout, c.Timeout, c.Backoff = d.KeyPrefix, d.DialTimeout, d.Timeout, d.Backoff
	fs.StringVar(&c.Addr, FlagAddr, c.Addr, "Redis server (host:port) where the facade replicas share the per-key rate limits and the per-address authentication-failure limits; empty: each replica counts on its own")
	fs.StringVar(&c.Username, FlagUsername, c.Username, "Redis ACL username (default: the default user)")
	fs.StringVar(&c.PasswordFile, FlagPasswordFile, c.PasswordFile, "file holding the Redis password, e.g. a mounted Secret (or env "+EnvPassword+")")
	fs.IntVar(&c.DB, FlagDB, c.DB, "Redis database number")
	fs.BoolVar(&c.TLS, FlagTLS, c.TLS, "connect to Redis with TLS")
	fs.StringVar(&c.TLSCAFile, FlagTLSCAFile, c.TLSCAFile, "PEM file of CA certificates to trust for Redis (default: the system's); implies --"+FlagTLS)
	fs.StringVar(&c.TLSServerName, FlagTLSServerName, c.TLSServerName, "name to verify Redis's certificate against (default: the host of --"+FlagAddr+"); implies --"+FlagTLS)
	fs.StringVar(&c.KeyPrefix, FlagKeyPrefix, c.KeyPrefix, "prefix of every Redis key the limits write")
	fs.DurationVar(&c.DialTimeout, FlagDialTimeout, c.DialTimeout, "bound of connecting to Redis")
	fs.DurationVar(&c.Timeout, FlagTimeout, c.Timeout, "bound of one Redis command; a slower one counts as a failure of the store")
	fs.DurationVar(&c.Backoff, FlagBackoff, c.Backoff, "how long a replica counts on its own after Redis failed, before it tries Redis again")
}

// Configured reports whether a shared store is set.
func (c Config) Configured() bool { return c.Addr != "" }

// Validate checks the configuration and names every bad setting by its flag. A Config without
// Addr is valid (no shared store) as long as nothing else is set that needs one.
func (c Config) Validate() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if !c.Password.IsZero() && c.PasswordFile != "" {
		bad(FlagPasswordFile, "set either %s or --%s, not both", EnvPassword, FlagPasswordFile)
	}
	if !c.Configured() {
		if c.PasswordFile != "" || c.Username != "" || c.TLS || c.TLSCAFile != "" || c.TLSServerName != "" {
			bad(FlagAddr, "is required when other --limits-redis-* settings are given")
		}
		return errors.Join(errs...)
	}

	if err := hostport.Check(c.Addr); err != nil {
		bad(FlagAddr, "%v", err)
	}
	if c.PasswordFile != "" {
		if _, err := secretfile.Read(c.PasswordFile); err != nil {
			bad(FlagPasswordFile, "%v", err)
		}
	}
	if c.DB < 0 {
		bad(FlagDB, "%d is negative", c.DB)
	}
	if c.TLSCAFile != "" {
		if _, err := loadCAs(c.TLSCAFile); err != nil {
			bad(FlagTLSCAFile, "%v", err)
		}
	}
	if strings.ContainsAny(c.KeyPrefix, " \t\r\n{}") {
		bad(FlagKeyPrefix, "%q must not hold white space or braces (braces make Redis Cluster hash tags)", c.KeyPrefix)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{FlagDialTimeout, c.DialTimeout}, {FlagTimeout, c.Timeout}, {FlagBackoff, c.Backoff}} {
		if d.v < 0 {
			bad(d.flag, "%v must be positive", d.v)
		}
	}
	return errors.Join(errs...)
}

// withDefaults fills in the zero settings.
func (c Config) withDefaults() Config {
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.TLSCAFile != "" || c.TLSServerName != "" {
		c.TLS = true
	}
	return c
}
