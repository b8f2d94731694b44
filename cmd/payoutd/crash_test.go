package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testenv"
)

// crashTransfers is how many transfers move through the machine while payoutd is killed.
const crashTransfers = 200

// killer runs the payoutd binary and kills it with SIGKILL at random moments, restarting it after
// a short pause, as a node failure would.
type killer struct {
	bin, kubeconfig, addr string
	extra                 []string                // flags beyond payoutdArgs
	args                  func([]string) []string // when set, what of payoutdArgs the binary takes
	env                   []string                // variables beyond the environment's
	logDir                string
	mu                    sync.Mutex
	cmd                   *exec.Cmd
	kills                 atomic.Int32
	starts                int
	// probe, when set, is an account whose deposit options tell when the running instance
	// serves v1 creates on base (its watcher has scanned since the start)
	probe *account
}

func (k *killer) start() {
	GinkgoHelper()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.starts++
	log, err := os.Create(filepath.Join(k.logDir, fmt.Sprintf("payoutd-%03d.log", k.starts)))
	Expect(err).NotTo(HaveOccurred())
	args := payoutdArgs(k.addr, k.extra...)
	if k.args != nil {
		args = k.args(args)
	}
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = append(append(os.Environ(), "PAYOUT_FIAT_TOKEN="+bankToken), k.env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	k.cmd = cmd
	go func() { _ = cmd.Wait(); log.Close() }()
}

func (k *killer) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cmd != nil && k.cmd.Process != nil {
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		k.kills.Add(1)
		k.cmd = nil
	}
}

// rampage kills and restarts payoutd at random moments until stop closes.
func (k *killer) rampage(stop <-chan struct{}, done chan<- struct{}) {
	defer GinkgoRecover()
	defer close(done)
	for {
		// one kill in four strikes a start-up at a random moment; the others strike an instance
		// at a random moment of its work, once it has come up: on a loaded machine, where a
		// start takes longer than the interval, the instance still serves between kills and
		// the transfers move on
		if rand.IntN(4) == 0 {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rand.IntN(2000)) * time.Millisecond):
			}
		} else if !k.awaitReady(stop) {
			return
		}
		k.kill()
		time.Sleep(time.Duration(100+rand.IntN(900)) * time.Millisecond)
		k.start()
	}
}

// awaitReady waits until the running instance serves (its facade is ready and, with a probe,
// usdc on base is available, which its new watcher's first scan decides) and then a random
// uptime of 1 to 5 s, or until stop; it reports false on stop.
func (k *killer) awaitReady(stop <-chan struct{}) bool {
	for !k.serves() {
		select {
		case <-stop:
			return false
		case <-time.After(time.Second): // within the probe key's 60 deposit-options a minute
		}
	}
	select {
	case <-stop:
		return false
	case <-time.After(time.Duration(1000+rand.IntN(4000)) * time.Millisecond):
		return true
	}
}

func (k *killer) serves() bool {
	if ping("http://"+k.addr) != nil {
		return false
	}
	if k.probe == nil {
		return true
	}
	status, m := k.probe.call("GET", "/api/payouts/deposit-options", nil)
	if status != http.StatusOK {
		return false
	}
	options, _ := m["options"].([]any)
	for _, o := range options {
		if o, _ := o.(map[string]any); o["token"] == "usdc" && o["network"] == "base" {
			return o["status"] == "available"
		}
	}
	return false
}

// planned is a transfer of the crash test and the outcome it must reach.
type planned struct {
	acct    *account
	id      string
	amount  string
	deposit string
	failing string // "": completes; else the failure reason it must end with
	email   string
	// split: the wallet pays in two sends; dust: a stranger sends one base unit to the address
	// first (a stray, refunded to the stranger)
	split, dust bool
}

// crashExpiry is the v1 expiry of the crash test's payoutd, the shortest payoutd takes: each
// deposit is sent right after its transfer is created, well in time, and the short deposits fail
// (DepositShort) a minute after their creation, once the chain has passed it.
const crashExpiry = "1m"

