// Package dashboard is the web dashboard of an integrator's staff (spec 5.1, 5.6): sign-in with
// the platform's OpenID Provider (an OIDC relying party: authorization code flow with PKCE,
// state and nonce), server-side sessions, and the pages. It is served by the REST facade's
// listener under /dashboard/ and is a separate http.Handler: the facade only mounts it.
//
// Pages are Go templates rendered on the server; the one script is embedded and served from
// /dashboard/static/, under a Content-Security-Policy that allows no inline script. Every
// state change is a POST carrying the session's CSRF token. Pages rendered from the REST
// API's answers (the recipients) call the facade's handler in process as the signed-in user
// (callAPI); scripts that call it get a short-lived browser token from POST /dashboard/token
// and send it as Authorization: Bearer.
package dashboard

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-logr/logr"
	"golang.org/x/oauth2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/browsertoken"
)

// Config wires the dashboard.
type Config struct {
	// URL is the dashboard's public URL, ending in /dashboard/; the provider redirects to
	// URL+"callback". https, or http on a loopback address (make run): only then are its
	// cookies sent without Secure.
	URL string
	// Issuer is the OpenID Provider's issuer URL; ClientID and ClientSecret the dashboard's
	// registration there.
	Issuer, ClientID, ClientSecret string
	// AccountClaim is the ID token claim whose value is the user's account name.
	AccountClaim string
	// Client reads (the cache, with the index of keys by account) and writes API keys.
	Client client.Client
	// Reader reads accounts past the cache at sign-in.
	Reader client.Reader
	// Tokens signs the browser tokens; TokenAudience is the API they are for; TokenTTL their life.
	Tokens        *browsertoken.Keys
	TokenAudience string
	TokenTTL      time.Duration
	// IdleTimeout and AbsoluteTimeout end a session unused for, or older than, that long.
	IdleTimeout, AbsoluteTimeout time.Duration
	// Currencies are the payout currencies the recipients page offers (the catalog's).
	Currencies []string
	// Shared, when set, keeps the sessions and pending sign-ins where every replica sees them
	// (sharedlimits.Values in Redis, when the facade's shared limits are configured); nil: in
	// this replica's memory, and the replicas need sticky sessions at their load balancer.
	Shared SharedValues
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// HTTPClient reaches the provider (http.DefaultClient when nil).
	HTTPClient *http.Client
	Log        logr.Logger
}

// Dashboard is the handler.
type Dashboard struct {
	cfg      Config
	base     *url.URL
	secure   bool
	cookie   string
	sessions *sessions
	logins   *logins
	mux      *http.ServeMux
	api      http.Handler // the facade's, for the pages' calls (SetAPI)

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use, so that the provider need not be up first
}

// New builds the dashboard.
func New(cfg Config) (*Dashboard, error) {
	if cfg.URL == "" || cfg.Issuer == "" || cfg.ClientID == "" || cfg.AccountClaim == "" || cfg.Client == nil || cfg.Tokens == nil || cfg.TokenAudience == "" {
		return nil, errors.New("dashboard: URL, Issuer, ClientID, AccountClaim, Client, Tokens and TokenAudience are required")
	}
	base, err := url.Parse(cfg.URL)
	if err != nil || base.Host == "" || !strings.HasSuffix(base.Path, "/dashboard/") {
		return nil, fmt.Errorf("dashboard URL %q: want an absolute URL ending in /dashboard/", cfg.URL)
	}
	d := &Dashboard{cfg: cfg, base: base}
	switch {
	case base.Scheme == "https":
		d.secure = true
	case base.Scheme == "http" && isLoopback(base.Hostname()):
		// a browser keeps no Secure cookie set over plain http: make run's loopback only
	default:
		return nil, fmt.Errorf("dashboard URL %q: https is required beyond loopback", cfg.URL)
	}
	// __Host-: the browser keeps it only when Secure, for this host alone, at path /
	d.cookie = "payout_session"
	if d.secure {
		d.cookie = "__Host-payout_session"
	}
	if d.cfg.Reader == nil {
		d.cfg.Reader = cfg.Client
	}
	if d.cfg.Now == nil {
		d.cfg.Now = time.Now
	}
	if d.cfg.HTTPClient == nil {
		d.cfg.HTTPClient = http.DefaultClient
	}
	if d.cfg.TokenTTL <= 0 {
		d.cfg.TokenTTL = 5 * time.Minute
	}
	if d.cfg.IdleTimeout <= 0 {
		d.cfg.IdleTimeout = 30 * time.Minute
	}
	if d.cfg.AbsoluteTimeout <= 0 {
		d.cfg.AbsoluteTimeout = 12 * time.Hour
	}
	d.sessions = newSessions(d.cfg.IdleTimeout, d.cfg.AbsoluteTimeout, d.cfg.Now, d.cfg.Shared)
	d.logins = &logins{m: map[string]pendingLogin{}, shared: d.cfg.Shared, now: d.cfg.Now}
	d.mux = d.routes()
	return d, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves every dashboard path with the security headers of every page.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self' "+d.issuerOrigin()+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	d.mux.ServeHTTP(w, r)
}

func (d *Dashboard) issuerOrigin() string {
	u, err := url.Parse(d.cfg.Issuer)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// path is the dashboard path of p, relative to its base ("keys" is /dashboard/keys).
func (d *Dashboard) path(p string) string { return d.base.Path + p }

// oauth returns the provider's OAuth 2 configuration, discovering the provider once.
func (d *Dashboard) oauth(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.provider == nil {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, d.cfg.HTTPClient), d.cfg.Issuer)
		if err != nil {
			return nil, nil, fmt.Errorf("discovering the OpenID Provider %s: %w", d.cfg.Issuer, err)
		}
		d.provider = p
	}
	conf := &oauth2.Config{
		ClientID:     d.cfg.ClientID,
		ClientSecret: d.cfg.ClientSecret,
		Endpoint:     d.provider.Endpoint(),
		RedirectURL:  d.base.ResolveReference(&url.URL{Path: "callback"}).String(),
		Scopes:       []string{oidc.ScopeOpenID, "profile", "email"},
	}
	return conf, d.provider.VerifierContext(oidc.ClientContext(context.Background(), d.cfg.HTTPClient), &oidc.Config{ClientID: d.cfg.ClientID, Now: d.cfg.Now}), nil
}

// account reads an account past the cache; nil when it is not there or is being deleted.
func (d *Dashboard) account(ctx context.Context, name string) (*payoutv1.PayoutAccount, error) {
	acct := &payoutv1.PayoutAccount{}
	if err := d.cfg.Reader.Get(ctx, client.ObjectKey{Name: name}, acct); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, err
	}
	if !acct.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	return acct, nil
}

// validCSRF checks a state change's token against the session's, from the form or the
// X-CSRF-Token header (the page's script), in constant time.
func validCSRF(r *http.Request, s *session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}
