package kycsite

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/siwe"
	"github.com/stablepay/payout-operator/test/testenv"
)

// The site runs against a real API server (envtest); the wallets are go-ethereum keys, signing
// as a browser wallet's personal_sign does.
var k8s client.Client

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // the pure tests only: those on the control plane skip (needCluster)
		os.Exit(m.Run())
	}
	env, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s = env.Client
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// needCluster skips a test that needs the control plane under -short, where TestMain starts none.
func needCluster(t *testing.T) {
	t.Helper()
	if k8s == nil {
		t.Skip("-short: this test runs on the control plane (envtest)")
	}
}

var linkKey = []byte("0123456789abcdef0123456789abcdef")

type site struct {
	t      *testing.T
	srv    *httptest.Server
	s      *Server
	clock  *clocktesting.FakeClock
	vendor []byte
}

func newSite(t *testing.T) *site {
	hs := httptest.NewUnstartedServer(nil)
	clk := clocktesting.NewFakeClock(time.Now())
	secret := []byte("vendor-secret")
	s, err := New(Config{Client: k8s, URL: "http://" + hs.Listener.Addr().String(), ChainID: 1, LinkKey: linkKey,
		Vendor: Vendor{URL: "http://vendor.invalid/start", Secret: secret}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = s.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	return &site{t: t, srv: hs, s: s, clock: clk, vendor: secret}
}

func account(t *testing.T, name string, bind bool) string {
	st := admin.DefaultAccountSettings(name)
	st.BindWallets = bind
	if _, err := admin.CreateAccount(context.Background(), k8s, name, st); err != nil {
		t.Fatal(err)
	}
	return IssueLink(linkKey, name, time.Now().Add(time.Hour))
}

func (s *site) post(path string, body any, header ...string) (int, map[string]any) {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (s *site) challenge(link string, key *ecdsa.PrivateKey) string {
	code, out := s.post("/api/challenge", map[string]string{"link": link, "address": crypto.PubkeyToAddress(key.PublicKey).Hex()})
	if code != http.StatusOK {
		s.t.Fatalf("challenge: %d %v", code, out)
	}
	return out["message"].(string)
}

func signAs(t *testing.T, key *ecdsa.PrivateKey, text string) string {
	sig, err := crypto.Sign(accounts.TextHash([]byte(text)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

func (s *site) prove(link, text, sig string) (int, map[string]any) {
	return s.post("/api/proof", map[string]string{"link": link, "message": text, "signature": sig})
}

// edit changes a parsed message and renders it again.
func edit(t *testing.T, text string, change func(*siwe.Message)) string {
	m, err := siwe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	change(m)
	return m.String()
}

func wallet(t *testing.T, acct string, key *ecdsa.PrivateKey) *payoutv1.Wallet {
	w := &payoutv1.Wallet{}
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct), Name: payoutv1.WalletName(addr)}, w); err != nil {
		return nil
	}
	return w
}

// Each refusal is built to pass every rule before its own (a message with a live nonce of the
// link's account and wallet, signed by the wallet) unless said otherwise, so that it is its rule
// that refuses it; a refused proof records nothing and leaves the nonce usable.
func TestProofOverHTTP(t *testing.T) {
	needCluster(t)
	s := newSite(t)
	link := account(t, "siwe-a", false)
	key, _ := crypto.GenerateKey()
	other, _ := crypto.GenerateKey()
	text := s.challenge(link, key)

	refused := map[string]struct {
		text, sig string
		want      string
	}{
		"another domain": {text: edit(t, text, func(m *siwe.Message) { m.Domain = "payouts.example" }), want: "made for payouts.example"},
		"another URI":    {text: edit(t, text, func(m *siwe.Message) { m.URI = "https://payouts.example/verify" }), want: "URI"},
		"another chain":  {text: edit(t, text, func(m *siwe.Message) { m.ChainID = 137 }), want: "chain 137"},
		"another account": {text: edit(t, text, func(m *siwe.Message) { m.Statement = Statement("siwe-b") }),
			want: "does not name the account"},
		"no expiry": {text: edit(t, text, func(m *siwe.Message) { m.ExpirationTime = "" }), want: "no expiration"},
		"expired": {text: edit(t, text, func(m *siwe.Message) {
			m.ExpirationTime = s.clock.Now().UTC().Add(-time.Second).Format(time.RFC3339)
		}), want: "expired"},
		"a nonce the site never issued": {text: edit(t, text, func(m *siwe.Message) { m.Nonce = "0123456789abcdef" }), want: "nonce is unknown"},
		"another key's signature":       {text: text, sig: signAs(t, other, text), want: "not made by"},
		"a malformed signature":         {text: text, sig: "0x1234", want: "65 bytes"},
	}
	for name, c := range refused {
		sig := c.sig
		if sig == "" {
			sig = signAs(t, key, c.text)
		}
		code, out := s.prove(link, c.text, sig)
		if code < 400 || !strings.Contains(fmt.Sprint(out["error"]), c.want) {
			t.Errorf("%s: %d %v, want a refusal saying %q", name, code, out, c.want)
		}
	}
	if w := wallet(t, "siwe-a", key); w != nil {
		t.Fatalf("a refused proof recorded %+v", w.Spec)
	}

	// The link of another account with this account's message: refused.
	linkB := account(t, "siwe-b", false)
	if code, out := s.prove(linkB, text, signAs(t, key, text)); code != http.StatusBadRequest {
		t.Errorf("a message of account siwe-a through siwe-b's link: %d %v", code, out)
	}
	// A nonce of another wallet: refused.
	key2, _ := crypto.GenerateKey()
	text2 := s.challenge(link, key2)
	wrongWallet := edit(t, text2, func(m *siwe.Message) { m.Address = crypto.PubkeyToAddress(key.PublicKey).Hex() })
	if code, out := s.prove(link, wrongWallet, signAs(t, key, wrongWallet)); code != http.StatusBadRequest ||
		!strings.Contains(fmt.Sprint(out["error"]), "another account or wallet") {
		t.Errorf("another wallet's nonce: %d %v", code, out)
	}

	// The wallet's own signature of the issued message: proven, kept for audit.
	sig := signAs(t, key, text)
	code, out := s.prove(link, text, sig)
	if code != http.StatusOK || out["wallet"] != crypto.PubkeyToAddress(key.PublicKey).Hex() || !strings.HasPrefix(fmt.Sprint(out["next"]), "http://vendor.invalid/start?") {
		t.Fatalf("proof: %d %v", code, out)
	}
	w := wallet(t, "siwe-a", key)
	if w == nil || w.Spec.Proof == nil || w.Spec.Proof.Message != text || w.Spec.Proof.Signature != sig || w.Spec.KYCVerified {
		t.Fatalf("record %+v", w)
	}
	// The nonce is used: the same message and signature again are refused.
	if code, out := s.prove(link, text, sig); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "nonce is unknown, used") {
		t.Errorf("replayed proof: %d %v", code, out)
	}
	// A nonce past its time is refused as the message is.
	text3 := s.challenge(link, key)
	s.clock.Step(DefaultChallengeTTL + time.Second)
	if code, out := s.prove(link, text3, signAs(t, key, text3)); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "expired") {
		t.Errorf("a message past its expiry: %d %v", code, out)
	}
	// A page's origin other than the site's may not post (CSRF).
	if code, _ := s.post("/api/challenge", map[string]string{"link": link, "address": crypto.PubkeyToAddress(key.PublicKey).Hex()},
		"Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("a cross-origin challenge: %d", code)
	}
}

// The vendor's signed callback makes a proven wallet KYC-verified for the account, which is
// what the facade's KYC check reads; a callback replayed, unsigned, stale or about a wallet
// without a proof changes nothing.
func TestVendorCallback(t *testing.T) {
	needCluster(t)
	s := newSite(t)
	link := account(t, "siwe-c", false)
	key, _ := crypto.GenerateKey()
	text := s.challenge(link, key)
	code, out := s.prove(link, text, signAs(t, key, text))
	if code != http.StatusOK {
		t.Fatalf("proof: %d %v", code, out)
	}
	session := regexp.MustCompile(`session=([^&]+)`).FindStringSubmatch(fmt.Sprint(out["next"]))[1]
	session = strings.NewReplacer("%3D", "=", "%2F", "/", "%2B", "+").Replace(session)
	call := func(body Callback, ts time.Time, secret []byte) int {
		data, _ := json.Marshal(body)
		code, _ := s.post("/vendor/callback", json.RawMessage(data),
			HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10), HeaderSignature, SignCallback(secret, ts, data))
		return code
	}
	verified := func() bool {
		ok, err := kyc.Store{Reader: k8s}.Verified(context.Background(), "siwe-c", crypto.PubkeyToAddress(key.PublicKey).Hex())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	now := s.clock.Now()
	approved := Callback{EventID: "evt-1", Session: session, Result: "approved"}
	if code := call(approved, now, []byte("not the secret")); code != http.StatusUnauthorized || verified() {
		t.Errorf("a callback signed with another secret: %d", code)
	}
	if code := call(Callback{EventID: "evt-0", Session: session, Result: "approved"}, now.Add(-CallbackSkew-time.Second), s.vendor); code != http.StatusUnauthorized || verified() {
		t.Errorf("a stale callback: %d", code)
	}
	other, _ := crypto.GenerateKey()
	unproven := issueSession(linkKey, "siwe-c", crypto.PubkeyToAddress(other.PublicKey).Hex(), now.Add(time.Hour))
	if code := call(Callback{EventID: "evt-2", Session: unproven, Result: "approved"}, now, s.vendor); code != http.StatusNotFound {
		t.Errorf("a callback about a wallet without a proof: %d", code)
	}
	// an operator's record of a wallet, without a proof: the vendor's answer is about a proven owner
	operated := &payoutv1.Wallet{ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.AccountNamespace("siwe-c"),
		Name: payoutv1.WalletName(crypto.PubkeyToAddress(other.PublicKey).Hex())},
		Spec: payoutv1.WalletSpec{Address: payoutv1.NormalizeWallet(crypto.PubkeyToAddress(other.PublicKey).Hex())}}
	if err := k8s.Create(context.Background(), operated); err != nil {
		t.Fatal(err)
	}
	if code := call(Callback{EventID: "evt-4", Session: unproven, Result: "approved"}, now, s.vendor); code != http.StatusConflict {
		t.Errorf("a callback about a wallet recorded without a proof: %d", code)
	}
	if code := call(Callback{EventID: "evt-3", Session: session, Result: "rejected"}, now, s.vendor); code != http.StatusOK || verified() {
		t.Errorf("a rejection: %d", code)
	}
	if code := call(approved, now, s.vendor); code != http.StatusOK || !verified() {
		t.Fatalf("an approval: %d, verified %v", code, verified())
	}
	if code := call(approved, now, s.vendor); code != http.StatusConflict {
		t.Errorf("a replayed approval: %d", code)
	}
}