var _ = Describe("a crash at any moment", Ordered, longest, func() {
	It("loses no transfer and pays none twice while payoutd is killed at random", func() {
		bin, kubeconfig := payoutdBinary("payoutd-crash")

		// A lost answer now and then on top of the crashes: the bank acts, the answer never comes.
		bank.SetFaults(simbank.Faults{DropRate: 0.05, Ops: []string{simbank.OpTransfer, simbank.OpFund}})
		DeferCleanup(func() { bank.SetFaults(simbank.Faults{}) })

		k := &killer{bin: bin, kubeconfig: kubeconfig, addr: freeAddr(), logDir: GinkgoT().TempDir(), extra: []string{"--transfer-expiry", crashExpiry}}
		k.start()
		DeferCleanup(k.kill)
		url := "http://" + k.addr
		Eventually(func() error { return ping(url) }).Should(Succeed())
		waitBaseAvailable()
		k.probe = newAccount(url)
		stop, stopped := make(chan struct{}), make(chan struct{})
		go k.rampage(stop, stopped)
		stopOnce := sync.OnceFunc(func() { close(stop); <-stopped })
		DeferCleanup(stopOnce)

		// A stranger to every transfer, whose dust some of them get first.
		stranger, strangerAt := freshWallet(1_000_000)
		strangerBefore, err := base.BalanceOf(context.Background(), devchain.USDC, strangerAt)
		Expect(err).NotTo(HaveOccurred())

		// 20 accounts of 10 transfers each keep every key within its per-minute limits. Each
		// transfer's deposit is sent right after its create, while the killing goes on.
		const accounts = 20
		var plan []*planned
		var mu sync.Mutex
		inAccounts(url, accounts, func(acct *account, a int) {
			payee := acct.recipient("Crash Payee")
			failing := acct.recipient("Simulated Failure")
			for i := range crashTransfers / accounts {
				p := &planned{acct: acct, amount: fmt.Sprintf("%d.%02d", 10+rand.IntN(30), rand.IntN(100)), email: "crash+" + uuid.NewString()[:8] + "@example.com"}
				p.deposit = p.amount
				rid := payee
				switch {
				case i == 3:
					rid, p.failing = failing, string(payoutv1.FailurePayoutRejected)
				case i == 7 && a%2 == 0:
					p.deposit = decimal.RequireFromString(p.amount).Sub(decimal.New(1, -2)).StringFixed(2)
					p.failing = string(payoutv1.FailureDepositShort)
				case i == 5: // 10 %: two sends from the wallet
					p.split = true
				case i == 8 && a%2 == 0: // 5 %: a stranger's dust first
					p.dust = true
				}
				p.id = createDuringCrashes(acct, p, rid)
				pay(p, stranger)
				mu.Lock()
				plan = append(plan, p)
				mu.Unlock()
			}
		})
		Expect(plan).To(HaveLen(crashTransfers))
		// Let the machine work under crashes for a while, then let it finish.
		time.Sleep(45 * time.Second)
		stopOnce()
		if k.cmd == nil {
			k.start()
		}
		GinkgoWriter.Printf("payoutd was killed %d times\n", k.kills.Load())
		Expect(k.kills.Load()).To(BeNumerically(">=", 5))

		final := awaitFinal(plan, 6*time.Minute)
		completed, failed, paidByBank, paidByUs := expectLedgerMatches(plan, final)
		strays := expectStraysRefundedOnce(plan, kubeconfig, strangerAt, strangerBefore)
		// Each outcome is mailed at least once, with one Message-ID per outcome: a resend after a
		// crash is the same message.
		msgs, err := smtpsink.ReadDir(filepath.Join(workdir, "mail"))
		Expect(err).NotTo(HaveOccurred())
		ids := map[string]int{}
		for _, m := range msgs {
			ids[m.MessageID()]++
		}
		mailed, resent := 0, 0
		for _, p := range plan {
			kind := "payout-sent"
			if p.failing != "" {
				kind = "payout-failed"
			}
			n := ids["<"+p.id+"."+kind+"@payout.localhost>"]
			Expect(n).To(BeNumerically(">=", 1), "%s was mailed", p.id)
			mailed++
			resent += n - 1
		}
		report := fmt.Sprintf("%d transfers (%d completed, %d failed as planned, %d paid in two sends, %d with a stranger's dust first), "+
			"payoutd killed %d times, %d bank answers lost, %s EUR paid by the bank = %s EUR of the completed transfers; "+
			"%d outcomes mailed, %d resent after a crash; %d stray deposits refunded once each, read back from the chain",
			len(plan), completed, failed, count(plan, func(p *planned) bool { return p.split }), count(plan, func(p *planned) bool { return p.dust }),
			k.kills.Load(), bank.FaultCounts().Drops, paidByBank, paidByUs, mailed, resent, strays)
		AddReportEntry("crash test", report)
		GinkgoWriter.Println(report)
	})
})

