// Command payoutd runs the payout service: the controllers (with leader election), the REST
// facade (on every replica), or both.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/watch"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/flagfile"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/keyuse"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	payoutmetrics "github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/notify"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/recovery"
	"github.com/stablepay/payout-operator/internal/refund"
	"github.com/stablepay/payout-operator/internal/scheme"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// options are the command-line settings.
type options struct {
	// logger is the root logger main made (zap's); zero in tests that run payoutd in process,
	// where ctrl.Log serves. The facade takes it directly rather than through ctrl.Log's
	// delegating sink, so that its access log can reach zap's sampler (apiserver/accesslog.go).
	logger                          logr.Logger
	kubeconfig                      string
	controllers, api                bool
	apiAddr, metricsAddr, probeAddr string
	metricsSecure                   bool
	metricsCertDir                  string
	pprofAddr                       string
	leaderElect                     bool
	leaderElectionNamespace         string
	leaseDuration, renewDeadline    time.Duration
	retryPeriod                     time.Duration
	trustedProxies                  string
	proxies                         []netip.Prefix // trustedProxies parsed by check
	maxBodyBytes                    int64
	keyUseWrites                    float64
	mcpAllowedOrigins               string
	sanctionsDir, bankDataDir       string
	sanctionsURL, sanctionsConsURL  string
	sanctionsRefresh                time.Duration
	sanctionsMaxAge                 time.Duration
	ratesFile, ratesURL             string
	ratesMaxAge                     time.Duration
	kycURL, riskURL                 string
	kycSite                         kycSiteOptions
	dashboard                       dashboardOptions
	quoteRetention, claimGrace      time.Duration
	transferExpiry, v2MatchTimeout  time.Duration
	transferWorkers                 int
	sweeper                         sweeperOptions
	recovery                        bool
	recoveryGap                     time.Duration
	ledgerInterval                  time.Duration
	fiat                            wise.Config
	mail                            notify.Config
	chains                          chainconfig.Flags
	// limits is the Redis server the facade replicas share their limits in (none: per replica)
	limits  sharedlimits.Config
	archive archive.Config
	zap     zap.Options
	// the compliance services' bearer tokens: from files or the environment only
	kycToken, riskToken secret.Setting
}

func parseFlags(args []string) (*options, error) {
	o := newOptions()
	fs := newFlagSet(o)
	if err := flagfile.Load(fs, args, "config"); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	return o, nil
}

// newOptions are the options before the flags: where each secret is read from.
func newOptions() *options {
	return &options{
		kycToken:  secret.Setting{Name: "kyc-token", Env: "PAYOUT_KYC_TOKEN"},
		riskToken: secret.Setting{Name: "risk-token", Env: "PAYOUT_RISK_TOKEN"},
		kycSite: kycSiteOptions{
			linkKey:      secret.Setting{Name: "kyc-link-key", Env: "PAYOUT_KYC_LINK_KEY"},
			vendorSecret: secret.Setting{Name: "kyc-vendor-secret", Env: "PAYOUT_KYC_VENDOR_SECRET"},
		},
		dashboard: newDashboardOptions(),
	}
}

