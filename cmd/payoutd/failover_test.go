package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// leaseNamespace holds the leader-election lease of the failover test's replicas.
const leaseNamespace = "payout-failover"

// leaseName is payoutd's leader-election id.
const leaseName = "payoutd.payout.stablepay.dev"

// leads reports whether the replica's current process holds the lease: client-go logs the
// acquisition once per process, and each start of a replica writes a new log.
func (k *killer) leads() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cmd == nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(k.logDir, fmt.Sprintf("payoutd-%03d.log", k.starts)))
	return err == nil && strings.Contains(strings.ToLower(string(b)), "successfully acquired lease")
}

// stop stops the replica as Kubernetes stops a pod (SIGTERM) and waits until it has exited.
func (k *killer) stop() {
	GinkgoHelper()
	k.mu.Lock()
	defer k.mu.Unlock()
	Expect(k.cmd).NotTo(BeNil())
	Expect(k.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	Eventually(func() error { return k.cmd.Process.Signal(syscall.Signal(0)) }).WithTimeout(30*time.Second).Should(HaveOccurred(), "payoutd exits")
	k.cmd = nil
}

// watchLease sends every version of the leader-election lease after resourceVersion, in order,
// until the spec ends.
func watchLease(resourceVersion string) <-chan *coordinationv1.Lease {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(env.Config)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	w, err := cs.CoordinationV1().Leases(leaseNamespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + leaseName, ResourceVersion: resourceVersion})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	out := make(chan *coordinationv1.Lease, 64)
	go func() {
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok {
				select {
				case out <- l:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// lease reads the leader-election lease.
func lease() *coordinationv1.Lease {
	GinkgoHelper()
	l := &coordinationv1.Lease{}
	Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, l)).To(Succeed())
	return l
}

var _ = Describe("controller failover", Ordered, func() {
	It("hands over from a killed leader to the standby without losing a transfer or paying one twice", func() {
		bin, kubeconfig := payoutdBinary("payoutd-failover")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}
		if err := env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		// A short lease, so that the handover after a crash takes seconds: the standby takes over
		// once the dead leader's lease has run out.
		const leaseDuration = 4 * time.Second
		election := []string{"--leader-elect", "--leader-election-namespace", leaseNamespace,
			"--leader-elect-lease-duration", leaseDuration.String(), "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms"}
		replicas := make([]*killer, 2)
		for i := range replicas {
			replicas[i] = &killer{bin: bin, kubeconfig: kubeconfig, addr: freeAddr(), extra: election, logDir: GinkgoT().TempDir()}
			replicas[i].start()
			DeferCleanup(replicas[i].kill)
		}
		for _, r := range replicas {
			Eventually(func() error { return ping("http://" + r.addr) }).Should(Succeed())
		}
		leader := func() *killer {
			GinkgoHelper()
			var l *killer
			Eventually(func() int {
				n := 0
				for _, r := range replicas {
					if r.leads() {
						l, n = r, n+1
					}
				}
				return n
			}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(Equal(1), "exactly one replica leads")
			return l
		}
		first := leader()
		waitBaseAvailable()

		// 4 accounts of 8 transfers, half of the accounts on each replica's facade; one transfer of
		// each account goes to a recipient the bank refuses.
		var plan []*planned
		for a := range 4 {
			acct := newAccount("http://" + replicas[a%2].addr)
			payee, refused := acct.recipient("Failover Payee"), acct.recipient("Simulated Failure")
			for i := range 8 {
				p := &planned{acct: acct, amount: fmt.Sprintf("%d.%02d", 10+a, 10+i), email: fmt.Sprintf("failover+%d-%d@example.com", a, i)}
				p.deposit = p.amount
				rid := payee
				if i == 3 {
					rid, p.failing = refused, string(payoutv1.FailurePayoutRejected)
				}
				p.id = createDuringCrashes(acct, p, rid)
				plan = append(plan, p)
			}
		}
		fund := func(ps []*planned) {
			GinkgoHelper()
			for _, p := range ps {
				t := &payoutv1.Transfer{}
				Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t)).To(Succeed())
				deposit(t.Spec.DepositAddress, p.deposit)
			}
		}
		// inFlight counts the transfers of ps whose payout intent is recorded and that have not
		// ended: their payout is at the bank or about to be, the moment a crash must not double.
		inFlight := func(ps []*planned) int {
			n := 0
			for _, p := range ps {
				t := &payoutv1.Transfer{}
				if env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t) == nil &&
					t.Status.Payout != nil && !transfer.Ended(t) {
					n++
				}
			}
			return n
		}
		// handOver kills the leader while payouts of wave are in flight, funds next while no
		// replica leads, and returns the new leader and how long the lease took to change hands.
		handOver := func(old *killer, wave, next []*planned) (*killer, time.Duration) {
			GinkgoHelper()
			Eventually(func() int { return inFlight(wave) }).WithTimeout(2*time.Minute).WithPolling(50*time.Millisecond).
				Should(BeNumerically(">=", 1), "payouts in flight")
			before := lease()
			killed := time.Now()
			old.kill()
			// Deposits made while no replica leads are found by the next leader's watcher.
			fund(next)
			var took time.Duration
			Eventually(func() bool {
				l := lease()
				if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == *before.Spec.HolderIdentity {
					return false
				}
				took = l.Spec.AcquireTime.Sub(killed)
				return true
			}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "the standby takes the lease")
			now := leader()
			Expect(now).NotTo(BeIdenticalTo(old))
			old.start() // the killed pod comes back, as the standby
			return now, took
		}

		fund(plan[:16])
		second, took1 := handOver(first, plan[:16], plan[16:24])
		fund(plan[24:])
		_, took2 := handOver(second, plan[16:], nil)
		Expect(first.kills.Load() + second.kills.Load()).To(BeEquivalentTo(2))

		// A graceful stop (a rolling update) gives the lease up: the standby leads at once, not
		// after a lease duration. The handover is measured from the release itself (client-go
		// writes an empty holder, its RenewTime the moment of release) to the standby's
		// acquisition, both read from the lease's own history through a watch: the leader's
		// shutdown before it releases is not the handover, and on a loaded machine it alone
		// can take longer than a lease.
		third := leader()
		before := lease()
		history := watchLease(before.ResourceVersion)
		third.stop()
		var released, took *coordinationv1.Lease
		Eventually(func() bool {
			for {
				select {
				case l := <-history:
					switch {
					case l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "":
						released = l
					case released != nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != *before.Spec.HolderIdentity:
						took = l
						return true
					}
				default:
					return false
				}
			}
		}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "the leader releases the lease and the standby takes it")
		took3 := took.Spec.AcquireTime.Sub(released.Spec.RenewTime.Time)
		Expect(took3).To(BeNumerically("<", leaseDuration), "a released lease is taken before it would have run out")

		final := awaitFinal(plan, 3*time.Minute)
		completed, failed, paidByBank, _ := expectLedgerMatches(plan, final)
		Expect(completed).To(Equal(28))
		Expect(failed).To(Equal(4))
		Expect(lease().Spec.LeaseTransitions).To(HaveValue(BeNumerically(">=", 2)))
		report := fmt.Sprintf("%d transfers over two replicas (%d completed, %d failed as planned), the leader killed twice mid-flight; "+
			"lease handed over %v and %v after the kills (lease duration %v), %v after a graceful stop; the bank paid %s EUR, one payout per completed transfer",
			len(plan), completed, failed, took1.Round(10*time.Millisecond), took2.Round(10*time.Millisecond), leaseDuration, took3.Round(10*time.Millisecond), paidByBank)
		AddReportEntry("failover", report)
		GinkgoWriter.Println(report)
	})
})
