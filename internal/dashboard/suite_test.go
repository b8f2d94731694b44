package dashboard

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/browsertoken"
	"github.com/stablepay/payout-operator/internal/dev/devoidc"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

func TestDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the dashboard's specs run on the control plane (envtest) and an OpenID Provider")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Dashboard Suite")
}

var (
	ctx       context.Context
	cancel    context.CancelFunc
	env       *testenv.Env
	cached    client.Client
	informers cache.Informers
	acctCount atomic.Int32
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(15 * time.Second)
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	mgr := env.StartManager(ctx, GinkgoT())
	cached = mgr.GetClient()
	informers = mgr.GetCache()
	// the keys' informer starts with the first list
	Expect(cached.List(ctx, &payoutv1.APIKeyList{})).To(Succeed())
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// clock is a settable clock of the dashboard: wall time plus an offset.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time       { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.offset) }
func (c *clock) Step(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.offset += d }

// site is a dashboard served on loopback with its own dev OpenID Provider and two users, each
// on an account of its own.
type site struct {
	url, op      string
	dash         *Dashboard
	keys         *browsertoken.Keys
	clock        *clock
	user1, user2 string // account names
	accounts     map[string]*payoutv1.PayoutAccount
}

const audience = "https://api.test"

func newSite() *site {
	GinkgoHelper()
	s := &site{clock: &clock{}, accounts: map[string]*payoutv1.PayoutAccount{}}
	n := acctCount.Add(2)
	s.user1, s.user2 = fmt.Sprintf("dash-%d", n-1), fmt.Sprintf("dash-%d", n)
	for _, name := range []string{s.user1, s.user2} {
		a := testgen.Account(name)
		Expect(env.Client.Create(ctx, a)).To(Succeed())
		s.accounts[name] = a
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	s.url = "http://" + ln.Addr().String() + "/dashboard/"
	op, err := devoidc.Start(devoidc.Options{Addr: "127.0.0.1:0", ClientID: "dashboard", ClientSecret: "dev-secret",
		RedirectURI: s.url + "callback", AccountClaim: "payout_account",
		Users: []devoidc.User{{Username: "alice", Password: "alice-pw", Account: s.user1}, {Username: "bob", Password: "bob-pw", Account: s.user2}}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(op.Close)
	s.op = op.Issuer()
	pemKey, err := browsertoken.NewKeyPEM()
	Expect(err).NotTo(HaveOccurred())
	s.keys, err = browsertoken.ParseKeys(pemKey)
	Expect(err).NotTo(HaveOccurred())
	s.dash, err = New(Config{URL: s.url, Issuer: s.op, ClientID: "dashboard", ClientSecret: "dev-secret", AccountClaim: "payout_account",
		Client: cached, Reader: env.Client, Tokens: s.keys, TokenAudience: audience,
		IdleTimeout: 10 * time.Minute, AbsoluteTimeout: time.Hour, Now: s.clock.Now, Currencies: bankaccount.Default().Currencies(), Log: ctrl.Log.WithName("dashboard")})
	Expect(err).NotTo(HaveOccurred())
	srv := &http.Server{Handler: s.dash, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	DeferCleanup(srv.Close)
	return s
}

// browser is an HTTP client with a cookie jar; it does not follow redirects on its own.
type browser struct {
	hc *http.Client
}

func newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{hc: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type reply struct {
	status int
	loc    string
	body   string
	header http.Header
}

func (b *browser) do(method, u string, form url.Values, header ...string) reply {
	GinkgoHelper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	Expect(err).NotTo(HaveOccurred())
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	loc := resp.Header.Get("Location")
	if loc != "" {
		l, err := resp.Request.URL.Parse(loc)
		Expect(err).NotTo(HaveOccurred())
		loc = l.String()
	}
	return reply{status: resp.StatusCode, loc: loc, body: string(raw), header: resp.Header}
}

func (b *browser) get(u string) reply { GinkgoHelper(); return b.do("GET", u, nil) }

// follow GETs u and its redirects, at most ten.
func (b *browser) follow(u string) (reply, string) {
	GinkgoHelper()
	for range 10 {
		p := b.get(u)
		if p.loc == "" {
			return p, u
		}
		u = p.loc
	}
	Fail("more than ten redirects")
	return reply{}, ""
}

var (
	hiddenID = regexp.MustCompile(`name="id" value="([^"]+)"`)
	csrfRe   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	fullKey  = regexp.MustCompile(`svc_live_[a-z0-9]+_[A-Za-z0-9]+`)
)

// signIn goes through the whole sign-in as a browser would: the dashboard's redirect to the
// provider, the provider's login form, the code back to the callback and its page on to the
// developer area. It returns the developer area's page.
func (s *site) signIn(b *browser, user, password string) reply {
	GinkgoHelper()
	login, at := b.follow(s.url + "login")
	Expect(login.status).To(Equal(200), "%s: %s", at, login.body)
	Expect(at).To(HavePrefix(s.op), "the sign-in goes to the provider")
	start, _ := url.Parse(at)
	Expect(start.Path).To(ContainSubstring("login"))
	m := hiddenID.FindStringSubmatch(login.body)
	Expect(m).NotTo(BeNil(), "the provider's login form: %s", login.body)
	posted := b.do("POST", s.op+"/login/username", url.Values{"username": {user}, "password": {password}, "id": {m[1]}})
	Expect(posted.status).To(Equal(http.StatusFound), "%s", posted.body)
	landed, at := b.follow(posted.loc)
	Expect(landed.status).To(Equal(200), "%s: %s", at, landed.body)
	Expect(at).To(HavePrefix(s.url + "callback"))
	Expect(landed.body).To(ContainSubstring(`http-equiv="refresh"`))
	keys := b.get(s.url + "keys")
	Expect(keys.status).To(Equal(200), keys.body)
	return keys
}

func csrfOf(p reply) string {
	GinkgoHelper()
	m := csrfRe.FindStringSubmatch(p.body)
	Expect(m).NotTo(BeNil(), "no CSRF token in %s", p.body)
	return m[1]
}

func (s *site) sessionCookie(b *browser) *http.Cookie {
	GinkgoHelper()
	u, _ := url.Parse(s.url)
	for _, c := range b.hc.Jar.Cookies(u) {
		if c.Name == "payout_session" {
			return c
		}
	}
	Fail("no session cookie")
	return nil
}

func keysOf(account string) []payoutv1.APIKey {
	GinkgoHelper()
	var list payoutv1.APIKeyList
	Expect(env.Client.List(ctx, &list)).To(Succeed())
	var out []payoutv1.APIKey
	for _, k := range list.Items {
		if k.Spec.Account == account {
			out = append(out, k)
		}
	}
	return out
}
