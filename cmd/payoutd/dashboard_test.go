package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/browsertoken"
	"github.com/stablepay/payout-operator/internal/dev/devoidc"
)

// The dashboard's transfer page end to end (issue 28): payoutd with its dashboard, a user
// signed in through the dev OpenID Provider, a v1 transfer created on the dashboard's pages,
// its deposit sent on anvil, and the status the page's script polls reaching completed once
// the simulated bank paid.
var _ = Describe("the dashboard's transfer page", func() {
	It("follows a v1 transfer made on its pages to completed after the deposit is sent on anvil", func() {
		addr, opAddr := freeAddr(), freeAddr()
		dashURL := "http://" + addr + "/dashboard/"
		keyPEM, err := browsertoken.NewKeyPEM()
		Expect(err).NotTo(HaveOccurred())
		keyFile := filepath.Join(GinkgoT().TempDir(), "token-key.pem")
		Expect(os.WriteFile(keyFile, keyPEM, 0o600)).To(Succeed())
		Expect(os.Setenv("PAYOUT_FIAT_TOKEN", bankToken)).To(Succeed())
		Expect(os.Setenv("PAYOUT_DASHBOARD_OIDC_CLIENT_SECRET", "dev-secret")).To(Succeed())
		DeferCleanup(os.Unsetenv, "PAYOUT_DASHBOARD_OIDC_CLIENT_SECRET")
		// the dashboard finds its provider at the first sign-in: the provider starts once the
		// account its user signs in to is made
		DeferCleanup(goRun(env.Config, payoutdArgs(addr, "--dashboard-url", dashURL, "--dashboard-oidc-issuer", "http://"+opAddr,
			"--dashboard-oidc-client-id", "dashboard", "--dashboard-token-key-file", keyFile)))
		Eventually(func() error { return ping("http://" + addr) }).Should(Succeed())
		waitBaseAvailable()
		acct := newAccount("http://" + addr)
		op, err := devoidc.Start(devoidc.Options{Addr: opAddr, ClientID: "dashboard", ClientSecret: "dev-secret",
			RedirectURI: dashURL + "callback", AccountClaim: "payout_account",
			Users: []devoidc.User{{Username: "alice", Password: "alice-pw", Account: acct.name}}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(op.Close)
		Expect(op.Issuer()).To(Equal("http://" + opAddr))

		b := newDashBrowser()
		b.signIn(dashURL, op.Issuer(), "alice", "alice-pw")
		csrf := b.csrf(b.page(dashURL + "keys"))
		made := b.post(dashURL+"recipient?currency=EUR", url.Values{"csrf": {csrf}, "action": {"save"}, "type": {"iban"},
			"accountHolderName": {"Erika Mustermann"}, "d.legalType": {"PRIVATE"}, "d.iban": {"DE89370400440532013000"}})
		Expect(made.StatusCode).To(Equal(http.StatusSeeOther))
		var rid string
		Eventually(func() string {
			m := regexp.MustCompile(`<option value="(\d+)">Erika Mustermann`).FindStringSubmatch(b.page(dashURL + "transfer-new"))
			if m == nil {
				return ""
			}
			rid = m[1]
			return rid
		}).ShouldNot(BeEmpty())
		created := b.post(dashURL+"transfer-new", url.Values{"csrf": {csrf}, "action": {"create"}, "recipientId": {rid}, "amount": {"12.50"},
			"option": {"usdc/base"}, "method": {"v1"}, "customer_email": {"payer@example.com"}, "wallet_address": {crypto0x()}})
		Expect(created.StatusCode).To(Equal(http.StatusSeeOther))
		loc, err := created.Location()
		Expect(err).NotTo(HaveOccurred())
		id := loc.Query().Get("id")
		Expect(id).To(HaveLen(24))

		page := b.page(dashURL + "transfer?id=" + id)
		Expect(page).To(ContainSubstring(`<strong id="transfer-amount">12.50</strong>`))
		m := regexp.MustCompile(`<code id="deposit-address">(0x[0-9a-fA-F]{40})</code>`).FindStringSubmatch(page)
		Expect(m).NotTo(BeNil(), page)
		deposit(m[1], "12.50")

		var st struct {
			Status string `json:"status"`
			Ended  bool   `json:"ended"`
		}
		Eventually(func() string {
			_ = json.Unmarshal([]byte(b.page(dashURL+"transfer-status?id="+id)), &st)
			return st.Status
		}).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Equal("completed"))
		Expect(st.Ended).To(BeTrue())
		_, api := acct.status(id)
		Expect(api["status"]).To(Equal("completed"), "the REST lookup says the same")
	})
})

// dashBrowser is an HTTP client with cookies that does not follow redirects by itself, from a
// loopback address of its own (the per-address limits of spec 5.3).
type dashBrowser struct{ hc *http.Client }

func newDashBrowser() *dashBrowser {
	jar, _ := cookiejar.New(nil)
	src := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 89, 0, 2)}, Timeout: 5 * time.Second}
	return &dashBrowser{hc: &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: src.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *dashBrowser) do(method, u string, form url.Values) *http.Response {
	GinkgoHelper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	Expect(err).NotTo(HaveOccurred())
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	return resp
}

func (b *dashBrowser) post(u string, form url.Values) *http.Response {
	GinkgoHelper()
	resp := b.do("POST", u, form)
	resp.Body.Close()
	return resp
}

// page GETs u, following redirects, and returns the body of a 200.
func (b *dashBrowser) page(u string) string {
	GinkgoHelper()
	for range 10 {
		resp := b.do("GET", u, nil)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(err).NotTo(HaveOccurred())
		if loc, err := resp.Location(); err == nil {
			u = loc.String()
			continue
		}
		Expect(resp.StatusCode).To(Equal(200), "%s: %s", u, raw)
		return string(raw)
	}
	Fail("more than ten redirects")
	return ""
}

// signIn goes through the provider's login form as a browser would.
func (b *dashBrowser) signIn(dashURL, issuer, user, password string) {
	GinkgoHelper()
	login := b.page(dashURL + "login")
	m := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(login)
	Expect(m).NotTo(BeNil(), login)
	posted := b.do("POST", issuer+"/login/username", url.Values{"username": {user}, "password": {password}, "id": {m[1]}})
	posted.Body.Close()
	Expect(posted.StatusCode).To(Equal(http.StatusFound))
	loc, err := posted.Location()
	Expect(err).NotTo(HaveOccurred())
	Expect(b.page(loc.String())).To(ContainSubstring(`http-equiv="refresh"`))
}

func (b *dashBrowser) csrf(page string) string {
	GinkgoHelper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	Expect(m).NotTo(BeNil(), page)
	return m[1]
}
