package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/recovery"
	"github.com/stablepay/payout-operator/test/testenv"
)

// An etcd restore (issue 23, "Restores"), as docs/operations/backup.md does it: the API server and
// payoutd stop, etcd's data goes back to a snapshot, everything starts again. The provider and
// the chain ran on meanwhile: payouts made after the snapshot, refunds sent after it, transfers
// (v1 and v2) created and paid after it are unknown to the restored objects. The snapshot here is
// a copy of etcd's data directory taken while etcd was stopped (a volume snapshot); what payoutd
// sees afterwards is what an `etcdutl snapshot restore` gives.
//
// 100 transfers over ten accounts (each key within its per-minute limits): 40 paid before the
// snapshot, 30 created before it and paid after, 10 failed before it and refunded (5 before the
// snapshot, 5 requested before it and sent after), 15 v1 and 5 v2 created and paid after it.
var _ = Describe("an etcd restore", longest, func() {
	It("pays no deposit twice and loses none: the check rebuilds what the provider shows, and money waits for the operator", func() {
		saved := env
		DeferCleanup(func() { env = saved })
		dir := GinkgoT().TempDir()
		live, snapshot := filepath.Join(dir, "etcd"), filepath.Join(dir, "snapshot")
		// a bank of its own: the suite's other clusters know nothing of these payouts
		rbank, err := simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: filepath.Join(dir, "bank"), Token: bankToken, SettleAfter: time.Second})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(rbank.Close)
		args := []string{"--fiat-url", rbank.URL(), "--recovery-gap", "10s", "--v2-match-timeout", "5m"}
		startCluster := func(data string) *testenv.Env {
			GinkgoHelper()
			e, err := testenv.Start(func(e *envtest.Environment) {
				e.ControlPlane.Etcd = &envtest.Etcd{DataDir: data, StartTimeout: time.Minute}
			})
			Expect(err).NotTo(HaveOccurred())
			return e
		}
		ctx := context.Background()
		type made struct {
			acct           *account
			id, address    string
			payer          *ecdsa.PrivateKey
			refundTo       common.Address
			refundedBefore *big.Int // the payer's balance before its refund
		}
		get := func(m made) *payoutv1.Transfer {
			GinkgoHelper()
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(m.acct.name), Name: m.id}, t)).To(Succeed())
			return t
		}
		// phases reads the transfers' phases from the API server (the facade's GET has a
		// per-minute limit per key)
		phases := func(ms []made) map[payoutv1.TransferPhase]int {
			out := map[payoutv1.TransferPhase]int{}
			for _, m := range ms {
				t := &payoutv1.Transfer{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(m.acct.name), Name: m.id}, t); err != nil {
					out["unreadable"]++
					continue
				}
				out[t.Status.Phase]++
			}
			return out
		}
		allIn := func(ms []made, phase payoutv1.TransferPhase) {
			GinkgoHelper()
			Eventually(func() map[payoutv1.TransferPhase]int { return phases(ms) }).WithTimeout(3 * time.Minute).WithPolling(time.Second).
				Should(Equal(map[payoutv1.TransferPhase]int{phase: len(ms)}))
		}
		payoutsOf := func(id string) int {
			n := 0
			for _, e := range rbank.Ledger() {
				if e.Reference == id {
					n++
				}
			}
			return n
		}
		v1 := func(a *account, rid int64, amount, wallet string) made {
			GinkgoHelper()
			body := transferBody(a.quote(amount), amount, rid, true)
			body["wallet_address"] = wallet
			tr := a.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)
			return made{acct: a, id: tr["id"].(string), address: tr["deposit_address"].(string)}
		}
		v2 := func(a *account, rid int64, amount string) (made, common.Hash) {
			GinkgoHelper()
			m := a.must(200, "POST", "/api/payouts/transfer/v2", transferBody(a.quote(amount), amount, rid, true))
			id := m["transfer_id"].(string)
			hash := deposit(m["deposit_address"].(string), amount)
			a.must(200, "POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": id, "tx_hash": hash.Hex()})
			return made{acct: a, id: id}, hash
		}
		amount := func(i int) string { return fmt.Sprintf("%d.%02d", 10+i%30, i%100) }
		type acctOf struct {
			*account
			payee, failing int64
		}
		// spread makes n transfers with make, round robin over the accounts
		var accts []acctOf
		spread := func(n int, mk func(i int, a acctOf) made) []made {
			GinkgoHelper()
			out := make([]made, 0, n)
			for i := range n {
				out = append(out, mk(i, accts[i%len(accts)]))
			}
			return out
		}
		pay := func(ms []made) {
			GinkgoHelper()
			for _, m := range ms {
				t := get(m)
				deposit(m.address, string(t.Spec.Amount))
			}
		}

		By("before the snapshot: 40 transfers paid, 30 waiting for their deposits, 10 failed, 5 of them refunded and 5 with a refund requested")
		env = startCluster(live)
		url, stop := runInProcess(env.Config, args...)
		for range 10 {
			a := newAccount(url)
			accts = append(accts, acctOf{account: a, payee: a.recipient("Restore Payee"), failing: a.recipient("Simulated Failure")})
		}
		setURL := func(u string) {
			for _, a := range accts {
				a.url = u
			}
		}
		paidBefore := spread(40, func(i int, a acctOf) made { return v1(a.account, a.payee, amount(i), crypto0x()) })
		pay(paidBefore)
		waiting := spread(30, func(i int, a acctOf) made { return v1(a.account, a.payee, amount(40+i), crypto0x()) })
		failed := spread(10, func(i int, a acctOf) made {
			key, from := freshWallet(50_000_000)
			m := v1(a.account, a.failing, amount(70+i), from.Hex())
			m.payer, m.refundTo = key, from
			return m
		})
		for _, m := range failed {
			units := decimal.RequireFromString(string(get(m).Spec.Amount)).Shift(6).BigInt()
			// the payer's own wallet sends: its refund comes back to it
			_, err := base.SendTransfer(ctx, m.payer, devchain.USDC, common.HexToAddress(m.address), units)
			Expect(err).NotTo(HaveOccurred())
		}
		allIn(paidBefore, payoutv1.PhaseCompleted)
		allIn(failed, payoutv1.PhaseFailed)
		for i := range failed {
			failed[i].refundedBefore, err = base.BalanceOf(ctx, devchain.USDC, failed[i].refundTo)
			Expect(err).NotTo(HaveOccurred())
		}
		for _, m := range failed[:5] {
			_, _, err = admin.RequestRefund(ctx, env.Client, m.id, "restore e2e")
			Expect(err).NotTo(HaveOccurred())
		}
		allIn(failed[:5], payoutv1.PhaseRefunded)
		firstCheck := &payoutv1.Recovery{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, firstCheck)).To(Succeed())
		stop()
		for _, m := range failed[5:] {
			_, _, err = admin.RequestRefund(ctx, env.Client, m.id, "restore e2e")
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(env.Stop()).To(Succeed())
		out, err := exec.Command("cp", "-a", live, snapshot).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))

		By("after the snapshot: the 30 waiting transfers are paid, 5 refunds sent, 15 v1 and 5 v2 transfers created and paid")
		env = startCluster(live)
		url, stop = runInProcess(env.Config, args...)
		setURL(url)
		// this restart took longer than the gap: the check of this start (not the one the
		// object still shows from before the restart) asks for an operator, who resumes
		rec := &payoutv1.Recovery{}
		Eventually(func() bool {
			_ = env.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec)
			st := rec.Status
			return st.CheckID != firstCheck.Status.CheckID && (st.State == payoutv1.RecoveryRequired || st.State == payoutv1.RecoveryClear)
		}).Should(BeTrue(), "the check of this start")
		before := rec.DeepCopy()
		rec.Spec.Acknowledged = rec.Status.CheckID
		Expect(env.Client.Patch(ctx, rec, client.MergeFrom(before))).To(Succeed())
		pay(waiting)
		lostV1 := spread(15, func(i int, a acctOf) made { return v1(a.account, a.payee, amount(80+i), crypto0x()) })
		pay(lostV1)
		lostHashes := map[string]common.Hash{}
		lostV2 := spread(5, func(i int, a acctOf) made {
			m, h := v2(a.account, a.payee, amount(95+i))
			lostHashes[m.id] = h
			return m
		})
		lost := append(append([]made{}, lostV1...), lostV2...)
		allIn(append(append([]made{}, waiting...), lost...), payoutv1.PhaseCompleted)
		allIn(failed, payoutv1.PhaseRefunded)
		refunded := map[common.Address]*big.Int{}
		for _, m := range failed {
			b, err := base.BalanceOf(ctx, devchain.USDC, m.refundTo)
			Expect(err).NotTo(HaveOccurred())
			units := decimal.RequireFromString(string(get(m).Spec.Amount)).Shift(6).BigInt()
			Expect(new(big.Int).Sub(b, m.refundedBefore)).To(Equal(units), "refunded once: %s", m.id)
			refunded[m.refundTo] = b
		}
		stop()
		Expect(env.Stop()).To(Succeed())

		By("the restore: payoutd starts on the snapshot; the check finds the cluster behind the provider")
		env = startCluster(snapshot)
		url, stop = runInProcess(env.Config, args...)
		setURL(url)
		DeferCleanup(func() { stop(); Expect(env.Stop()).To(Succeed()) })
		rec = &payoutv1.Recovery{}
		Eventually(func() payoutv1.RecoveryState {
			_ = env.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec)
			return rec.Status.State
		}).Should(Equal(payoutv1.RecoveryRequired))
		found := map[string]string{}
		for _, f := range rec.Status.Findings {
			found[f.Kind+" "+f.Subject] = f.Message
		}
		Expect(found).To(HaveKey(recovery.RecordsStale+" "), "the heartbeat is the snapshot's")
		for _, m := range lost {
			Expect(found).To(HaveKey(recovery.LostTransfer+" "+m.id), "made after the snapshot")
			Expect(found).To(HaveKey(recovery.DepositRebound+" "+m.id), "its deposit, which the payout names, is claimed again")
		}
		for _, m := range waiting {
			Expect(found).To(HaveKey(recovery.PayoutUnrecorded+" "+m.id), "paid after the snapshot")
		}
		Expect(rec.Status.Findings).To(HaveLen(1+2*len(lost)+len(waiting)), "nothing else: %v", found)

		By("no lost transfer's hash pays anything else: their claims were made again from the provider's payouts")
		a := accts[0]
		for id, hash := range lostHashes {
			c := a.must(200, "POST", "/api/payouts/transfer/v2", transferBody(a.quote("33.00"), "33.00", a.payee, true))["transfer_id"].(string)
			code, body := a.call("POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": c, "tx_hash": hash.Hex()})
			Expect(code).To(Equal(409), "the hash of %s: %v", id, body)
			Expect(payoutsOf(c)).To(BeZero())
		}

		By("what the ledgers show is adopted while money waits: the payouts found at the provider, the refunds found on chain")
		allIn(waiting, payoutv1.PhaseCompleted)
		allIn(failed, payoutv1.PhaseRefunded)
		for _, m := range failed {
			Expect(get(m).Status.Refund).NotTo(BeNil())
		}

		By("money waits for the operator: a new transfer's payout is not created")
		fresh := v1(accts[1].account, accts[1].payee, "34.00", crypto0x())
		pay([]made{fresh})
		Eventually(func() string {
			ready := meta.FindStatusCondition(get(fresh).Status.Conditions, payoutv1.ReadyCondition)
			if ready == nil {
				return ""
			}
			return ready.Message
		}).WithTimeout(90 * time.Second).
			Should(ContainSubstring("money waits for an operator"))
		Consistently(func() int { return payoutsOf(fresh.id) }).WithTimeout(3 * time.Second).Should(BeZero())

		By("the operator reads the check, redoes what it lists, and resumes with the plugin")
		kc := filepath.Join(dir, "kubeconfig")
		Expect(os.WriteFile(kc, env.KubeConfig, 0o600)).To(Succeed())
		run := kubectlPayout(kc)
		report, err := run("recover")
		Expect(err).NotTo(HaveOccurred(), report)
		Expect(report).To(MatchRegexp(`State:\s+Required`))
		Expect(report).To(ContainSubstring(recovery.LostTransfer))
		Expect(report).To(ContainSubstring("kubectl payout apikey revoke"), "the redo list")
		resumed, err := run("recover", "--resume")
		Expect(err).NotTo(HaveOccurred(), resumed)
		Expect(resumed).To(Equal("Resumed after check " + rec.Status.CheckID + ": money moves\n"))
		allIn([]made{fresh}, payoutv1.PhaseCompleted)

		By("the bank holds one payout per transfer, each deposit pays once, each refund went out once")
		all := append(append(append(append([]made{}, paidBefore...), waiting...), lost...), failed...)
		all = append(all, fresh)
		Expect(all).To(HaveLen(101))
		for _, m := range all {
			Expect(payoutsOf(m.id)).To(Equal(1), m.id)
		}
		sources := map[string]int{}
		for _, e := range rbank.Ledger() {
			if e.SourceOfFunds != "" {
				sources[e.SourceOfFunds]++
			}
		}
		for s, n := range sources {
			Expect(n).To(Equal(1), "deposit %s paid %d payouts", s, n)
		}
		for _, h := range lostHashes {
			Expect(strings.Join(mapKeys(sources), " ")).To(ContainSubstring(strings.ToLower(h.Hex())))
		}
		Consistently(func() map[common.Address]*big.Int {
			now := map[common.Address]*big.Int{}
			for _, m := range failed {
				b, _ := base.BalanceOf(ctx, devchain.USDC, m.refundTo)
				now[m.refundTo] = b
			}
			return now
		}).WithTimeout(3*time.Second).Should(Equal(refunded), "the restored Refunds adopted the transactions on chain: nothing sent twice")
		AddReportEntry("restore test", fmt.Sprintf("%d transfers; findings after the restore: %d (%d lost transfers and their deposits rebound, %d payouts unrecorded)",
			len(all), len(rec.Status.Findings), len(lost), len(waiting)))
	})
})

func mapKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