// newFlagSet binds every flag of payoutd to o (docs/configuration.md is rendered from it).
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("payoutd", flag.ContinueOnError)
	fs.String("config", "", "YAML file of settings: its keys are these flags' names, nested keys joined with '-' (fiat: {url: ...} is --fiat-url), lists for repeatable flags; flags on the command line win (sample: config/samples/payoutd.yaml)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config or in-cluster)")
	fs.BoolVar(&o.controllers, "controllers", true, "run the controllers (with leader election when --leader-elect)")
	fs.BoolVar(&o.api, "api", true, "serve the REST facade")
	fs.StringVar(&o.apiAddr, "api-bind-address", ":8080", "address of the REST facade")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8081", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to authenticated and authorized scrapers only: a bearer token the API server accepts (TokenReview) whose identity may get the non-resource URL /metrics (SubjectAccessReview; ClusterRole payout-metrics-reader); false: plain HTTP to anyone who reaches the address")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "directory holding tls.crt and tls.key for --metrics-secure; empty: a self-signed certificate made at start")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8082", "address of the manager's /healthz and /readyz")
	fs.StringVar(&o.pprofAddr, "pprof-address", "", "address of Go's /debug/pprof endpoints, for profiling under load (docs/benchmarks.md); empty (the default) serves none. Unauthenticated: bind it to loopback")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect one active controller replica")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election lease (default: the pod's)")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits after the leader's last renewal before it takes over (the handover time after a crash)")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it stops leading; shorter than the lease duration")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to acquire or renew the lease")
	fs.StringVar(&o.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs of the proxies in front of the facade (Ingress, load balancer) whose X-Forwarded-For is believed, or none when callers reach it directly; required unless --api-bind-address is a loopback address")
	fs.Int64Var(&o.maxBodyBytes, "max-body-bytes", 64<<10, "largest accepted request body (413 beyond)")
	fs.Float64Var(&o.keyUseWrites, "key-last-used-writes", keyuse.DefaultWrites, "the most writes a second of API keys' last use (their last-used annotation, once a minute per key) a facade replica makes; keys used meanwhile are recorded in turn, later")
	fs.StringVar(&o.mcpAllowedOrigins, "mcp-allowed-origins", "", "comma-separated browser origins (scheme://host[:port]) allowed to call the MCP tool server at /mcp; empty (the default): a request carrying any Origin header is refused, as API keys are for server-side use")
	fs.StringVar(&o.sanctionsDir, "sanctions-dir", "", "directory with a newer OFAC release (sdn.csv, add.csv, alt.csv, ofac-country-iso2.csv, and sdn.xml for its publish date); default: the embedded release. Reloaded on SIGHUP")
	fs.StringVar(&o.sanctionsURL, "sanctions-url", "", "OFAC's download directory, polled for the SDN list (sdn.csv, add.csv, alt.csv; the publish date from sdn.xml's header), e.g. https://www.treasury.gov/ofac/downloads/ (docs/operations/compliance-data.md). Also fetched on SIGHUP; not with --sanctions-dir")
	fs.StringVar(&o.sanctionsConsURL, "sanctions-consolidated-url", "", "directory of OFAC's consolidated non-SDN list (cons_prim.csv, cons_add.csv, cons_alt.csv), screened beside the SDN list, e.g. https://www.treasury.gov/ofac/downloads/consolidated/; needs --sanctions-url")
	fs.DurationVar(&o.sanctionsRefresh, "sanctions-refresh-interval", time.Hour, "how often --sanctions-url is polled (a failed poll is retried after a minute)")
	fs.DurationVar(&o.sanctionsMaxAge, "sanctions-max-age", 7*24*time.Hour, "recipient screening answers 503 once the list's publish date is older than this (the embedded release is from 2023, so a deployment must load a newer one); 0 disables the limit (development only)")
	fs.StringVar(&o.bankDataDir, "bank-data-dir", "", "directory with newer bank-format data (layout of internal/bankaccount/data); default: embedded")
	fs.StringVar(&o.ratesFile, "rates-file", "", "a rate snapshot file to price from; default: the embedded snapshot")
	fs.StringVar(&o.ratesURL, "rates-url", "", "a live rate source polled by the refresher; quotes fail with 503 once its rates are older than --rates-max-age")
	fs.DurationVar(&o.ratesMaxAge, "rates-max-age", time.Hour, "how old live rates may be before quotes are refused")
	fs.StringVar(&o.kycURL, "kyc-url", "", "external wallet-verification service; default: the local store (kubectl-payout wallet verify)")
	o.kycToken.BindFlags(fs, "bearer token of the wallet-verification service")
	fs.StringVar(&o.riskURL, "risk-url", "", "external wallet-screening service; default: the local risk list (kubectl-payout wallet block)")
	o.riskToken.BindFlags(fs, "bearer token of the wallet-screening service")
	o.kycSite.bindFlags(fs)
	o.dashboard.bindFlags(fs)
	fs.DurationVar(&o.quoteRetention, "quote-retention", 10*time.Minute, "how long expired quotes are kept before deletion")
	fs.DurationVar(&o.claimGrace, "claim-grace", 2*time.Minute, "how long a uniqueness claim waits for its holder before release")
	fs.DurationVar(&o.transferExpiry, "transfer-expiry", 24*time.Hour, "how long a v1 transfer waits for its deposit before it fails (Expired)")
	fs.DurationVar(&o.v2MatchTimeout, "v2-match-timeout", transfer.DefaultMatchTimeout, "how long a confirmed v2 transaction hash may stay unfound on chain before its transfer fails (deposit not found) and the hash is released")
	fs.IntVar(&o.transferWorkers, "transfer-workers", 8, "transfers reconciled at once")
	fs.DurationVar(&o.ledgerInterval, "ledger-check-interval", 10*time.Minute, "how often the controllers check the treasury's ledger, with the chain's balances of the deposit addresses (docs/operations/ledger.md); 0 disables the check")
	fs.DurationVar(&o.recoveryGap, "recovery-gap", recovery.DefaultGap, "at a start, a heartbeat of the Recovery object older than this requires recovery (money waits for kubectl payout recover --resume): the cluster's records stop there, as after an etcd restore")
	fs.BoolVar(&o.recovery, "recovery", false, "start after an etcd restore: no money moves (no payout created, no refund signed) until the start-up check has been acknowledged with kubectl payout recover --resume, whatever it finds (docs/operations/backup.md)")
	o.fiat = wise.DefaultConfig()
	o.fiat.BindFlags(fs)
	o.mail.BindFlags(fs)
	o.chains.BindFlags(fs)
	o.limits.BindFlags(fs)
	o.archive = archive.DefaultConfig()
	o.archive.BindFlags(fs)
	o.zap.BindFlags(fs)
	o.sweeper.bindFlags(fs)
	return fs
}

