package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/go-logr/logr"
	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/devenv"
	"github.com/stablepay/payout-operator/internal/dev/refdata"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
	"github.com/stablepay/payout-operator/internal/freeport"
	"github.com/stablepay/payout-operator/test/testenv"
)

// The payoutd suite runs the whole service as payoutd wires it — facade, controllers, chain
// watcher, provider and mailer — against a real API server, a real dev chain (anvil), the
// simulated bank and a real SMTP sink: in-process where a test must count what it does, and as
// the built binary where a test kills it.
func TestPayoutd(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "payoutd end-to-end suite")
}

const bankToken = "payoutd-suite-bank"

// longest marks the suite's longest specs (minutes each, most of it waiting on the chain and
// the bank): `ginkgo --procs` (make test-payoutd) starts them first, so that none of them begins
// last and runs alone while the other processes are done.
const longest = SpecPriority(1)

var (
	env    *testenv.Env
	chains *devchain.Set
	base   *devchain.Chain
	bank   *simbank.Server
	sink   *smtpsink.Sink
	// refs serves the embedded sanctions release and rate snapshot to payoutd's refreshers.
	refs    *refdata.Server
	workdir string
	// chainConfig is payoutd's chain configuration of the dev chain.
	chainConfig string
)

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// one payoutd after another in this process: their controllers share names
	skipControllerNameValidation = true
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	workdir = GinkgoT().TempDir()
	chains = devchain.StartForTest(GinkgoT(), devchain.Base)
	base = chains.Chains[devchain.Base]
	chainConfig, err = devenv.WriteChainConfig(workdir, chains)
	Expect(err).NotTo(HaveOccurred())
	bank, err = simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: filepath.Join(workdir, "bank"), Token: bankToken, SettleAfter: time.Second})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bank.Close)
	sink, err = smtpsink.Start(smtpsink.Options{Addr: "127.0.0.1:0", Dir: filepath.Join(workdir, "mail")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(sink.Close)
	refs, err = refdata.Start("127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(refs.Close)
})

// payoutdArgs are the flags of a payoutd of this suite.
func payoutdArgs(apiAddr string, extra ...string) []string {
	return append([]string{
		"--api-bind-address", apiAddr,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "0",
		"--chains-config", chainConfig,
		"--fiat-url", bank.URL(), "--fiat-profile-id", "1", "--fiat-provider-name", "simbank",
		"--smtp-addr", sink.Addr(), "--smtp-tls", "none", "--smtp-from", "Payouts <payouts@payout.localhost>",
		// the suite starts payoutd again and again on one cluster: a pause between two specs is
		// no restore (restore_test.go sets its own)
		"--recovery-gap", "24h",
		// the reference data through the refresh paths a deployment uses; the embedded release
		// is from 2023, so its age is not limited here (freshness_test.go limits it)
		"--sanctions-url", refs.SanctionsURL(), "--sanctions-max-age", "0",
		"--rates-url", refs.RatesURL(),
	}, extra...)
}

// startInProcess runs payoutd in this process against cfg until the spec ends, and returns the
// facade's base URL.
func startInProcess(cfg *rest.Config, extra ...string) string {
	GinkgoHelper()
	url, stop := runInProcess(cfg, extra...)
	DeferCleanup(stop)
	return url
}

// runInProcess runs payoutd in this process against cfg, and returns the facade's base URL and
// what stops it (and waits for it to end).
func runInProcess(cfg *rest.Config, extra ...string) (string, func()) {
	GinkgoHelper()
	addr := freeAddr()
	Expect(os.Setenv("PAYOUT_FIAT_TOKEN", bankToken)).To(Succeed())
	stop := goRun(cfg, payoutdArgs(addr, extra...))
	url := "http://" + addr
	Eventually(func() error { return ping(url) }).Should(Succeed())
	waitBaseAvailable()
	return url, stop
}

// goRun runs payoutd with args in this process against cfg, and returns what stops it (and
// waits for it to end).
func goRun(cfg *rest.Config, args []string) func() {
	GinkgoHelper()
	o, err := parseFlags(args)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(runWith(ctx, cfg, o, logr.Discard())).To(Succeed())
	}()
	return func() { cancel(); <-done }
}

// inAccounts creates n accounts on the facade at url, one after another, and runs each one's
// work in a goroutine of its own; it returns when every one is done.
func inAccounts(url string, n int, work func(acct *account, a int)) {
	GinkgoHelper()
	var wg sync.WaitGroup
	for a := range n {
		acct := newAccount(url)
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			work(acct, a)
		}()
	}
	wg.Wait()
}

// waitBaseAvailable waits until USDC on base takes deposits: its watcher is in sync.
func waitBaseAvailable() {
	GinkgoHelper()
	Eventually(func() bool {
		o := &payoutv1.DepositOption{}
		return env.Client.Get(context.Background(), client.ObjectKey{Name: "usdc-base"}, o) == nil && o.Status.Available
	}).Should(BeTrue())
}

