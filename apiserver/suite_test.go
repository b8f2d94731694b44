package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The facade suite runs the real facade against a real kube-apiserver and etcd, through the
// informer cache of a manager, as payoutd runs it; every response it receives is validated
// against the OpenAPI document.
func TestFacade(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "REST facade suite")
}

var (
	baseCfg  Config
	env      *testenv.Env
	srv      *Server
	fakeNow  *clocktesting.FakeClock
	oaRouter routers.Router
	ctx      context.Context
	cancel   context.CancelFunc
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// controllers and informers run alongside; on a busy 2-core CI machine they take a moment
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())

	opts := controllers.DefaultOptions()
	// base's deposit watcher is in sync for the whole suite (a cursor written once, its heartbeat
	// allowed to age); the other networks have no watcher
	opts.ChainHeartbeatMaxAge = 24 * time.Hour
	bank, err := simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: GinkgoT().TempDir(), SettleAfter: 200 * time.Millisecond, Token: "facade-suite"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bank.Close)
	bankCfg := wise.DefaultConfig()
	bankCfg.BaseURL, bankCfg.Token, bankCfg.ProfileID = bank.URL(), secret.New("facade-suite"), 1
	opts.Provider, err = wise.New(bankCfg)
	Expect(err).NotTo(HaveOccurred())
	base := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "base"}, Spec: payoutv1.ChainCursorSpec{Network: payoutv1.NetworkBase}}
	Expect(env.Client.Create(ctx, base)).To(Succeed())
	heartbeat := metav1.Now()
	base.Status = payoutv1.ChainCursorStatus{Synced: true, HeartbeatAt: &heartbeat, Head: 100}
	Expect(env.Client.Status().Update(ctx, base)).To(Succeed())
	mgr := env.StartManager(ctx, GinkgoT(), func(mgr manager.Manager) error { return controllers.Setup(mgr, opts) })

	fakeNow = clocktesting.NewFakeClock(time.Now())
	rates, err := pricing.NewSnapshot()
	Expect(err).NotTo(HaveOccurred())
	baseCfg = Config{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Informers:    mgr.GetCache(),
		Catalog:      bankaccount.Default(),
		Sanctions:    sanctions.NewScreener(sanctions.Embedded),
		KYC:          kyc.Store{Reader: mgr.GetClient()},
		WalletScreen: walletscreen.LocalList{Reader: mgr.GetClient()},
		Rates:        rates,
		Clock:        fakeNow,
		Log:          ctrl.Log.WithName("facade"),
		Deposits:     testDepositAddresses(),
	}
	srv = openServer(baseCfg)

	doc, err := openAPIJSON()
	Expect(err).NotTo(HaveOccurred())
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	Expect(err).NotTo(HaveOccurred())
	spec.Servers = openapi3.Servers{{URL: srv.URL()}}
	oaRouter, err = legacy.NewRouter(spec)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// openServer starts a facade on a free loopback port, changed by mods before it serves; it stops
// with the suite.
func openServer(cfg Config, mods ...func(*Server)) *Server {
	GinkgoHelper()
	s, err := New(cfg)
	Expect(err).NotTo(HaveOccurred())
	for _, m := range mods {
		m(s)
	}
	Expect(s.Open("127.0.0.1:0")).To(Succeed())
	DeferCleanup(s.Close)
	return s
}

// ipCounter hands out distinct caller addresses (127.77.x.y): the per-address limits of spec
// 5.3 must not leak from one test into another.
var ipCounter atomic.Uint32

func freshIP() string {
	n := ipCounter.Add(1)
	return fmt.Sprintf("127.77.%d.%d", n/250%250, n%250+2)
}

// caller is an HTTP client of the facade from one source address with one Authorization value.
type caller struct {
	ip   string
	auth string
	hc   *http.Client
	base string // the facade's URL; empty means the suite's srv
}

func newCaller(auth string) *caller {
	ip := freshIP()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &caller{ip: ip, auth: auth, hc: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}}
}

// as returns a caller from the same address with another Authorization value.
func (c *caller) as(auth string) *caller { cp := *c; cp.auth = auth; return &cp }

// on returns the same caller talking to another facade.
func (c *caller) on(s *Server) *caller { cp := *c; cp.base = s.URL(); return &cp }

// response is a fully read response.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json() map[string]any {
	GinkgoHelper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	Expect(dec.Decode(&m)).To(Succeed(), "body %s", r.body)
	return m
}

func (r *response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// do sends a request (body: nil, string, []byte or a value for JSON) and validates the
// response against the OpenAPI document.
func (c *caller) do(method, path string, body any) *response {
	GinkgoHelper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(j)
	}
	base := c.base
	if base == "" {
		base = srv.URL()
	}
	req, err := http.NewRequest(method, base+path, rd)
	Expect(err).NotTo(HaveOccurred())
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	r := &response{status: resp.StatusCode, header: resp.Header, body: data}
	validateResponse(req, r)
	return r
}

