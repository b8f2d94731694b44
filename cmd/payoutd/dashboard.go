package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/internal/browsertoken"
	"github.com/stablepay/payout-operator/internal/dashboard"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// dashboardOptions are the dashboard's flags (issue 28): the sign-in with the platform's OpenID
// Provider and the browser tokens it issues and the facade accepts (spec 5.6).
type dashboardOptions struct {
	url, issuer, clientID, accountClaim string
	clientSecret                        secret.Setting
	tokenKeyFile, audience              string
	tokenTTL, idle, absolute            time.Duration
}

func newDashboardOptions() dashboardOptions {
	return dashboardOptions{clientSecret: secret.Setting{Name: "dashboard-oidc-client-secret", Env: "PAYOUT_DASHBOARD_OIDC_CLIENT_SECRET"}}
}

func (o *dashboardOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "dashboard-url", "", "public URL of the dashboard, served by the facade's listener at /dashboard/ (https://payouts.example.com/dashboard/; http only on a loopback address); empty (the default): no dashboard. Register URL+\"callback\" as the redirect URI at the OpenID Provider")
	fs.StringVar(&o.issuer, "dashboard-oidc-issuer", "", "issuer URL of the platform's OpenID Provider (Dex, Keycloak, Okta, Entra) the dashboard's users sign in with")
	fs.StringVar(&o.clientID, "dashboard-oidc-client-id", "", "the dashboard's client id at the OpenID Provider")
	o.clientSecret.BindFlags(fs, "dashboard's client secret at the OpenID Provider")
	fs.StringVar(&o.accountClaim, "dashboard-account-claim", "payout_account", "ID token claim whose value is the name of the payout account the user acts for; a user without it cannot sign in")
	fs.StringVar(&o.tokenKeyFile, "dashboard-token-key-file", "", "PEM file of Ed25519 private keys (PKCS #8) that sign the browser tokens; the first signs, all verify (rotation: docs/operations/dashboard.md). Every facade replica needs the same file and --dashboard-url (the tokens' issuer)")
	fs.StringVar(&o.audience, "dashboard-token-audience", "", "audience of the browser tokens, naming this API (default: the origin of --dashboard-url); a token for another audience is refused")
	fs.DurationVar(&o.tokenTTL, "dashboard-token-ttl", 5*time.Minute, "life of a browser token")
	fs.DurationVar(&o.idle, "dashboard-session-idle-timeout", 30*time.Minute, "a dashboard session unused this long ends")
	fs.DurationVar(&o.absolute, "dashboard-session-max-age", 12*time.Hour, "a dashboard session ends this long after sign-in, however used")
}

func (o *dashboardOptions) check(api bool) error {
	if err := o.clientSecret.Resolve(); err != nil {
		return err
	}
	if o.url == "" {
		return nil
	}
	if !api {
		return errors.New("--dashboard-url: the dashboard is served by the facade: it needs --api")
	}
	if o.issuer == "" || o.clientID == "" || o.tokenKeyFile == "" {
		return errors.New("--dashboard-url needs --dashboard-oidc-issuer, --dashboard-oidc-client-id and --dashboard-token-key-file")
	}
	if o.tokenTTL < 30*time.Second || o.tokenTTL > time.Hour {
		return fmt.Errorf("--dashboard-token-ttl: %v is not between 30s and 1h", o.tokenTTL)
	}
	if o.idle <= 0 || o.absolute < o.idle {
		return fmt.Errorf("--dashboard-session-idle-timeout (%v) must be positive and at most --dashboard-session-max-age (%v)", o.idle, o.absolute)
	}
	if o.audience == "" {
		u, err := url.Parse(o.url)
		if err != nil || u.Host == "" {
			return fmt.Errorf("--dashboard-url: %q is not an absolute URL", o.url)
		}
		o.audience = u.Scheme + "://" + u.Host
	}
	return nil
}

// build makes what the facade is configured with: the browser tokens it accepts and the
// dashboard it serves (nil without --dashboard-url), offering currencies on its recipients page.
func (o *dashboardOptions) build(mgr ctrl.Manager, log logr.Logger, currencies []string, limits sharedlimits.Config) (apiserver.BrowserCallers, *dashboard.Dashboard, error) {
	if o.url == "" {
		return apiserver.BrowserCallers{}, nil, nil
	}
	keys, err := browsertoken.LoadKeys(o.tokenKeyFile)
	if err != nil {
		return apiserver.BrowserCallers{}, nil, fmt.Errorf("--dashboard-token-key-file: %w", err)
	}
	callers := apiserver.BrowserCallers{Keys: keys, Issuer: o.url, Audience: o.audience}
	values, err := sharedValues(limits, "dashboard", log)
	if err != nil {
		return apiserver.BrowserCallers{}, nil, err
	}
	var shared dashboard.SharedValues // a nil *Values would be a non-nil interface
	if values != nil {
		shared = values
	}
	d, err := dashboard.New(dashboard.Config{
		Shared: shared,
		URL:    o.url, Issuer: o.issuer, ClientID: o.clientID, ClientSecret: o.clientSecret.Value.Reveal(),
		AccountClaim: o.accountClaim, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Tokens: keys, TokenAudience: o.audience, TokenTTL: o.tokenTTL,
		IdleTimeout: o.idle, AbsoluteTimeout: o.absolute, Currencies: currencies, Log: log.WithName("dashboard"),
	})
	if err != nil {
		return apiserver.BrowserCallers{}, nil, err
	}
	return callers, d, nil
}

// sharedValues is space in the Redis of the shared limits (--limits-redis-*), where the
// dashboard's sessions and the wallet site's nonces live when several replicas serve them; nil
// when no Redis is configured (each replica's memory). Values fail closed: no fallback to memory.
func sharedValues(limits sharedlimits.Config, space string, log logr.Logger) (*sharedlimits.Values, error) {
	if !limits.Configured() {
		return nil, nil
	}
	st, err := sharedlimits.Open(limits, log.WithName(space))
	if err != nil {
		return nil, fmt.Errorf("shared limits: %w", err)
	}
	return st.Values(space), nil
}
