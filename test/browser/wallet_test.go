package browser_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/kycsite"
	"github.com/stablepay/payout-operator/test/browser"
)

// providerJS is the EIP-1193 provider the test puts in the page before its scripts run, the
// one part a browser wallet would play: its accounts are the test's, personal_sign calls back
// to Go (payoutWalletSign), which signs with a go-ethereum key. When window.payoutReplay is
// set, the page's proof is replaced by it on the way out, as an attacker replaying a proof
// they saw would send it.
const providerJS = `(() => {
  window.ethereum = {
    isTestWallet: true,
    request: async ({method, params}) => {
      switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [await window.payoutWalletAddress()];
      case "personal_sign":
        return await window.payoutWalletSign(params[0]);
      }
      const err = new Error("unsupported method " + method);
      err.code = 4200;
      throw err;
    },
  };
  const send = window.fetch;
  window.fetch = (url, init) => {
    if (window.payoutReplay && String(url).endsWith("/api/proof")) {
      init = Object.assign({}, init, {body: window.payoutReplay});
    }
    return send(url, init);
  };
})();`

// wallet is the test's side of the provider.
type wallet struct {
	mu      sync.Mutex
	address *ecdsa.PrivateKey // whose address the wallet gives the page
	signer  *ecdsa.PrivateKey // who signs
	// beforeReturn runs when a message is signed, before the page has the signature
	beforeReturn func()
	// last signed message and its signature
	message, signature string
}

func (w *wallet) set(address, signer *ecdsa.PrivateKey, beforeReturn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.address, w.signer, w.beforeReturn = address, signer, beforeReturn
}

func (w *wallet) last() (string, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.message, w.signature
}

// install exposes the wallet's Go side and adds the provider to every document of the page.
func (w *wallet) install(t *testing.T, page context.Context) {
	t.Helper()
	addr := chromedp.ExposeFunc("payoutWalletAddress", func(context.Context, []any) (string, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return crypto.PubkeyToAddress(w.address.PublicKey).Hex(), nil
	})
	sign := chromedp.ExposeFunc("payoutWalletSign", func(_ context.Context, hexText string) (string, error) {
		raw, err := hexutil.Decode(hexText)
		if err != nil {
			return "", err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		sig, err := personalSign(w.signer, string(raw))
		if err != nil {
			return "", err
		}
		w.message, w.signature = string(raw), sig
		if w.beforeReturn != nil {
			w.beforeReturn()
		}
		return sig, nil
	})
	script := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: providerJS})
		return err
	})
	must(t, browser.Do(page, addr, sign, script), "installing the wallet")
}

// apiPost posts body to the facade with an API key.
func apiPost(t *testing.T, path, key string, body any) (int, string) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, stack.api+path, bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}