// check validates the parsed settings and reads the secrets from their files or environment
// variables (a secret given as a flag is refused).
func (o *options) check() (err error) {
	if !o.controllers && !o.api && !o.sweeper.enabled {
		return errors.New("nothing to run: --controllers and --api are both false")
	}
	if err := o.sweeper.check(o); err != nil {
		return err
	}
	if err := errors.Join(o.kycToken.Resolve(), o.riskToken.Resolve(), o.fiat.Resolve(), o.mail.Resolve()); err != nil {
		return err
	}
	if err := o.archive.Resolve(); err != nil {
		return err
	}
	if o.keyUseWrites <= 0 {
		return fmt.Errorf("--key-last-used-writes: %v is not positive", o.keyUseWrites)
	}
	if o.transferExpiry < time.Minute {
		return fmt.Errorf("--transfer-expiry: %v is shorter than a minute", o.transferExpiry)
	}
	if o.ledgerInterval < 0 {
		return fmt.Errorf("--ledger-check-interval: %v is negative", o.ledgerInterval)
	}
	if o.recoveryGap < 10*time.Second {
		return fmt.Errorf("--recovery-gap: %v is shorter than 10s", o.recoveryGap)
	}
	if o.v2MatchTimeout < time.Minute {
		return fmt.Errorf("--v2-match-timeout: %v is shorter than a minute", o.v2MatchTimeout)
	}
	// client-go's own rule: a leader must give up before a standby may take over.
	if o.leaseDuration <= o.renewDeadline || o.renewDeadline <= o.retryPeriod || o.retryPeriod <= 0 {
		return fmt.Errorf("leader election: need --leader-elect-lease-duration (%v) > --leader-elect-renew-deadline (%v) > --leader-elect-retry-period (%v) > 0",
			o.leaseDuration, o.renewDeadline, o.retryPeriod)
	}
	if o.sanctionsURL != "" && o.sanctionsDir != "" {
		return errors.New("--sanctions-url and --sanctions-dir: set one source of the sanctions list, not both")
	}
	if o.sanctionsConsURL != "" && o.sanctionsURL == "" {
		return errors.New("--sanctions-consolidated-url needs --sanctions-url")
	}
	if o.sanctionsRefresh < time.Minute {
		return fmt.Errorf("--sanctions-refresh-interval: %v is shorter than a minute", o.sanctionsRefresh)
	}
	if o.transferWorkers < 1 || o.transferWorkers > 256 {
		return fmt.Errorf("--transfer-workers: must be between 1 and 256, not %d", o.transferWorkers)
	}
	if err := o.kycSite.check(o.api); err != nil {
		return err
	}
	if err := o.dashboard.check(o.api); err != nil {
		return err
	}
	if o.api {
		if err := o.limits.Validate(); err != nil {
			return err
		}
		if o.proxies, err = trustedProxies(o.trustedProxies, o.apiAddr); err != nil {
			return err
		}
	}
	if o.controllers {
		if err := o.fiat.Validate(); err != nil {
			return err
		}
		if err := o.mail.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "payoutd:", err)
		os.Exit(2)
	}
	o.logger = zap.New(zap.UseFlagOptions(&o.zap))
	ctrl.SetLogger(o.logger)
	if o.kubeconfig != "" {
		// controller-runtime's loader reads KUBECONFIG
		_ = os.Setenv("KUBECONFIG", o.kubeconfig)
	}
	log := ctrl.Log.WithName("payoutd")
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, o, log); err != nil {
		log.Error(err, "payoutd stopped")
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options, log logr.Logger) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("cluster configuration: %w", err)
	}
	return runWith(ctx, cfg, o, log)
}

