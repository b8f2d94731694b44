package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/ledger"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/test/pgtest"
)

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var _ = Describe("ledger", func() {
	var (
		account string
		store   *archive.Store
	)
	BeforeEach(func() {
		account = newAccount("ledger")
		pg := pgtest.Start(GinkgoT())
		var err error
		store, err = archive.Open(ctx, pg.DSN())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		Expect(os.Setenv(archive.DSNEnv, pg.DSN())).To(Succeed())
		DeferCleanup(os.Unsetenv, archive.DSNEnv)
	})

	// at is a time of the period the spec reports on, far from every other spec's fixtures.
	at := func(day int) metav1.Time { return metav1.NewTime(time.Date(2031, 1, day, 12, 0, 0, 0, time.UTC)) }
	wallet := "0x8ba1f109551bd432803012645ac136ddd64dba72"

	// depositObject records a log of units at t's deposit address, as the chain watcher does.
	depositObject := func(t *payoutv1.Transfer, tx string, units int64, from string, when metav1.Time) *payoutv1.Deposit {
		GinkgoHelper()
		d := &payoutv1.Deposit{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0),
				Labels: map[string]string{payoutv1.DepositTransferLabel: t.Name}},
			Spec: payoutv1.DepositSpec{Transfer: t.Name, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Contract: "0x036cbd53842c5426634e7929541ec2318f3dcf7e", To: t.Spec.DepositAddress, From: from,
				Amount: fmt.Sprint(units), TxHash: tx, BlockNumber: 100, BlockHash: "0x" + randomHex(32), BlockTime: when, Confirmations: 3},
		}
		Expect(k8s.Create(ctx, d)).To(Succeed())
		return d
	}

	// paidTransfer is a v1 transfer of 25 USD whose deposit of units arrived on day and whose
	// payout the provider completed (21.56 EUR, as its quote promised), or rejected.
	paidTransfer := func(day int, units int64, state payoutv1.PayoutState, mods ...func(*payoutv1.TransferStatus, *payoutv1.Transfer)) *payoutv1.Transfer {
		GinkgoHelper()
		tx := "0x" + randomHex(32)
		t := storeTransfer(account, payoutv1.TransferStatus{}, func(t *payoutv1.Transfer) {
			t.Spec.DepositAddress = "0x" + randomHex(20)
			u := randomHex(16)
			t.Spec.CustomerUUID = u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
		})
		depositObject(t, tx, units, wallet, at(day))
		when := at(day)
		st := payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted,
			Deposit: &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: tx, From: wallet,
				Amount: "25000000", BlockTime: &when, SeenAt: when, ConfirmedAt: &when},
			Payout: &payoutv1.PayoutFacts{Reference: t.Name, Provider: "simbank", State: state, RequestedAt: at(day + 1),
				TargetAmount: "21.56", SourceAmount: "24.50"},
			UpdatedAt: &when,
		}
		if units > 25_000_000 {
			st.StrayDeposits = append(st.StrayDeposits, payoutv1.StrayDeposit{TxHash: tx, Token: payoutv1.TokenUSDC,
				Amount: fmt.Sprint(units - 25_000_000), From: wallet, Reason: "the excess above the transfer's amount"})
		}
		for _, m := range mods {
			m(&st, t)
		}
		t.Status = st
		Expect(k8s.Status().Update(ctx, t)).To(Succeed())
		return t
	}

	// refundObject is the confirmed Refund of t's deposit, moved through its states as the
	// refund controller moves it (the schema refuses a jump).
	refundObject := func(t *payoutv1.Transfer, day int) {
		GinkgoHelper()
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name,
			Labels: map[string]string{payoutv1.RefundTransferLabel: t.Name}}, Spec: payoutv1.RefundSpec{Transfer: t.Name}}
		Expect(k8s.Create(ctx, rf)).To(Succeed())
		nonce, when := int64(0), at(day)
		rf.Status = payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
			To: wallet, Amount: "25000000"}
		Expect(k8s.Status().Update(ctx, rf)).To(Succeed())
		rf.Status.State, rf.Status.From, rf.Status.Nonce, rf.Status.SignedTx, rf.Status.TxHash =
			payoutv1.RefundSigned, "0x2222222222222222222222222222222222222222", &nonce, "0x02f8", "0x"+randomHex(32)
		Expect(k8s.Status().Update(ctx, rf)).To(Succeed())
		rf.Status.State, rf.Status.ConfirmedAt = payoutv1.RefundConfirmed, &when
		Expect(k8s.Status().Update(ctx, rf)).To(Succeed())
	}

	// archiveTransfer puts t with its Deposit objects and Refund into the archive and deletes them
	// from the API server, in the archiver's order (controllers.Archiver).
	archiveTransfer := func(t *payoutv1.Transfer) {
		GinkgoHelper()
		t = getTransfer(t)
		t.APIVersion, t.Kind = payoutv1.GroupVersion.String(), "Transfer"
		obj, err := json.Marshal(t)
		Expect(err).NotTo(HaveOccurred())
		rec := archive.TransferRecord{ID: t.Name, UID: string(t.UID), Namespace: t.Namespace, Account: t.Spec.Account,
			Method: string(t.Spec.Method), Network: string(t.Spec.SourceNetwork), CustomerUUID: t.Spec.CustomerUUID,
			Phase: string(t.Status.Phase), CreatedAt: t.CreationTimestamp.Time, EndedAt: t.Status.UpdatedAt.Time,
			Lookup: []byte(`{}`), Object: obj}
		deps := &payoutv1.DepositList{}
		Expect(k8s.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name})).To(Succeed())
		for i := range deps.Items {
			d := &deps.Items[i]
			d.APIVersion, d.Kind = payoutv1.GroupVersion.String(), "Deposit"
			b, err := json.Marshal(d)
			Expect(err).NotTo(HaveOccurred())
			rec.Deposits = append(rec.Deposits, archive.DepositRecord{Namespace: d.Namespace, Name: d.Name, Network: string(d.Spec.Network),
				TxHash: d.Spec.TxHash, LogIndex: d.Spec.LogIndex, Object: b})
		}
		rf := &payoutv1.Refund{}
		refunded := k8s.Get(ctx, client.ObjectKeyFromObject(t), rf) == nil
		if refunded {
			rf.APIVersion, rf.Kind = payoutv1.GroupVersion.String(), "Refund"
			rec.Refund, err = json.Marshal(rf)
			Expect(err).NotTo(HaveOccurred())
		}
		stored, refused, err := store.PutTransfers(ctx, []archive.TransferRecord{rec})
		Expect(err).NotTo(HaveOccurred())
		Expect(refused).To(BeEmpty())
		Expect(stored).To(Equal([]string{t.Name}))
		for i := range deps.Items {
			Expect(k8s.Delete(ctx, &deps.Items[i])).To(Succeed())
		}
		if refunded {
			Expect(k8s.Delete(ctx, rf)).To(Succeed())
		}
		Expect(k8s.Delete(ctx, t)).To(Succeed())
	}

	period := []string{"ledger", "--since", "2031-01-01", "--until", "2031-02-01"}
	report := func(out string) ledger.Report {
		GinkgoHelper()
		var r ledger.Report
		Expect(json.Unmarshal([]byte(out), &r)).To(Succeed())
		return r
	}
	line := func(r ledger.Report) ledger.TokenLine {
		GinkgoHelper()
		for _, l := range r.Tokens {
			if l.Network == "base" && l.Token == "usdc" {
				return l
			}
		}
		Fail(fmt.Sprintf("no base usdc line in %+v", r.Tokens))
		return ledger.TokenLine{}
	}
	units := func(s string) *big.Int {
		GinkgoHelper()
		v, ok := new(big.Int).SetString(s, 10)
		Expect(ok).To(BeTrue(), "base units %q", s)
		return v
	}

	It("reads the same ledger after half the transfers of the period are archived", func() {
		var transfers []*payoutv1.Transfer
		for i := range 4 {
			units := int64(25_000_000)
			if i == 1 {
				units = 26_000_000 // overpaid by 1 USDC
			}
			transfers = append(transfers, paidTransfer(3+i, units, payoutv1.PayoutCompleted))
		}
		// the provider rejected one: its deposit was refunded
		rejected := paidTransfer(8, 25_000_000, payoutv1.PayoutRejected, func(st *payoutv1.TransferStatus, t *payoutv1.Transfer) {
			st.Phase = payoutv1.PhaseRefunded
			st.Failure = failure(payoutv1.FailurePayoutRejected, "payout rejected")
			st.Refund = &payoutv1.RefundFacts{TxHash: "0x" + randomHex(32), Amount: "25000000", To: wallet, ConfirmedAt: at(10)}
		})
		refundObject(rejected, 10)
		// one got a stray of 7 USDC from another wallet, refunded (its status records it)
		strayTx := "0x" + randomHex(32)
		withStray := paidTransfer(9, 25_000_000, payoutv1.PayoutCompleted, func(st *payoutv1.TransferStatus, t *payoutv1.Transfer) {
			ref := payoutv1.DepositRef{Network: payoutv1.NetworkBase, TxHash: strayTx}
			st.StrayDeposits = append(st.StrayDeposits, payoutv1.StrayDeposit{TxHash: strayTx, Token: payoutv1.TokenUSDC, Amount: "7000000",
				From: "0x3333333333333333333333333333333333333333", Reason: "sent from another wallet than the transfer's",
				Refund: &payoutv1.StrayRefundFacts{Name: payoutv1.StrayRefundName(t.Name, ref), Network: payoutv1.NetworkBase,
					Token: payoutv1.TokenUSDC, TxHash: "0x" + randomHex(32), ConfirmedAt: at(12)}})
		})
		depositObject(withStray, strayTx, 7_000_000, "0x3333333333333333333333333333333333333333", at(11))
		transfers = append(transfers, rejected, withStray)

		before := succeeds(append(period, "-o", "json")...)
		r := report(before)
		Expect(r.Balanced).To(BeTrue(), "failures: %+v", r.Failures)
		l := line(r)
		Expect(l.Received).To(Equal("158000000"), "six deposits of 25 USDC, 1 overpaid, a stray of 7")
		Expect(l.Credited).To(Equal("150000000"))
		Expect(l.Overpaid).To(Equal("1000000"))
		Expect(l.Stray).To(Equal("7000000"))
		Expect(l.Refunded).To(Equal("32000000"), "the rejected transfer's deposit and the stray")
		Expect(new(big.Int).Sub(units(l.Closing), units(l.Opening))).To(Equal(big.NewInt(158_000_000)), "nothing was swept")
		Expect(r.Fiat).To(ContainElement(ledger.FiatLine{Currency: "EUR", Payouts: 5, Rejected: 1, Quoted: "107.8", Paid: "107.8",
			Returned: "0", AmountUSD: "125", FeesUSD: "2.5"}))
		text := succeeds(period...)
		Expect(text).To(ContainSubstring("Ledger from 2031-01-01T00:00:00Z to 2031-02-01T00:00:00Z\n"))
		Expect(text).To(HaveSuffix("Balanced: every invariant holds.\n"))

		for _, t := range []*payoutv1.Transfer{transfers[0], transfers[2], transfers[4]} {
			archiveTransfer(t)
		}
		Expect(succeeds(append(period, "-o", "json")...)).To(Equal(before))

		// without the archive the ledger misses what left the API server
		Expect(os.Unsetenv(archive.DSNEnv)).To(Succeed())
		live := report(succeeds(append(period, "-o", "json")...))
		Expect(line(live).Received).To(Equal("83000000"))
	})

	It("exits 1 and names the invariant when the ledger does not balance", func() {
		// a transfer credited with a deposit no record shows arriving
		t := storeTransfer(account, payoutv1.TransferStatus{}, func(t *payoutv1.Transfer) {
			t.Spec.CustomerUUID = "0000aaaa-0000-4000-8000-" + randomHex(6)
		})
		when := metav1.NewTime(time.Date(2032, 3, 1, 0, 0, 0, 0, time.UTC))
		t.Status = payoutv1.TransferStatus{Phase: payoutv1.PhaseProcessing, Deposit: &payoutv1.DepositFacts{Network: payoutv1.NetworkBase,
			Token: payoutv1.TokenUSDC, TxHash: "0x" + randomHex(32), Amount: "25000000", SeenAt: when, ConfirmedAt: &when}}
		Expect(k8s.Status().Update(ctx, t)).To(Succeed())

		r := kubectlPayout("ledger", "--since", "2032-03-01", "--until", "2032-04-01", "-o", "csv")
		Expect(r.Code).To(Equal(1))
		Expect(r.Stderr).To(Equal("error: the ledger does not balance: 1 invariant failures (docs/operations/ledger.md)\n"))
		Expect(r.Stdout).To(ContainSubstring("\nfailure,,,,CreditedArrived,\"" + t.Name + ": transfer " + t.Name + " credits 25000000 base units of log "))
		Expect(strings.Count(r.Stdout, "\nfailure,")).To(Equal(1))
	})

	It("refuses a period that ends before it starts, and times it cannot read", func() {
		fails("error: --since 2031-02-01T00:00:00Z is not before --until 2031-01-01T00:00:00Z\nRun 'kubectl payout ledger --help' for usage.\n",
			"ledger", "--since", "2031-02-01", "--until", "2031-01-01")
		fails("error: --since \"yesterday\" is neither an RFC 3339 time nor a date (YYYY-MM-DD)\nRun 'kubectl payout ledger --help' for usage.\n",
			"ledger", "--since", "yesterday")
	})
})