func freeAddr() string {
	GinkgoHelper()
	addr, err := freeport.Loopback()
	Expect(err).NotTo(HaveOccurred())
	return addr
}

func ping(url string) error {
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("readyz %d", resp.StatusCode)
	}
	return nil
}

// account is an account of the suite with one API key.
type account struct {
	name, key string
	url       string
	hc        *http.Client
}

var accountSeq int

// newAccount creates an account with the default settings, changed by mods, and one API key.
func newAccount(url string, mods ...func(*admin.AccountSettings)) *account {
	GinkgoHelper()
	accountSeq++
	name := fmt.Sprintf("e2e-%d", accountSeq)
	settings := admin.DefaultAccountSettings(name)
	for _, mod := range mods {
		mod(&settings)
	}
	_, err := admin.CreateAccount(context.Background(), env.Client, name, settings)
	Expect(err).NotTo(HaveOccurred())
	// Each account calls from its own loopback address: the per-address limits of spec 5.3 must
	// not tie the accounts together, nor the 401s of a key the facade has not seen yet.
	src := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 88, byte(accountSeq/250), byte(accountSeq%250+2))}, Timeout: 5 * time.Second}
	a := &account{name: name, key: issueKey(name), url: url,
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: src.DialContext}}}
	Eventually(func() int { s, _ := a.call("GET", "/api/payouts/amount-limits", nil); return s }).
		WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Equal(200))
	return a
}

func issueKey(account string) string {
	GinkgoHelper()
	full, _, err := admin.IssueKey(context.Background(), env.Client, account)
	Expect(err).NotTo(HaveOccurred())
	return full
}

// call sends a request; a transport error (a facade being restarted) is status 0.
func (a *account) call(method, path string, body any) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	_ = dec.Decode(&m)
	return resp.StatusCode, m
}

// must sends a request, retrying while the facade is unreachable, and expects want.
func (a *account) must(want int, method, path string, body any) map[string]any {
	GinkgoHelper()
	var status int
	var m map[string]any
	Eventually(func() int { status, m = a.call(method, path, body); return status }).ShouldNot(BeZero())
	Expect(status).To(Equal(want), "%s %s: %v", method, path, m)
	return m
}

func (a *account) recipient(holder string) int64 {
	GinkgoHelper()
	m := a.must(201, "POST", "/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "iban", "accountHolderName": holder,
		"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}})
	id, err := m["id"].(json.Number).Int64()
	Expect(err).NotTo(HaveOccurred())
	return id
}

func (a *account) quote(amount string) string {
	GinkgoHelper()
	return a.must(200, "GET", "/api/payouts/quote?targetCurrency=EUR&sourceAmount="+amount, nil)["quoteId"].(string)
}

func transferBody(quote, amount string, recipient int64, keep bool) map[string]any {
	return map[string]any{"quote_id": quote, "amount": json.Number(amount), "recipientId": recipient,
		"customer_uuid": uuid.NewString(), "customer_email": "payer+" + uuid.NewString()[:8] + "@example.com",
		"source_token": "usdc", "source_network": "base", "wallet_address": crypto0x(), "keep_recipient": keep}
}

// crypto0x is the funded dev wallet, the sender of every deposit of the suite.
func crypto0x() string { return crypto.PubkeyToAddress(chains.FundedKey.PublicKey).Hex() }

func (a *account) status(id string) (string, map[string]any) {
	status, m := a.call("GET", "/api/payouts/transfer/"+id, nil)
	if status != 200 {
		return "", nil
	}
	t := m["transfer"].(map[string]any)
	return t["status"].(string), t
}

// freshWallet is a new wallet on base with units of USDC and gas: its balance is what the
// service sends it.
func freshWallet(units int64) (*ecdsa.PrivateKey, common.Address) {
	GinkgoHelper()
	key, err := crypto.GenerateKey()
	Expect(err).NotTo(HaveOccurred())
	at := crypto.PubkeyToAddress(key.PublicKey)
	_, err = base.Transfer(context.Background(), chains.FundedKey, devchain.USDC, at, big.NewInt(units))
	Expect(err).NotTo(HaveOccurred())
	// gas: anvil sets a balance directly
	Expect(base.RPC.CallContext(context.Background(), nil, "anvil_setBalance", at, "0xde0b6b3a7640000")).To(Succeed())
	return key, at
}

// deposit sends amount USDC (decimal text) from the funded wallet to address on base.
func deposit(address, amount string) common.Hash {
	GinkgoHelper()
	units := decimal.RequireFromString(amount).Shift(6).BigInt()
	tx, err := base.SendTransfer(context.Background(), chains.FundedKey, devchain.USDC, common.HexToAddress(address), units)
	Expect(err).NotTo(HaveOccurred())
	return tx.Hash()
}