// skipControllerNameValidation lets tests run one payoutd after another in one process.
var skipControllerNameValidation = false

// runWith runs payoutd against the cluster of cfg until ctx ends (tests run it in-process).
func runWith(ctx context.Context, cfg *rest.Config, o *options, log logr.Logger) error {
	if o.sweeper.enabled {
		return runSweeper(ctx, cfg, o, log)
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(o, o.controllers && o.leaderElect, "payoutd.payout.stablepay.dev"))
	if err != nil {
		return err
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	payoutmetrics.CountTransfers(mgr.GetCache())
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	synced := newSyncGate(mgr.GetCache())
	if err := mgr.Add(synced); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("cache", synced.check); err != nil {
		return err
	}
	chains, err := o.chains.Config()
	if err != nil {
		return err
	}
	store, err := openArchive(ctx, o, log)
	if err != nil {
		return err
	}
	// One risk service screens the declared wallets (facade) and the wallets that paid and the
	// refund destinations (controllers).
	var risk walletscreen.Screener = walletscreen.LocalList{Reader: mgr.GetClient()}
	if o.riskURL != "" {
		risk = walletscreen.HTTP{Service: remote.Service{BaseURL: o.riskURL, Token: o.riskToken.Value}}
	}
	var watched *watch.Chains
	if o.controllers {
		if watched, err = watch.Setup(mgr, chains, watch.Options{Log: ctrl.Log.WithName("chain")}); err != nil {
			return fmt.Errorf("chains: %w", err)
		}
		copts := controllers.DefaultOptions()
		copts.Chain, copts.V2 = watched, depositkey.Addresses{Config: chains}
		// the refund key's wallets send on the watchers' clients
		refunds, err := refund.NewEVMWallets(chains, watched.Networks)
		if err != nil {
			return fmt.Errorf("chains: %w", err)
		}
		if refunds != nil {
			ctrl.Log.WithName("chain").Info("refund wallet", "address", refunds.Address(), "networks", refunds.Networks())
			copts.RefundWallets = refunds
		}
		copts.QuoteRetention, copts.ClaimGrace = o.quoteRetention, o.claimGrace
		copts.TransferWorkers = o.transferWorkers
		copts.Screener, copts.MatchTimeout = risk, o.v2MatchTimeout
		copts.Archive = controllers.ArchiveOptions{Store: store, Config: o.archive,
			TransferJSON: apiserver.TransferLookupJSON, RecipientJSON: apiserver.RecipientLookupJSON, Swept: map[payoutv1.Network]bool{}}
		// the networks the sweeper sweeps: their deposits stay live until their Sweeps exist
		for _, network := range chains.NetworkNames() {
			if _, ok := chains.Treasury(network); ok {
				copts.Archive.Swept[network] = true
			}
		}
		provider, err := wise.New(o.fiat)
		if err != nil {
			return fmt.Errorf("fiat provider: %w", err)
		}
		copts.Provider = payoutmetrics.InstrumentProvider(provider)
		checker := &recovery.Checker{Client: mgr.GetClient(), Payouts: provider, Clock: clock.RealClock{}, Restored: o.recovery,
			Gap: o.recoveryGap, Log: ctrl.Log.WithName("recovery")}
		if store != nil {
			checker.Archived = func(ctx context.Context, id string) (bool, error) {
				_, ok, err := store.Transfer(ctx, id)
				return ok, err
			}
		}
		if err := mgr.Add(checker); err != nil {
			return err
		}
		if o.ledgerInterval > 0 {
			if err := mgr.Add(&gather.Checker{Client: mgr.GetClient(), Store: store, Balances: gather.EVMBalances(watched.Networks),
				Interval: o.ledgerInterval, Clock: clock.RealClock{}, Log: ctrl.Log.WithName("ledger")}); err != nil {
				return err
			}
		}
		copts.Gate = checker
		if o.mail.Configured() {
			mailer, err := notify.New(o.mail)
			if err != nil {
				return fmt.Errorf("mail: %w", err)
			}
			copts.Notifier = notify.TransferNotifier{Mailer: mailer, Domain: o.mail.MessageDomain(), Limits: o.mail.Limits()}
		} else {
			log.Info("no --smtp-addr: transfer outcomes are not mailed")
		}
		if err := controllers.Setup(mgr, copts); err != nil {
			return err
		}
	}
	if o.api {
		addresses := depositkey.Addresses{Config: chains}
		if chains.DepositKey != nil {
			if addresses.Public, err = depositkey.LoadPublic(ctx, mgr.GetAPIReader(), chains.DepositKey); err != nil {
				return fmt.Errorf("deposit key: %w", err)
			}
		} else {
			log.Info("no deposit key (depositKey.xpub or --deposit-xpub-file): v1 transfers answer 503")
		}
		srv, screener, err := newFacade(ctx, o, mgr, synced, addresses, store, risk, log)
		if err != nil {
			return err
		}
		if err := srv.Open(o.apiAddr); err != nil {
			return fmt.Errorf("facade: %w", err)
		}
		log.Info("REST facade listening", "url", srv.URL())
		if err := mgr.Add(apiserver.Runnable{Server: srv}); err != nil {
			return err
		}
		if err := o.kycSite.start(mgr, log, o.limits); err != nil {
			return err
		}
		go reloadOnHangup(ctx, screener, log)
		if o.sanctionsURL != "" {
			go screener.Run(ctx, o.sanctionsRefresh, func(err error) { logReload(log, screener, err) })
		}
	}
	return mgr.Start(ctx)
}

// managerOptions are the manager's options of a payoutd process: leader election (when elect) on
// the Lease named id.
func managerOptions(o *options, elect bool, id string) ctrl.Options {
	return ctrl.Options{
		Controller:              ctrlconfig.Controller{SkipNameValidation: &skipControllerNameValidation},
		Scheme:                  scheme.New(),
		Metrics:                 payoutmetrics.ServerOptions(o.metricsAddr, o.metricsSecure, o.metricsCertDir),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          elect,
		LeaderElectionID:        id,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		LeaseDuration:           &o.leaseDuration,
		RenewDeadline:           &o.renewDeadline,
		RetryPeriod:             &o.retryPeriod,
		// A replica stopping gracefully (a rolling update) gives the lease up once its controllers
		// have stopped, so the standby takes over at once instead of after a lease duration;
		// payoutd exits as soon as the manager returns, as this requires.
		LeaderElectionReleaseOnCancel: true,
		// Decisions come from the cache; managed fields are dead weight there.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	}
}

// trustedProxies parses --trusted-proxies: CIDRs, or "none". Unset, it is refused when the
// facade listens beyond loopback (issue 25 item 3): behind an Ingress or a load balancer every
// caller then has the proxy's address, and six bad keys from anyone lock every tenant out of
// the facade (spec 5.3). Only the operator knows whether a proxy is in front, so payoutd asks
// rather than guesses; on loopback (make run, tests) the caller is the peer.
func trustedProxies(value, apiAddr string) ([]netip.Prefix, error) {
	value = strings.TrimSpace(value)
	switch value {
	case "none":
		return nil, nil
	case "":
		if loopback(apiAddr) {
			return nil, nil
		}
		return nil, fmt.Errorf("--trusted-proxies: the facade listens on %s, beyond loopback: set it to the CIDRs of the Ingress or load balancer in front of the facade, or to none when callers reach it directly (docs/operations/deploy.md)", apiAddr)
	}
	proxies, err := apiserver.ParsePrefixes(strings.Split(value, ","))
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies: %w (CIDRs separated by commas, or none)", err)
	}
	return proxies, nil
}

// loopback reports whether a listen address is on loopback only: "127.0.0.1:8080",
// "[::1]:0", "localhost:8080". An empty host (":8080") listens on every interface, and any
// other host name counts as beyond loopback, since it may resolve to anything.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// newFacade builds the REST facade and its compliance and pricing parts.
func newFacade(ctx context.Context, o *options, mgr ctrl.Manager, synced *syncGate, addresses apiserver.DepositAddresses,
	store *archive.Store, risk walletscreen.Screener, log logr.Logger) (*apiserver.Server, *sanctions.Screener, error) {
	catalog := bankaccount.Default()
	if o.bankDataDir != "" {
		var err error
		if catalog, err = bankaccount.LoadDir(o.bankDataDir); err != nil {
			return nil, nil, fmt.Errorf("bank data %s: %w", o.bankDataDir, err)
		}
	}
	load := sanctions.Embedded
	switch {
	case o.sanctionsDir != "":
		load = func() (*sanctions.List, error) { return sanctions.LoadDir(o.sanctionsDir) }
	case o.sanctionsURL != "":
		feed, err := sanctions.NewFeed(sanctions.Feed{SDNURL: o.sanctionsURL, ConsolidatedURL: o.sanctionsConsURL})
		if err != nil {
			return nil, nil, err
		}
		load = feed.Load
	}
	if o.sanctionsMaxAge <= 0 {
		log.Info("--sanctions-max-age=0: recipients are screened against the list however old it is (development only)")
	}
	screener := sanctions.NewScreener(load, sanctions.WithMaxAge(o.sanctionsMaxAge))
	payoutmetrics.WatchSanctionsAge(screener.Age)
	if err := screener.LastError(); err != nil {
		// Fail closed, not down: recipient creation answers 503 until a reload succeeds.
		log.Error(err, "sanctions data could not be loaded; recipient screening will answer 503 until a reload succeeds")
	} else {
		logReload(log, screener, nil)
	}
	rates, err := rateSource(ctx, o, log)
	if err != nil {
		return nil, nil, err
	}
	var verifier kyc.Verifier = kyc.Store{Reader: mgr.GetClient()}
	if o.kycURL != "" {
		verifier = kyc.HTTP{Service: remote.Service{BaseURL: o.kycURL, Token: o.kycToken.Value}}
	}
	var origins []string
	for _, origin := range strings.Split(o.mcpAllowedOrigins, ",") {
		if origin = strings.TrimSuffix(strings.TrimSpace(origin), "/"); origin != "" {
			if u, err := url.Parse(origin); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
				return nil, nil, fmt.Errorf("--mcp-allowed-origins: %q is not an origin (scheme://host[:port])", origin)
			}
			origins = append(origins, origin)
		}
	}
	browser, dash, err := o.dashboard.build(mgr, log, catalog.Currencies(), o.limits)
	if err != nil {
		return nil, nil, err
	}
	var dashHandler http.Handler // a nil *Dashboard in it would not be a nil Handler
	if dash != nil {
		dashHandler = dash
	}
	srv, err := apiserver.New(apiserver.Config{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Informers:         mgr.GetCache(),
		Catalog:           catalog,
		Sanctions:         screener,
		KYC:               verifier,
		WalletScreen:      risk,
		Rates:             rates,
		Clock:             clock.RealClock{},
		Log:               facadeLog(o),
		TrustedProxies:    o.proxies,
		MaxBodyBytes:      o.maxBodyBytes,
		KeyLastUsedWrites: o.keyUseWrites,
		Ready:             synced.err,
		Deposits:          addresses,
		TransferExpiry:    o.transferExpiry,
		SharedLimits:      o.limits,
		Archive:           store,
		MCPAllowedOrigins: origins,
		Browser:           browser,
		Dashboard:         dashHandler,
	})
	if err == nil && dash != nil {
		// its pages call the API in process, as the signed-in user
		dash.SetAPI(srv.Handler())
	}
	return srv, screener, err
}