// The verification page with a wallet in the page: a signature by another key, a replayed
// proof and an expired message are refused on the page; the wallet's own proof, with the
// vendor's approval, makes it usable on an account that requires KYC'd wallets.
func TestWalletVerification(t *testing.T) {
	b := browser.Start(t)
	page := b.Page(t)
	owner, _ := crypto.GenerateKey()
	other, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(owner.PublicKey).Hex()
	w := &wallet{}
	w.set(owner, owner, nil)
	w.install(t, page)
	link := stack.kyc.Link(kycsite.IssueLink(stack.linkKey, stack.kycAccount, time.Now().Add(time.Hour)))

	key, _, err := admin.IssueKey(context.Background(), env.Client, stack.kycAccount)
	must(t, err, "a key of the KYC account")
	recipient := map[string]any{"currency": "EUR", "type": "iban", "accountHolderName": "Wallet Owner",
		"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}, "wallet": addr}
	deadline := time.Now().Add(browser.Timeout)
	for {
		code, body := apiPost(t, "/api/payouts/recipients", key, recipient)
		if code == http.StatusForbidden && strings.Contains(body, "KYC") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("before the proof, a recipient with the wallet: %d %s, want 403 (KYC)", code, body)
		}
		time.Sleep(100 * time.Millisecond) // the new key reaches the facade's cache
	}

	// attempt opens the page, presses the button and returns the status line once the page
	// says how it went
	attempt := func(t *testing.T, replay string) string {
		t.Helper()
		must(t, browser.Do(page, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("connect"))), "the verification page")
		if replay != "" {
			eval[bool](t, page, `(window.payoutReplay = `+replay+`, true)`)
		}
		must(t, browser.Do(page, chromedp.Click(chromedp.ID("connect"))), "Connect wallet and sign")
		waitTrue(t, page, `location.pathname !== "/verify" || document.getElementById("status").textContent.startsWith("Not verified") || document.getElementById("status").textContent.includes("proven")`)
		return eval[string](t, page, `location.pathname === "/verify" ? document.getElementById("status").textContent : "left for " + location.href`)
	}
	recorded := func() *payoutv1.Wallet {
		rec := &payoutv1.Wallet{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(stack.kycAccount), Name: payoutv1.WalletName(addr)}, rec); err != nil {
			return nil
		}
		return rec
	}

	t.Run("the page", func(t *testing.T) {
		must(t, browser.Do(page, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("connect"))), "the verification page")
		browser.CheckAxe(t, page, "the wallet verification page")
		browser.Screenshot(t, page, "wallet-verification.png")
	})

	t.Run("a signature by another key", func(t *testing.T) {
		w.set(owner, other, nil)
		got := attempt(t, "")
		if !strings.HasPrefix(got, "Not verified: the signature was not made by "+addr) {
			t.Fatalf("another key's signature: %q", got)
		}
		t.Logf("shown: %s", got)
		if recorded() != nil {
			t.Fatal("another key's signature recorded a proof")
		}
	})

	var proof string
	t.Run("the wallet's proof, then the vendor's approval", func(t *testing.T) {
		w.set(owner, owner, nil)
		got := attempt(t, "")
		if !strings.HasPrefix(got, "left for ") {
			t.Fatalf("the proof: %q, want the vendor's page", got)
		}
		msg, sig := w.last()
		data, _ := json.Marshal(map[string]string{"link": kycLinkToken(link), "message": msg, "signature": sig})
		proof = string(data)
		must(t, browser.Do(page, chromedp.Click(chromedp.CSS(`button[value="approved"]`), chromedp.NodeVisible)), "approving at the vendor")
		if ok := waitFor(page, `location.pathname === "/verify"`); !ok {
			t.Fatalf("the vendor's page did not send the browser back: %s", eval[string](t, page, `location.href + ": " + document.body.innerText`))
		}
		rec := recorded()
		if rec == nil || !rec.Spec.KYCVerified {
			t.Fatalf("after the vendor's approval the wallet record is %+v", rec)
		}
		deadline := time.Now().Add(browser.Timeout)
		for {
			code, body := apiPost(t, "/api/payouts/recipients", key, recipient)
			if code == http.StatusCreated {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the proof, a recipient with the wallet: %d %s, want 201", code, body)
			}
			time.Sleep(100 * time.Millisecond) // the record reaches the facade's cache
		}
	})

	t.Run("a replayed proof", func(t *testing.T) {
		if proof == "" {
			t.Skip("no proof to replay")
		}
		js, _ := json.Marshal(proof)
		got := attempt(t, string(js))
		if !strings.HasPrefix(got, "Not verified: the message's nonce is unknown, used") {
			t.Fatalf("a replayed proof: %q", got)
		}
		t.Logf("shown: %s", got)
	})

	t.Run("an expired message", func(t *testing.T) {
		// the message expires while the wallet shows it: the site's clock moves past its expiry
		w.set(owner, owner, func() { stack.kycClock.Step(kycsite.DefaultChallengeTTL + time.Minute) })
		got := attempt(t, "")
		if !strings.HasPrefix(got, "Not verified") || !strings.Contains(got, "expired") {
			t.Fatalf("an expired message: %q", got)
		}
		t.Logf("shown: %s", got)
	})
}

// kycLinkToken is the link token of a verification page's address.
func kycLinkToken(pageURL string) string {
	u, err := url.Parse(pageURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("link")
}
