package archive

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/secret"
)

// DSNEnv is the environment variable that carries the archive's DSN when no file does. A DSN
// holds the database password: there is no DSN flag (--archive-dsn is refused).
const DSNEnv = "PAYOUT_ARCHIVE_DSN"

// Config are the archive's settings. Archiving is off unless a DSN is given: transfers then
// stay in the API server for ever, as before.
type Config struct {
	// DSN of the PostgreSQL archive (postgres://user:password@host:5432/db?sslmode=...).
	DSN secret.Value
	// DSNFile holds the DSN (a mounted Secret); it wins over DSN's environment variable. A file
	// that does not exist is no DSN (the Secret is optional); an empty one is an error.
	DSNFile string
	// Retention is how long a transfer stays live after it ended (its last status change).
	Retention time.Duration
	// Batch is how many transfers one archive transaction takes.
	Batch int
	// Rate bounds the transfers archived per second (each costs 2 to 5 API-server deletes).
	Rate float64
	// Interval is the pause between passes when nothing is left to archive.
	Interval time.Duration
	// dsnFlag records that the refused --archive-dsn was given.
	dsnFlag bool
}

// DefaultConfig is the production default: 30 days of retention, 100 per batch, 50 per second.
func DefaultConfig() Config {
	return Config{Retention: 30 * 24 * time.Hour, Batch: 100, Rate: 50, Interval: 30 * time.Second}
}

// dsnInstead says where the DSN goes instead of --archive-dsn.
const dsnInstead = "give the archive's DSN in a file named by --archive-dsn-file (a mounted Secret) or in the environment variable " + DSNEnv

// BindFlags registers the settings on fs with c's values as defaults: --archive-dsn-file (and
// --archive-dsn, refused), --retention, --archive-batch, --archive-rate, --archive-interval.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DSNFile, "archive-dsn-file", c.DSNFile, "file holding the PostgreSQL DSN of the transfer archive, a mounted Secret (or env "+DSNEnv+"); neither: nothing is archived, transfers stay in the API server")
	secret.Refuse(fs, "archive-dsn", dsnInstead, &c.dsnFlag)
	fs.DurationVar(&c.Retention, "retention", c.Retention, "how long a finished transfer stays live (kubectl-visible) before it moves to the archive")
	fs.IntVar(&c.Batch, "archive-batch", c.Batch, "transfers archived per PostgreSQL transaction")
	fs.Float64Var(&c.Rate, "archive-rate", c.Rate, "most transfers archived per second")
	fs.DurationVar(&c.Interval, "archive-interval", c.Interval, "pause between archive passes once nothing is due")
}

// Resolve completes the DSN from the file or the environment and checks the settings.
func (c *Config) Resolve() error {
	if c.dsnFlag {
		return secret.Refused("archive-dsn", dsnInstead)
	}
	if c.DSN.IsZero() && c.DSNFile != "" {
		b, err := os.ReadFile(c.DSNFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The deployments mount the archive's Secret as optional: no Secret, no file, no
			// archive. The facade and the controllers mount the same Secret, so they agree.
		case err != nil:
			return fmt.Errorf("--archive-dsn-file: %w", err)
		default:
			if c.DSN = secret.New(strings.TrimSpace(string(b))); c.DSN.IsZero() {
				return fmt.Errorf("--archive-dsn-file: %s is empty", c.DSNFile)
			}
		}
	}
	if c.DSN.IsZero() {
		c.DSN = secret.New(strings.TrimSpace(os.Getenv(DSNEnv)))
	}
	var errs []error
	if c.Retention < 0 {
		errs = append(errs, fmt.Errorf("--retention: %v is negative", c.Retention))
	}
	if c.Batch < 1 || c.Batch > 1000 {
		errs = append(errs, fmt.Errorf("--archive-batch: must be between 1 and 1000, not %d", c.Batch))
	}
	if c.Rate <= 0 {
		errs = append(errs, fmt.Errorf("--archive-rate: must be positive, not %v", c.Rate))
	}
	if c.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--archive-interval: must be positive, not %v", c.Interval))
	}
	return errors.Join(errs...)
}

// Enabled reports whether an archive is configured.
func (c *Config) Enabled() bool { return !c.DSN.IsZero() }
