package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stablepay/payout-operator/internal/kycsite"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// kycSiteOptions are the wallet verification site's settings (internal/kycsite). The site has
// a listener of its own rather than a path on the facade's: its callers are end users' browsers,
// not integrators' servers, so it gets its own host name and origin (the facade's MCP endpoint
// refuses browser origins; the site's page is one), its own Ingress and CSP, and no API key
// reaches it; the dashboard of issue 28 can take a third listener beside it.
type kycSiteOptions struct {
	addr, url, vendorURL  string
	chainID               int64
	linkKey, vendorSecret secret.Setting
}

func (k *kycSiteOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&k.addr, "kyc-site-bind-address", "", "address of the wallet verification site (spec's {kyc_url}; docs/kyc-site.md), served with the facade; empty (the default): no site")
	fs.StringVar(&k.url, "kyc-site-url", "", "the site's public origin (https://host[:port]): its host is the domain of the Sign-In with Ethereum messages and its /verify their URI, so it must be what users' browsers show; required with --kyc-site-bind-address")
	fs.Int64Var(&k.chainID, "kyc-site-chain-id", 1, "chain id the site's messages name (the wallet signs off chain; 1 is Ethereum mainnet)")
	k.linkKey.BindFlags(fs, "key (at least 32 bytes) that signs the site's links naming accounts and the KYC vendor's sessions; the same on every replica")
	fs.StringVar(&k.vendorURL, "kyc-vendor-url", "", "the KYC vendor's start page, where the site sends a user once their wallet is proven; empty: the site records proofs only")
	k.vendorSecret.BindFlags(fs, "HMAC-SHA256 secret of the KYC vendor's callbacks")
}

// check reads the site's secrets and refuses a site that cannot work.
func (k *kycSiteOptions) check(api bool) error {
	if err := errors.Join(k.linkKey.Resolve(), k.vendorSecret.Resolve()); err != nil {
		return err
	}
	if k.addr == "" {
		return nil
	}
	switch {
	case !api:
		return errors.New("--kyc-site-bind-address: the site is served with the facade; it needs --api")
	case k.url == "":
		return errors.New("--kyc-site-bind-address needs --kyc-site-url, the site's public origin")
	case len(k.linkKey.Value.Reveal()) < 32:
		return errors.New("--kyc-site-bind-address needs a link key of at least 32 bytes (--kyc-link-key-file or PAYOUT_KYC_LINK_KEY)")
	case k.vendorURL != "" && k.vendorSecret.Value.Reveal() == "":
		return errors.New("--kyc-vendor-url needs the vendor's callback secret (--kyc-vendor-secret-file or PAYOUT_KYC_VENDOR_SECRET)")
	}
	return nil
}

// start opens the site's listener (a taken address fails payoutd at start) and serves it
// for the manager's life.
func (k *kycSiteOptions) start(mgr ctrl.Manager, log logr.Logger, limits sharedlimits.Config) error {
	if k.addr == "" {
		return nil
	}
	var nonces kycsite.Nonces
	shared, err := sharedValues(limits, "kyc:nonce", log)
	if err != nil {
		return err
	}
	if shared != nil {
		nonces = kycsite.SharedNonces{Values: shared, Now: time.Now}
	}
	site, err := kycsite.New(kycsite.Config{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), URL: k.url, ChainID: k.chainID, Nonces: nonces,
		LinkKey: []byte(k.linkKey.Value.Reveal()), Vendor: kycsite.Vendor{URL: k.vendorURL, Secret: []byte(k.vendorSecret.Value.Reveal())},
		Clock: clock.RealClock{}, Log: log.WithName("kycsite")})
	if err != nil {
		return fmt.Errorf("--kyc-site-url: %w", err)
	}
	l, err := net.Listen("tcp", k.addr)
	if err != nil {
		return fmt.Errorf("wallet verification site: %w", err)
	}
	srv := &http.Server{Handler: site.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 32 << 10}
	log.Info("wallet verification site listening", "address", l.Addr().String(), "url", k.url)
	return mgr.Add(everyReplica(func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}))
}

// everyReplica is a runnable of every replica, leader or not: the site serves on each.
type everyReplica manager.RunnableFunc

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

func (everyReplica) NeedLeaderElection() bool { return false }
