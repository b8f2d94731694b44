// Package apiserver is the REST facade of the payout service: it serves the public API of
// spec/payout-api.md on top of the custom resources, reading from the informer cache and
// writing to the Kubernetes API server.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/keyuse"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
)

// Config wires the facade to its parts.
type Config struct {
	// Client reads from the informer cache and writes to the API server.
	Client client.Client
	// APIReader reads past the cache, where a stale read could cost money.
	APIReader client.Reader
	// Informers is the cache behind Client (a manager's GetCache()): the reads every request
	// makes go to its informers' stores directly (stores.go), and the recipient list's pages are
	// kept in order from its events (recipientBook).
	Informers cache.Informers
	// Catalog holds the account requirements and validates recipient details.
	Catalog *bankaccount.Catalog
	// Sanctions screens recipient holders.
	Sanctions *sanctions.Screener
	// KYC answers whether a wallet is KYC-verified for an account.
	KYC kyc.Verifier
	// WalletScreen screens sender wallets against the risk list.
	WalletScreen walletscreen.Screener
	// Rates price quotes.
	Rates pricing.RateSource
	// Clock is the time source of quotes and limits.
	Clock clock.Clock
	// Log receives the access log and errors.
	Log logr.Logger
	// TrustedProxies are the proxies whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// MaxBodyBytes caps request bodies (413 beyond).
	MaxBodyBytes int64
	// Ready reports whether the facade can serve (the cache has synced); nil means ready.
	Ready func() error
	// Deposits issues deposit addresses: one per v1 transfer, the fixed v2 ones.
	Deposits DepositAddresses
	// TransferExpiry is how long a v1 transfer waits for its deposit (default 24 h).
	TransferExpiry time.Duration
	// SharedLimits is where the replicas share the per-key rate limits (spec 8.1) and the
	// per-address authentication-failure limits (spec 5.3): a Redis server. Not configured
	// (the zero value): each replica counts in its own memory. New connects (without waiting
	// for Redis to answer), Close disconnects.
	SharedLimits sharedlimits.Config
	// MCPAllowedOrigins are the browser origins allowed to call the MCP endpoint (none by
	// default: API keys are for server-side use, and a request with any other Origin is refused).
	MCPAllowedOrigins []string
	// Archive holds the finished transfers and deleted recipients that left the API server
	// (see archive.go); nil when archiving is off.
	Archive *archive.Store
	// Browser accepts the dashboard's signed-in users (spec 5.6) besides API keys; the zero
	// value accepts none, and every JWT-shaped bearer value is then a malformed key.
	Browser BrowserCallers
	// Dashboard, when set, is served under DashboardPath on the facade's listener, behind the
	// same door (the brute-force limits of spec 5.3) as the API.
	Dashboard http.Handler
	// KeyLastUsedInterval is the granularity of an API key's recorded last use (internal/keyuse):
	// a key's payoutv1.APIKeyLastUsedAnnotation is written at most once per interval per replica,
	// off the request path. Zero means keyuse.DefaultInterval (a minute).
	KeyLastUsedInterval time.Duration
	// KeyLastUsedWrites is the most of those writes a replica makes a second; keys used meanwhile
	// wait their turn (internal/keyuse). Zero means keyuse.DefaultWrites.
	KeyLastUsedWrites float64
}

// Server is the facade: an http.Handler plus the listener lifecycle.
type Server struct {
	cfg     Config
	guard   limitGuard
	limits  *keyLimits
	keys    *keyLookup
	clients *clientShare
	keyUse  *keyuse.Recorder
	// stopKeyUse ends the last-use writer Open started.
	stopKeyUse context.CancelFunc
	quotas     quotaSlots
	// events wakes the requests that wait for the cache to show their writes (awaitCache).
	events cacheEvents
	book   *recipientBook
	shared *sharedlimits.Store // nil: in-memory limits
	stores *stores
	// namespaceWait is how long a create waits for its account's namespace (createOwned).
	namespaceWait time.Duration
	// transferBook holds the cached transfers by id with their lookup answers (GET transfer).
	transferBook *transferBook
	options      optionsBody
	handler      http.Handler
	mcp          http.Handler
	openapi      []byte

	ln  net.Listener
	srv *http.Server
}

