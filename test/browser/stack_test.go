package browser_test

import (
	"context"
	"crypto/ecdsa"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/browsertoken"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/dashboard"
	"github.com/stablepay/payout-operator/internal/dev/devoidc"
	"github.com/stablepay/payout-operator/internal/dev/simkyc"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/kycsite"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The pages run as payoutd runs them, in process: the REST facade on a loopback listener with
// the dashboard under /dashboard/, the dev OpenID Provider with two users on two accounts, the
// wallet verification site on a listener of its own with the simulated KYC vendor, all on a
// real API server (envtest) read through a manager's cache.
var (
	env    *testenv.Env
	cached client.Client
	stack  *services
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // every test here starts a browser and skips
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stack, err = start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stack.close()
	return m.Run()
}

// clock is the dashboard's: wall time plus an offset (an expired browser token is one minted
// in the past).
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.offset) }
func (c *clock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = d
}

type services struct {
	api, dash    string // the facade's origin, the dashboard's URL under it
	user1, user2 string // the accounts of alice and bob
	kycAccount   string // an account that requires KYC'd wallets
	dashClock    *clock
	kyc          *kycsite.Server
	kycClock     *clocktesting.FakeClock
	linkKey      []byte
	closers      []func()
}

func (s *services) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

const audience = "https://api.browser.test"

func start(ctx context.Context) (*services, error) {
	s := &services{user1: "browser-alice", user2: "browser-bob", kycAccount: "browser-kyc", dashClock: &clock{},
		linkKey: []byte("browser-test-link-key-0123456789abcdef")}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, err
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the cache did not sync")
	}
	cached = mgr.GetClient()
	for _, name := range []string{s.user1, s.user2, s.kycAccount} {
		a := testgen.Account(name, func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = name == s.kycAccount })
		if err := env.Client.Create(ctx, a); err != nil {
			return nil, err
		}
		// the account controller's work, not running here
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.AccountNamespace(name)}}
		if err := env.Client.Create(ctx, ns); err != nil {
			return nil, err
		}
	}
	// the keys' informer starts with the first list
	if err := cached.List(ctx, &payoutv1.APIKeyList{}); err != nil {
		return nil, err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.api = "http://" + ln.Addr().String()
	s.dash = s.api + "/dashboard/"
	op, err := devoidc.Start(devoidc.Options{Addr: "127.0.0.1:0", ClientID: "dashboard", ClientSecret: "dev-secret",
		RedirectURI: s.dash + "callback", AccountClaim: "payout_account",
		Users: []devoidc.User{{Username: "alice", Password: "alice-pw", Account: s.user1}, {Username: "bob", Password: "bob-pw", Account: s.user2}}})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = op.Close() })
	pemKey, err := browsertoken.NewKeyPEM()
	if err != nil {
		return nil, err
	}
	keys, err := browsertoken.ParseKeys(pemKey)
	if err != nil {
		return nil, err
	}
	dash, err := dashboard.New(dashboard.Config{URL: s.dash, Issuer: op.Issuer(), ClientID: "dashboard", ClientSecret: "dev-secret",
		AccountClaim: "payout_account", Client: cached, Reader: env.Client, Tokens: keys, TokenAudience: audience,
		Now: s.dashClock.Now, Currencies: bankaccount.Default().Currencies(), Log: ctrl.Log.WithName("dashboard")})
	if err != nil {
		return nil, err
	}
	_, xpub, err := depositkey.Generate()
	if err != nil {
		return nil, err
	}
	pub, err := depositkey.NewPublic(xpub)
	if err != nil {
		return nil, err
	}
	chains, err := chainconfig.Parse([]byte("networks:\n  base:\n    rpc: [http://127.0.0.1:1]\n    tokens:\n      usdc:\n        contract: \"0x00000000000000000000000000000000000000c1\"\n        platformAddress: \"0x00000000000000000000000000000000000000f2\"\n"))
	if err != nil {
		return nil, err
	}
	rates, err := pricing.NewSnapshot()
	if err != nil {
		return nil, err
	}
	facade, err := apiserver.New(apiserver.Config{
		Client: cached, APIReader: env.Client, Informers: mgr.GetCache(), Catalog: bankaccount.Default(),
		Sanctions: sanctions.NewScreener(sanctions.Embedded), KYC: kyc.Store{Reader: cached},
		WalletScreen: walletscreen.LocalList{Reader: cached}, Rates: rates,
		Deposits: depositkey.Addresses{Public: pub, Config: chains},
		Browser:  apiserver.BrowserCallers{Keys: keys, Issuer: s.dash, Audience: audience},
		Log:      ctrl.Log.WithName("facade"), Dashboard: dash,
	})
	if err != nil {
		return nil, err
	}
	dash.SetAPI(facade.Handler())
	srv := &http.Server{Handler: facade.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.closers = append(s.closers, func() { _ = srv.Close() })

	// the wallet site and its vendor
	kln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	kycURL := "http://" + kln.Addr().String()
	secret := []byte("browser-vendor-secret")
	vendor, err := simkyc.Start(simkyc.Options{Addr: "127.0.0.1:0", CallbackURL: kycURL + "/vendor/callback", Secret: secret})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = vendor.Close() })
	s.kycClock = clocktesting.NewFakeClock(time.Now())
	if s.kyc, err = kycsite.New(kycsite.Config{Client: cached, APIReader: env.Client, URL: kycURL, ChainID: 1, LinkKey: s.linkKey,
		Vendor: kycsite.Vendor{URL: vendor.URL(), Secret: secret}, Clock: s.kycClock, Log: ctrl.Log.WithName("kycsite")}); err != nil {
		return nil, err
	}
	ksrv := &http.Server{Handler: s.kyc.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = ksrv.Serve(kln) }()
	s.closers = append(s.closers, func() { _ = ksrv.Close() })
	return s, nil
}

// personalSign signs text as a wallet's personal_sign does (EIP-191), hex with v of 27/28.
func personalSign(key *ecdsa.PrivateKey, text string) (string, error) {
	sig, err := crypto.Sign(accounts.TextHash([]byte(text)), key)
	if err != nil {
		return "", err
	}
	sig[64] += 27
	return hexutil.Encode(sig), nil
}