// pay sends p's deposit: a stranger's dust first when planned (mined before the payment), then
// the wallet's payment in one send or two.
func pay(p *planned, stranger *ecdsa.PrivateKey) {
	GinkgoHelper()
	t := &payoutv1.Transfer{}
	Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t)).To(Succeed())
	if p.dust {
		_, err := base.Transfer(context.Background(), stranger, devchain.USDC, common.HexToAddress(t.Spec.DepositAddress), big.NewInt(1))
		Expect(err).NotTo(HaveOccurred())
	}
	if !p.split {
		deposit(t.Spec.DepositAddress, p.deposit)
		return
	}
	first := decimal.RequireFromString(p.deposit).Div(decimal.NewFromInt(3)).Truncate(2)
	deposit(t.Spec.DepositAddress, first.StringFixed(2))
	deposit(t.Spec.DepositAddress, decimal.RequireFromString(p.deposit).Sub(first).StringFixed(2))
}

func count[T any](plan []T, f func(T) bool) int {
	n := 0
	for _, p := range plan {
		if f(p) {
			n++
		}
	}
	return n
}

// expectStraysRefundedOnce checks that every stranger's dust is a stray deposit of its transfer,
// refunds every one with the operators' plugin (`kubectl payout refund`), and checks on the
// chain that the refund wallet sent the stranger exactly one base unit per stray, once: a second
// `kubectl payout refund` changes nothing. It returns how many strays were refunded.
func expectStraysRefundedOnce(plan []*planned, kubeconfig string, stranger common.Address, before *big.Int) int {
	GinkgoHelper()
	run := kubectlPayout(kubeconfig)
	from, err := base.Client.BlockNumber(context.Background())
	Expect(err).NotTo(HaveOccurred())
	var dusted []*planned
	for _, p := range plan {
		t := &payoutv1.Transfer{}
		Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t)).To(Succeed())
		if !p.dust {
			Expect(t.Status.StrayDeposits).To(BeEmpty(), "%s: the wallet's own sends are no strays", p.id)
			continue
		}
		dusted = append(dusted, p)
		Expect(t.Status.StrayDeposits).To(HaveLen(1), p.id)
		Expect(chain.SameSender(t.Status.StrayDeposits[0].From, stranger.Hex())).To(BeTrue())
		Expect(t.Status.StrayDeposits[0].Amount).To(Equal("1"))
		out, err := run("refund", p.id)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("the stray deposit of 0.000001 usdc on base from " + strings.ToLower(stranger.Hex())))
	}
	for _, p := range dusted {
		ns := payoutv1.AccountNamespace(p.acct.name)
		Eventually(func() payoutv1.RefundState {
			list := &payoutv1.RefundList{}
			Expect(env.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{payoutv1.RefundTransferLabel: p.id})).To(Succeed())
			if len(list.Items) != 1 {
				return ""
			}
			return list.Items[0].Status.State
		}).WithTimeout(3*time.Minute).Should(Equal(payoutv1.RefundConfirmed), p.id)
		out, err := run("refund", p.id)
		Expect(err).To(HaveOccurred(), "a second refund of %s: %s", p.id, out)
		Expect(out).To(ContainSubstring("already requested"))
	}
	// read back from the chain: one transfer of one unit per stray, from the refund wallet
	refundWallet := crypto.PubkeyToAddress(chains.RefundKey.PublicKey)
	time.Sleep(3 * time.Second) // a second refund would have been signed by now
	events, err := base.TransferEvents(context.Background(), devchain.USDC, from, nil)
	Expect(err).NotTo(HaveOccurred())
	sent := 0
	for _, e := range events {
		if e.To == stranger {
			Expect(e.From).To(Equal(refundWallet))
			Expect(e.Value.Int64()).To(Equal(int64(1)))
			sent++
		}
	}
	Expect(sent).To(Equal(len(dusted)), "one refund per stray, on the chain")
	after, err := base.BalanceOf(context.Background(), devchain.USDC, stranger)
	Expect(err).NotTo(HaveOccurred())
	Expect(after).To(Equal(before), "the stranger got every unit of dust back, once")
	return sent
}