// An account that binds wallets binds the wallet proven for it; another binding account cannot
// prove (and so bind) it after; an account that does not bind wallets records its proof only.
func TestProofBindsForBindingAccounts(t *testing.T) {
	needCluster(t)
	s := newSite(t)
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	proveFor := func(acct string, bind bool) (int, map[string]any) {
		link := account(t, acct, bind)
		text := s.challenge(link, key)
		return s.prove(link, text, signAs(t, key, text))
	}
	if code, out := proveFor("bind-owner", true); code != http.StatusOK {
		t.Fatalf("first proof: %d %v", code, out)
	}
	c := &payoutv1.Claim{}
	name := payoutv1.ClaimName(payoutv1.ClaimWalletBinding, payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, addr))
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil || c.Spec.Holder.Name != "bind-owner" {
		t.Fatalf("binding %+v, %v", c.Spec, err)
	}
	if code, out := proveFor("bind-other", true); code != http.StatusConflict || wallet(t, "bind-other", key) != nil {
		t.Errorf("a second binding account's proof: %d %v", code, out)
	}
	if code, out := proveFor("bind-none", false); code != http.StatusOK || wallet(t, "bind-none", key) == nil {
		t.Errorf("a non-binding account's proof: %d %v", code, out)
	}
}

// Every answer carries the strict CSP; the page loads its one script from a file of the
// site's own origin and has no inline script or style.
func TestPageSecurityHeaders(t *testing.T) {
	needCluster(t)
	s := newSite(t)
	link := account(t, "siwe-page", false)
	for _, path := range []string{"/verify?link=" + link, "/verify?link=forged", "/assets/nothing.js"} {
		resp, err := http.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if csp != CSP || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "script-src 'self'") ||
			resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
		if strings.HasPrefix(path, "/verify") {
			if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<script>|\sstyle=|<style|\son[a-z]+=`).Match(body) {
				t.Errorf("%s: inline script or style in\n%s", path, body)
			}
			src := regexp.MustCompile(`<script src="(/assets/site\.[0-9a-f]{12}\.js)">`).FindSubmatch(body)
			if src == nil {
				t.Fatalf("%s: no cache-busted script in\n%s", path, body)
			}
			js, err := http.Get(s.srv.URL + string(src[1]))
			if err != nil || js.StatusCode != http.StatusOK || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") {
				t.Errorf("the script: %v %v", js, err)
			}
		}
	}
}

// lateTake is a nonce store whose Peek still sees a nonce once taken, as the second of two
// proofs of one message racing on the store does (both peek before either takes).
type lateTake struct {
	*MemoryNonces
	seen map[string]Challenge
}

func (l *lateTake) Peek(ctx context.Context, nonce string) (Challenge, bool, error) {
	if c, ok := l.seen[nonce]; ok {
		return c, true, nil
	}
	c, ok, err := l.MemoryNonces.Peek(ctx, nonce)
	if ok {
		l.seen[nonce] = c
	}
	return c, ok, err
}

// Of two proofs of one message that both passed the nonce's look-up, only the one that uses
// the nonce (atomically) is taken.
func TestRacingProofsUseTheNonceOnce(t *testing.T) {
	needCluster(t)
	s := newSite(t)
	s.s.cfg.Nonces = &lateTake{MemoryNonces: NewMemoryNonces(s.clock.Now), seen: map[string]Challenge{}}
	link := account(t, "siwe-race", false)
	key, _ := crypto.GenerateKey()
	text := s.challenge(link, key)
	sig := signAs(t, key, text)
	if code, out := s.prove(link, text, sig); code != http.StatusOK {
		t.Fatalf("first proof: %d %v", code, out)
	}
	if code, out := s.prove(link, text, sig); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "used") {
		t.Errorf("the racing second proof: %d %v", code, out)
	}
}