// facadeLog is the facade's logger: the root logger's when main made one, else ctrl.Log's.
func facadeLog(o *options) logr.Logger {
	if o.logger.GetSink() != nil {
		return o.logger.WithName("facade")
	}
	return ctrl.Log.WithName("facade")
}

// openArchive connects to the transfer archive (internal/archive) when one is configured; nil
// otherwise. An archive that is down at start is reached once it is up (503s meanwhile).
func openArchive(ctx context.Context, o *options, log logr.Logger) (*archive.Store, error) {
	if !o.archive.Enabled() {
		log.Info("no archive DSN (a file at --archive-dsn-file, $"+archive.DSNEnv+"): finished transfers stay in the API server",
			"archiveDSNFile", o.archive.DSNFile)
		return nil, nil
	}
	store, err := archive.Open(ctx, o.archive.DSN.Reveal())
	if err != nil {
		return nil, err
	}
	go func() { <-ctx.Done(); store.Close() }()
	// its tables now, not in a customer's first lookup; an archive down at start gets them then
	if err := store.Migrate(ctx); err != nil {
		log.Error(err, "the transfer archive cannot be reached yet")
	}
	log.Info("finished transfers move to the archive", "retention", o.archive.Retention)
	return store, nil
}

// rateSource is the embedded snapshot, a snapshot file, or a live refresher.
func rateSource(ctx context.Context, o *options, log logr.Logger) (pricing.RateSource, error) {
	switch {
	case o.ratesURL != "":
		r, err := pricing.NewRefresher(pricing.RefresherConfig{URL: o.ratesURL, MaxAge: o.ratesMaxAge})
		if err != nil {
			return nil, err
		}
		// The first poll before the facade opens, so a starting replica quotes at once.
		if err := r.Refresh(ctx); err != nil {
			log.Error(err, "the rate feed could not be read; quotes answer 503 until a poll succeeds")
		}
		go r.Run(ctx)
		// The age of the rates in force is the number an operator watches: quotes stop at MaxAge.
		payoutmetrics.WatchRatesAge(r.Age)
		log.Info("pricing from a live rate source", "maxAge", o.ratesMaxAge)
		return r, nil
	case o.ratesFile != "":
		return pricing.LoadSnapshotFile(o.ratesFile)
	}
	return pricing.NewSnapshot()
}