// New builds the facade.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil || cfg.Informers == nil || cfg.Catalog == nil || cfg.Sanctions == nil || cfg.KYC == nil || cfg.WalletScreen == nil || cfg.Rates == nil || cfg.Deposits == nil {
		return nil, errors.New("apiserver: Client, Informers, Catalog, Sanctions, KYC, WalletScreen, Rates and Deposits are required")
	}
	if cfg.TransferExpiry <= 0 {
		cfg.TransferExpiry = 24 * time.Hour
	}
	if cfg.APIReader == nil {
		cfg.APIReader = cfg.Client
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	doc, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	st, err := openStores(context.Background(), cfg.Informers)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, stores: st, namespaceWait: namespaceWait, transferBook: newTransferBook(), openapi: doc, keys: newKeyLookup(cfg.APIReader, cfg.Clock),
		clients: newClientShare(cfg.Clock.Now), keyUse: keyuse.New(cfg.Client, cfg.KeyLastUsedInterval, cfg.KeyLastUsedWrites, cfg.Log.WithName("keyuse"))}
	metrics.WatchBusiestClientShare(s.clients.share)
	local := newAuthGuard(10*time.Minute, 5, 10, cfg.Clock.Now)
	if cfg.SharedLimits.Configured() {
		if s.shared, err = sharedlimits.Open(cfg.SharedLimits, cfg.Log.WithName("limits")); err != nil {
			return nil, fmt.Errorf("shared limits: %w", err)
		}
		s.guard = newSharedGuard(local, s.shared)
		s.limits = newKeyLimitsPer(budgets, time.Minute, s.shared)
		cfg.Log.Info("rate limits and authentication-failure limits are shared in Redis", "addr", s.shared.Addr(), "keyPrefix", s.shared.KeyPrefix())
	} else {
		s.guard = memoryGuard{local}
		s.limits = newKeyLimits(budgets)
	}
	if s.mcp, err = s.newMCP(); err != nil {
		return nil, fmt.Errorf("the MCP tool server: %w", err)
	}
	// a started cache blocks here until the recipients are synced; payoutd builds the facade
	// before it starts the manager
	inf, err := cfg.Informers.GetInformer(context.Background(), &payoutv1.Recipient{})
	if err != nil {
		return nil, fmt.Errorf("the recipients' informer: %w", err)
	}
	s.book = newRecipientBook()
	if err := s.book.register(inf); err != nil {
		return nil, fmt.Errorf("the recipients' informer: %w", err)
	}
	tinf, err := cfg.Informers.GetInformer(context.Background(), &payoutv1.Transfer{})
	if err != nil {
		return nil, fmt.Errorf("the transfers' informer: %w", err)
	}
	if err := s.transferBook.register(tinf); err != nil {
		return nil, fmt.Errorf("the transfers' informer: %w", err)
	}
	// the types a request writes and then waits for the cache to show (awaitCached, awaitGone)
	for _, obj := range []client.Object{&payoutv1.Transfer{}, &payoutv1.Recipient{}} {
		if err := s.events.watch(context.Background(), cfg.Informers, obj); err != nil {
			return nil, fmt.Errorf("the %T informer: %w", obj, err)
		}
	}
	mux := s.newMux()
	budgetNames := make([]string, 0, len(budgets))
	for name := range budgets {
		budgetNames = append(budgetNames, name)
	}
	metrics.FacadeRoutes(s.routeTemplates(), budgetNames)
	s.handler = observe(cfg.Log, mux, s.door(limitBody(cfg.MaxBodyBytes, mux)))
	return s, nil
}

// Handler serves the API.
func (s *Server) Handler() http.Handler { return s.handler }

// Open starts listening on addr (":0" for a free port), so that a bind error surfaces before
// anything else starts, and serves in the background.
func (s *Server) Open(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	var ctx context.Context
	ctx, s.stopKeyUse = context.WithCancel(context.Background())
	go s.keyUse.Run(ctx)
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error(err, "facade stopped serving")
		}
	}()
	return nil
}

// URL is the base URL of the open server.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close shuts the server down, letting requests in flight finish for up to 10 s, and
// disconnects from the shared limits store.
func (s *Server) Close() error {
	var err error
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = s.srv.Shutdown(ctx)
	}
	if s.stopKeyUse != nil {
		s.stopKeyUse()
	}
	if s.shared != nil {
		err = errors.Join(err, s.shared.Close())
	}
	return err
}

// Runnable adapts an opened server to the controller-runtime manager: it serves until the
// manager stops and needs no leader election, so every replica serves.
type Runnable struct{ *Server }

// Start blocks until ctx ends, then shuts the server down.
func (r Runnable) Start(ctx context.Context) error {
	<-ctx.Done()
	return r.Close()
}

// NeedLeaderElection is false: the facade is stateless and runs on every replica.
func (Runnable) NeedLeaderElection() bool { return false }

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, _ *http.Request) {
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "not ready: " + err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