func (c *caller) get(path string) *response { GinkgoHelper(); return c.do("GET", path, nil) }
func (c *caller) post(path string, body any) *response {
	GinkgoHelper()
	return c.do("POST", path, body)
}

// validateResponse checks a response against the OpenAPI document: every documented route's
// answers, errors included, must match it; undocumented paths must still carry the error body.
func validateResponse(req *http.Request, r *response) {
	GinkgoHelper()
	Expect(r.header.Get("Content-Type")).To(HavePrefix("application/json"), "%s %s: %s", req.Method, req.URL.Path, r)
	// the document names the suite's srv as its server; another facade's answers match it alike
	if host := strings.TrimPrefix(srv.URL(), "http://"); req.URL.Host != host {
		req = req.Clone(req.Context())
		req.URL.Host, req.Host = host, host
	}
	route, params, err := oaRouter.FindRoute(req)
	if err != nil {
		var m map[string]any
		Expect(json.Unmarshal(r.body, &m)).To(Succeed())
		Expect(m).To(HaveKeyWithValue("error", Not(BeEmpty())))
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  r.status,
		Header:  r.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(r.body)
	Expect(openapi3filter.ValidateResponse(context.Background(), in)).To(Succeed(), "%s %s -> %s", req.Method, req.URL.String(), r)
}

// account is a test account with one key and a caller of its own.
type account struct {
	name  string
	key   apikey.Key
	c     *caller
	model *payoutv1.PayoutAccount
}

var accountCounter atomic.Uint32

// newAccount stores an account (changed by mods) with its namespace and one API key, and waits
// until the facade accepts the key.
func newAccount(mods ...func(*payoutv1.PayoutAccount)) *account {
	GinkgoHelper()
	catchUpClock()
	name := fmt.Sprintf("facade-%d", accountCounter.Add(1))
	a := testgen.Account(name, mods...)
	Expect(env.Client.Create(ctx, a)).To(Succeed())
	Expect(tenancy.EnsureNamespace(ctx, env.Client, a)).To(Succeed())
	key := issueKey(name)
	acct := &account{name: name, key: key, c: newCaller("Bearer " + key.Full), model: a}
	// the key is known once it stops answering 401 (an allow-list may still refuse it)
	Eventually(func() int { return acct.c.get("/api/payouts/amount-limits").status }).WithTimeout(10 * time.Second).ShouldNot(Equal(401))
	return acct
}

// catchUpClock moves the facade's clock forward to the wall clock, never back. The controllers
// run on the wall clock: a facade clock left behind by a long run would date a recipient's
// deletion past the transfer controller's grace, and the controller would fail the recipient's
// transfers before the deletion could cancel and count them.
func catchUpClock() {
	if now := time.Now(); fakeNow.Now().Before(now) {
		fakeNow.SetTime(now)
	}
}

// mutate changes obj's spec with a merge patch, which controllers writing status concurrently
// cannot make conflict.
func mutate(obj client.Object, change func()) {
	GinkgoHelper()
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	change()
	Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())
}

func objKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// issueKey issues a key of account as the plugin does.
func issueKey(account string) apikey.Key {
	GinkgoHelper()
	full, id, err := admin.IssueKey(ctx, env.Client, account)
	Expect(err).NotTo(HaveOccurred())
	return apikey.Key{ID: id, Full: full, Hash: apikey.Hash(full)}
}

// unlimited lifts every per-key budget of a facade, for tests that send more requests than a
// minute's budget allows.
func unlimited(s *Server) {
	all := map[string]int64{}
	for name := range budgets {
		all[name] = 1 << 40
	}
	s.limits = newKeyLimitsPer(all, time.Minute, s.shared)
}

// errorText asserts an error response with the given status and returns its text.
func errorText(r *response, status int) string {
	GinkgoHelper()
	Expect(r.status).To(Equal(status), "%s", r)
	m := r.json()
	s, ok := m["error"].(string)
	Expect(ok && s != "").To(BeTrue(), "error body %s", r)
	return s
}

// testDepositAddresses issues deposit addresses as payoutd does: v1 ones derived from a fresh
// BIP-32 key, the v2 one of USDC on base from the chain configuration.
func testDepositAddresses() depositkey.Addresses {
	GinkgoHelper()
	return depositAddresses(`networks:
  base:
    rpc: [http://127.0.0.1:1]
    tokens:
      usdc:
        contract: "0x00000000000000000000000000000000000000c1"
        platformAddress: "0x00000000000000000000000000000000000000f2"
`)
}

// depositAddresses issues v1 addresses from a fresh BIP-32 key and v2 ones from the chain
// configuration chains.
func depositAddresses(chains string) depositkey.Addresses {
	GinkgoHelper()
	_, xpub, err := depositkey.Generate()
	Expect(err).NotTo(HaveOccurred())
	pub, err := depositkey.NewPublic(xpub)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := chainconfig.Parse([]byte(chains))
	Expect(err).NotTo(HaveOccurred())
	return depositkey.Addresses{Public: pub, Config: cfg}
}