// kubectlPayout builds the operators' plugin and returns a runner of its command lines against
// the cluster of kubeconfig, which answers what it printed (stdout and stderr).
func kubectlPayout(kubeconfig string) func(args ...string) (string, error) {
	GinkgoHelper()
	plugin := filepath.Join(workdir, "kubectl-payout")
	build := exec.Command("go", "build", "-o", plugin, "../kubectl-payout")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return func(args ...string) (string, error) {
		cmd := exec.Command(plugin, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// payoutdBinary builds payoutd and writes a kubeconfig of a cluster-admin user named user for it.
func payoutdBinary(user string) (bin, kubeconfig string) {
	GinkgoHelper()
	bin = filepath.Join(workdir, "payoutd")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return bin, adminKubeconfig(user)
}

// adminKubeconfig writes a kubeconfig of a cluster-admin user named user and returns its path.
func adminKubeconfig(user string) string {
	GinkgoHelper()
	return adminKubeconfigOf(env, user)
}

// adminKubeconfigOf writes a kubeconfig of a cluster-admin user named user of the control plane
// e and returns its path.
func adminKubeconfigOf(e *testenv.Env, user string) string {
	GinkgoHelper()
	u, err := e.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	_, err = clientcmd.Load(kc)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(workdir, user+"-kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	return kubeconfig
}

// awaitFinal waits until every planned transfer has a final status, and returns them.
func awaitFinal(plan []*planned, timeout time.Duration) map[string]*payoutv1.Transfer {
	GinkgoHelper()
	final := map[string]*payoutv1.Transfer{}
	Eventually(func() int {
		for _, p := range plan {
			t := &payoutv1.Transfer{}
			if final[p.id] == nil && env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t) == nil && transfer.Ended(t) {
				final[p.id] = t
			}
		}
		return len(final)
	}).WithTimeout(timeout).WithPolling(2 * time.Second).Should(Equal(len(plan)))
	return final
}

// expectLedgerMatches checks that every transfer reached the outcome planned for it and that the
// bank's ledger agrees to the cent: one funded payout of the quoted amount per completed transfer,
// none for a failed one, whose deposit stays refundable.
func expectLedgerMatches(plan []*planned, final map[string]*payoutv1.Transfer) (completed, failed int, paidByBank, paidByUs decimal.Decimal) {
	GinkgoHelper()
	ledger := map[string][]simbank.Entry{}
	for _, e := range bank.Ledger() {
		ledger[e.Reference] = append(ledger[e.Reference], e)
	}
	paidByUs, paidByBank = decimal.Zero, decimal.Zero
	for _, p := range plan {
		t := final[p.id]
		entries := ledger[p.id]
		sent := 0
		for _, e := range entries {
			if e.Sent() {
				sent++
				paidByBank = paidByBank.Add(e.TargetAmount)
				Expect(e.Fundings).To(Equal(1), "funded once: %s", p.id)
			}
		}
		if p.failing == "" {
			completed++
			Expect(t.Status.Phase).To(Equal(payoutv1.PhaseCompleted), "%s: %+v", p.id, t.Status.Failure)
			Expect(entries).To(HaveLen(1), "one payout at the bank for %s", p.id)
			Expect(sent).To(Equal(1))
			Expect(entries[0].TargetAmount.Equal(decimal.RequireFromString(string(t.Spec.Quote.TargetAmount)))).To(BeTrue(),
				"%s: the bank paid %s, the quote said %s", p.id, entries[0].TargetAmount, t.Spec.Quote.TargetAmount)
			paidByUs = paidByUs.Add(decimal.RequireFromString(string(t.Spec.Quote.TargetAmount)))
		} else {
			failed++
			Expect(t.Status.Phase).To(Equal(payoutv1.PhaseFailed), p.id)
			Expect(string(t.Status.Failure.Reason)).To(Equal(p.failing), p.id)
			Expect(sent).To(BeZero(), "nothing paid for failed %s", p.id)
			Expect(t.Status.Deposit).NotTo(BeNil(), "%s keeps its deposit refundable", p.id)
		}
	}
	Expect(paidByBank.Equal(paidByUs)).To(BeTrue(), "the bank paid %s EUR, the completed transfers %s EUR", paidByBank, paidByUs)
	return completed, failed, paidByBank, paidByUs
}

// createDuringCrashes creates p's v1 transfer through a facade that may die at any moment, and
// returns its id. A request whose answer is lost is settled by looking the transfer up: its id
// follows from its quote.
func createDuringCrashes(acct *account, p *planned, rid int64) string {
	GinkgoHelper()
	var answers []int     // the quote's, for the failure message
	var refusals []string // the create's 400s
	for attempt := 0; ; attempt++ {
		Expect(attempt).To(BeNumerically("<", 50), "creating a transfer: the quote answered %v, the create refused %q", answers, refusals)
		status, m := acct.call("GET", "/api/payouts/quote?targetCurrency=EUR&sourceAmount="+p.amount, nil)
		answers = append(answers, status)
		if status != 200 {
			time.Sleep(pause(status))
			continue
		}
		q := m["quoteId"].(string)
		body := transferBody(q, p.amount, rid, true)
		body["customer_email"] = p.email
		id := payoutv1.TransferNameForQuote(q)
		for try := 0; try < 20; try++ {
			status, m = acct.call("POST", "/api/payouts/transfer", body)
			switch {
			case status == 200:
				return m["transfer"].(map[string]any)["id"].(string)
			case status == 409: // our claim of a create lost in a crash: another uuid
				body["customer_uuid"] = uuid.NewString()
				continue
			case status == 429:
				time.Sleep(pause(status))
				continue
			case status == 400 || status == 0 || status >= 500:
				if s, _ := acct.status(id); s != "" {
					return id // the create was done; its answer was lost
				}
				if status == 400 {
					// a real refusal: the quote expired meanwhile, or base is unavailable for the
					// moments after a restart in which its new watcher has not scanned yet (its
					// deposit option reads the cursor): a new quote, a moment later
					refusals = append(refusals, fmt.Sprint(m["error"]))
					time.Sleep(pause(status))
					break
				}
				time.Sleep(pause(status))
				continue
			default:
				Fail(fmt.Sprintf("create: %d %v", status, m))
			}
			break
		}
	}
}

// pause is how long to wait before asking again after status (0: no answer).
func pause(status int) time.Duration {
	if status == 429 {
		return 5 * time.Second // a per-key minute budget: wait for its window
	}
	return 500 * time.Millisecond
}
