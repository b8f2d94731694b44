package pricing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/poll"
)

// RefresherConfig configures a Refresher.
type RefresherConfig struct {
	// URL serves a rate document in a shape ParseRates accepts.
	URL string
	// Client defaults to a client with a 30 s timeout.
	Client *http.Client
	// Interval between polls after a successful one; default 15 minutes.
	Interval time.Duration
	// RetryInterval between polls after a failed one; default the smaller of Interval and one
	// minute, so that one failed poll does not leave the rates a whole Interval older.
	RetryInterval time.Duration
	// MaxAge is how long after the last successful poll the rates may still be quoted. Required:
	// it is the promise the service makes about price freshness.
	MaxAge time.Duration
	// MaxDataAge, when set, refuses a document whose own date is older than this, so that an
	// upstream that keeps serving the same old file does not count as fresh. Daily sources date
	// their rates at 00:00 UTC: allow at least 48 h for them.
	MaxDataAge time.Duration
	// Now is the clock; default time.Now. Tests inject their own.
	Now func() time.Time
	// Logger receives failed polls; default slog.Default().
	Logger *slog.Logger
}

// Refresher is a RateSource backed by a live HTTP rate feed. It keeps the last good table and
// refuses to quote from it once it is older than MaxAge: a payout priced with yesterday's rate is
// a loss or an overcharge, and a 503 the caller can retry is the honest answer.
type Refresher struct {
	cfg    RefresherConfig
	source string // cfg.URL without credentials or query, for RateTable.Source and logs

	mu      sync.RWMutex
	table   *RateTable
	lastErr error
}

// maxRateDocumentSize bounds a response body; a full fawazahmed0 document is about 8 KiB.
const maxRateDocumentSize = 1 << 20

// futureDateTolerance is how far past the local clock a document's date may lie: publishers date
// daily rates by their own time zone, more than a day ahead means a broken feed or clock.
const futureDateTolerance = 36 * time.Hour

// NewRefresher checks cfg and fills in its defaults. It does not poll; call Refresh or Run.
func NewRefresher(cfg RefresherConfig) (*Refresher, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pricing: rate feed URL %q is not an http(s) URL", cfg.URL)
	}
	if cfg.MaxAge <= 0 {
		return nil, errors.New("pricing: rate feed MaxAge must be positive")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 15 * time.Minute
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = min(cfg.Interval, time.Minute)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// The feed URL may carry an access key in its query or user info; neither belongs in logs.
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return &Refresher{cfg: cfg, source: "rate feed " + clean.String()}, nil
}

// Rates returns the last good table, or an Unavailable error when there is none yet or it is
// older than MaxAge.
func (r *Refresher) Rates(context.Context) (*RateTable, error) {
	r.mu.RLock()
	t := r.table
	r.mu.RUnlock()
	if t == nil {
		return nil, apierror.Errorf(apierror.Unavailable, "exchange rates are not available yet; retry shortly")
	}
	if r.cfg.Now().Sub(t.FetchedAt) > r.cfg.MaxAge {
		return nil, apierror.Errorf(apierror.Unavailable, "exchange rates are stale; retry shortly")
	}
	return t, nil
}

// Age is the time since the rates held were last confirmed by the feed; false when there are
// none. It is meant for metrics and readiness checks.
func (r *Refresher) Age() (time.Duration, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.table == nil {
		return 0, false
	}
	return r.cfg.Now().Sub(r.table.FetchedAt), true
}

// LastError is the error of the latest poll, nil when it succeeded.
func (r *Refresher) LastError() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastErr
}

// Refresh polls the feed once. On success the new table replaces the held one; on failure the
// held table is kept (and keeps ageing) and the error is returned and remembered.
func (r *Refresher) Refresh(ctx context.Context) error {
	t, err := r.fetch(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.table != nil && t.AsOf.Before(r.table.AsOf) {
		// A lagging cache or mirror: going back in time would re-price with older data.
		err = fmt.Errorf("pricing: %s served rates dated %s, older than the %s already held",
			r.source, t.AsOf.Format(time.RFC3339), r.table.AsOf.Format(time.RFC3339))
	}
	r.lastErr = err
	if err != nil {
		return err
	}
	r.table = t
	return nil
}

func (r *Refresher) fetch(ctx context.Context) (*RateTable, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("pricing: %s: %w", r.source, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		// The *url.Error text repeats the full URL; report the cleaned one instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("pricing: %s: %w", r.source, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("pricing: %s answered HTTP %d", r.source, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRateDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("pricing: %s: reading the body: %w", r.source, err)
	}
	if len(body) > maxRateDocumentSize {
		return nil, fmt.Errorf("pricing: %s sent more than %d bytes", r.source, maxRateDocumentSize)
	}
	t, err := ParseRates(body, r.source)
	if err != nil {
		return nil, err
	}
	now := r.cfg.Now()
	if t.AsOf.After(now.Add(futureDateTolerance)) {
		return nil, fmt.Errorf("pricing: %s served rates dated %s, in the future", r.source, t.AsOf.Format(time.RFC3339))
	}
	if r.cfg.MaxDataAge > 0 && now.Sub(t.AsOf) > r.cfg.MaxDataAge {
		return nil, fmt.Errorf("pricing: %s served rates dated %s, older than the %s allowed",
			r.source, t.AsOf.Format(time.RFC3339), r.cfg.MaxDataAge)
	}
	t.FetchedAt = now
	return t, nil
}

// Run polls the feed at once and then every Interval (RetryInterval after a failure) until ctx
// ends. Failures are logged and do not stop the loop; Rates turns them into 503s once the held
// rates pass MaxAge.
func (r *Refresher) Run(ctx context.Context) {
	poll.Loop(ctx, 0, func() time.Duration {
		err := r.Refresh(ctx)
		if err == nil || ctx.Err() != nil {
			return r.cfg.Interval
		}
		age, ok := r.Age()
		r.cfg.Logger.Warn("exchange-rate poll failed", "err", err, "have_rates", ok, "age", age, "max_age", r.cfg.MaxAge)
		return r.cfg.RetryInterval
	})
}
