package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/simkyc"
	"github.com/stablepay/payout-operator/internal/kycsite"
)

// The wallet verification site as payoutd serves it (issue 28): a wallet's owner proves control
// on the site, the simulated KYC vendor approves, and the account that requires KYC takes the
// wallet, which it refused before.
var _ = Describe("the wallet verification site", Ordered, func() {
	It("verifies a wallet through the site and the KYC vendor's callback for a KYC-required account", func() {
		linkKey := "e2e-link-key-0123456789abcdef0123"
		vendorSecret := "e2e-vendor-secret"
		Expect(os.Setenv("PAYOUT_KYC_LINK_KEY", linkKey)).To(Succeed())
		Expect(os.Setenv("PAYOUT_KYC_VENDOR_SECRET", vendorSecret)).To(Succeed())
		DeferCleanup(func() { _ = os.Unsetenv("PAYOUT_KYC_LINK_KEY"); _ = os.Unsetenv("PAYOUT_KYC_VENDOR_SECRET") })
		site := "http://" + freeAddr()
		vendor, err := simkyc.Start(simkyc.Options{Addr: "127.0.0.1:0", CallbackURL: site + "/vendor/callback", Secret: []byte(vendorSecret)})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(vendor.Close)
		api := startInProcess(env.Config, "--kyc-site-bind-address", site[len("http://"):], "--kyc-site-url", site,
			"--kyc-vendor-url", vendor.URL())

		acct := newAccount(api, func(s *admin.AccountSettings) { s.KYCRequired = true })
		key, wallet := freshWallet(0)
		// a recipient of a KYC-required account names a KYC-verified wallet (spec 4.5 rule 1)
		recipient := func() (int, map[string]any) {
			return acct.call("POST", "/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "iban",
				"accountHolderName": "KYC Payee", "wallet": wallet.Hex(),
				"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}})
		}
		code, m := recipient()
		Expect(code).To(Equal(403), "%v", m)

		post := func(path string, body any) map[string]any {
			GinkgoHelper()
			data, _ := json.Marshal(body)
			resp, err := http.Post(site+path, "application/json", bytes.NewReader(data))
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			out := map[string]any{}
			Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
			Expect(resp.StatusCode).To(Equal(200), "%s: %v", path, out)
			return out
		}
		link := kycsite.IssueLink([]byte(linkKey), acct.name, time.Now().Add(time.Hour))
		msg := post("/api/challenge", map[string]string{"link": link, "address": wallet.Hex()})["message"].(string)
		sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), key)
		Expect(err).NotTo(HaveOccurred())
		sig[64] += 27
		proof := post("/api/proof", map[string]string{"link": link, "message": msg, "signature": hexutil.Encode(sig)})
		next, err := url.Parse(proof["next"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(next.String()).To(HavePrefix(vendor.URL()))
		// proven, not yet verified: the identity check is the vendor's
		code, m = recipient()
		Expect(code).To(Equal(403), "%v", m)

		Expect(vendor.Decide(next.Query().Get("session"), "approved")).To(Succeed())
		Eventually(func() int { code, m = recipient(); return code }).WithTimeout(5*time.Second).Should(Equal(201),
			"the facade takes the verified wallet within 5 s (CONTRACT.md)")
		id, err := m["id"].(json.Number).Int64()
		Expect(err).NotTo(HaveOccurred())
		b := transferBody(acct.quote("25.00"), "25.00", id, false)
		b["wallet_address"] = wallet.Hex()
		acct.must(200, "POST", "/api/payouts/transfer", b)
	})
})
