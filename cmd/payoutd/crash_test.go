package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/fiat/simbank"
	"github.com/stablepay/payout-operator/internal/notify/smtpsink"
)

// crashTransfers is how many transfers move through the machine while payoutd is killed.
const crashTransfers = 200

// killer runs the payoutd binary and kills it with SIGKILL at random moments, restarting it after
// a short pause, as a node failure would.
type killer struct {
	bin, kubeconfig, addr string
	extra                 []string // flags beyond payoutdArgs
	logDir                string
	mu                    sync.Mutex
	cmd                   *exec.Cmd
	kills                 atomic.Int32
	starts                int
}

func (k *killer) start() {
	GinkgoHelper()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.starts++
	log, err := os.Create(filepath.Join(k.logDir, fmt.Sprintf("payoutd-%03d.log", k.starts)))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig}, payoutdArgs(k.addr, k.extra...)...)...)
	cmd.Env = append(os.Environ(), "PAYOUT_FIAT_TOKEN="+bankToken)
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
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(2000+rand.IntN(4000)) * time.Millisecond):
		}
		k.kill()
		time.Sleep(time.Duration(100+rand.IntN(900)) * time.Millisecond)
		k.start()
	}
}

// planned is a transfer of the crash test and the outcome it must reach.
type planned struct {
	acct    *account
	id      string
	amount  string
	deposit string
	failing string // "": completes; else the failure reason it must end with
	email   string
}

var _ = Describe("a crash at any moment", Ordered, func() {
	It("loses no transfer and pays none twice while payoutd is killed at random", func() {
		bin, kubeconfig := payoutdBinary("payoutd-crash")

		// A lost answer now and then on top of the crashes: the bank acts, the answer never comes.
		bank.SetFaults(simbank.Faults{DropRate: 0.05, Ops: []string{simbank.OpTransfer, simbank.OpFund}})
		DeferCleanup(func() { bank.SetFaults(simbank.Faults{}) })

		k := &killer{bin: bin, kubeconfig: kubeconfig, addr: freeAddr(), logDir: GinkgoT().TempDir()}
		k.start()
		DeferCleanup(k.kill)
		url := "http://" + k.addr
		Eventually(func() error { return ping(url) }).Should(Succeed())
		waitBaseAvailable()
		stop, stopped := make(chan struct{}), make(chan struct{})
		go k.rampage(stop, stopped)
		stopOnce := sync.OnceFunc(func() { close(stop); <-stopped })
		DeferCleanup(stopOnce)

		// 20 accounts of 10 transfers each keep every key within its per-minute limits.
		const accounts = 20
		var plan []*planned
		var mu sync.Mutex
		var wg sync.WaitGroup
		for a := range accounts {
			acct := newAccount(url)
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
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
					}
					p.id = createDuringCrashes(acct, p, rid)
					mu.Lock()
					plan = append(plan, p)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		Expect(plan).To(HaveLen(crashTransfers))

		// The deposits, while the killing goes on.
		for _, p := range plan {
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t)).To(Succeed())
			deposit(t.Spec.DepositAddress, p.deposit)
		}
		// Let the machine work under crashes for a while, then let it finish.
		time.Sleep(45 * time.Second)
		stopOnce()
		if k.cmd == nil {
			k.start()
		}
		GinkgoWriter.Printf("payoutd was killed %d times\n", k.kills.Load())
		Expect(k.kills.Load()).To(BeNumerically(">=", 5))

		final := awaitFinal(plan, 5*time.Minute)
		completed, failed, paidByBank, paidByUs := expectLedgerMatches(plan, final)
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
		report := fmt.Sprintf("%d transfers (%d completed, %d failed as planned), payoutd killed %d times, %d bank answers lost, "+
			"%s EUR paid by the bank = %s EUR of the completed quotes; %d outcomes mailed, %d resent after a crash",
			len(plan), completed, failed, k.kills.Load(), bank.FaultCounts().Drops, paidByBank, paidByUs, mailed, resent)
		AddReportEntry("crash test", report)
		GinkgoWriter.Println(report)
	})
})

// payoutdBinary builds payoutd and writes a kubeconfig of a cluster-admin user named user for it.
func payoutdBinary(user string) (bin, kubeconfig string) {
	GinkgoHelper()
	bin = filepath.Join(workdir, "payoutd")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	u, err := env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	_, err = clientcmd.Load(kc)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(workdir, user+"-kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	return bin, kubeconfig
}

// awaitFinal waits until every planned transfer has a final status, and returns them.
func awaitFinal(plan []*planned, timeout time.Duration) map[string]*payoutv1.Transfer {
	GinkgoHelper()
	final := map[string]*payoutv1.Transfer{}
	Eventually(func() int {
		for _, p := range plan {
			t := &payoutv1.Transfer{}
			if final[p.id] == nil && env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t) == nil && t.Status.Phase.Terminal() {
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
	for attempt := 0; ; attempt++ {
		Expect(attempt).To(BeNumerically("<", 50), "creating a transfer")
		status, m := acct.call("GET", "/api/payouts/quote?targetCurrency=EUR&sourceAmount="+p.amount, nil)
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
					break // a real refusal (the quote expired meanwhile): a new quote
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