// reloadOnHangup reloads the sanctions list on SIGHUP; a failed reload keeps the old list.
func reloadOnHangup(ctx context.Context, s *sanctions.Screener, log logr.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			logReload(log, s, s.Reload())
		}
	}
}

// logReload logs the outcome of a load of the sanctions list: the publish date of the list in
// force is what an operator checks (payout_sanctions_list_age_seconds counts from it).
func logReload(log logr.Logger, s *sanctions.Screener, err error) {
	l := s.List()
	if err != nil {
		kv := []any{"haveList", l != nil}
		if l != nil {
			kv = append(kv, "published", l.Published(), "stale", s.Stale())
		}
		log.Error(err, "sanctions list load failed; the previous list stays in force", kv...)
		return
	}
	log.Info("sanctions list in force", "published", l.Published(), "entries", l.Len(), "stale", s.Stale(), "source", l.Source())
}

// warmKinds are read by the facade; their informers start (and sync) before it reports ready,
// so that the first request of each kind does not wait for a list.
var warmKinds = []client.Object{
	&payoutv1.PayoutAccount{}, &payoutv1.APIKey{}, &payoutv1.Recipient{}, &payoutv1.Transfer{},
	&payoutv1.Wallet{}, &payoutv1.BlockedWallet{}, &payoutv1.DepositOption{}, &payoutv1.Deposit{}, &payoutv1.Quote{},
	&payoutv1.ChainCursor{},
}
