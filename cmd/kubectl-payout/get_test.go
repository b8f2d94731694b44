package main_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var _ = Describe("get transfers", func() {
	It("lists one account's transfers as a table", func() {
		succeeds("account", "create", "get-table")
		t := storeTransfer("get-table", payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted}, named("00000000000000000000a001"))
		clock.SetTime(t.CreationTimestamp.Add(5 * time.Minute))

		Expect(succeeds("get", "transfers", "--account", "get-table")).To(Equal(
			"ID                         ACCOUNT     STATUS      AMOUNT   CURRENCY   TOKEN   NETWORK   AGE\n" +
				"00000000000000000000a001   get-table   completed   25.00    EUR        usdc    base      5m\n"))
	})

	It("lists every account's transfers without --account, oldest first", func() {
		first, second := newAccount("get"), newAccount("get")
		// b sorts first by name, so only its later creation second can put it last.
		a := storeTransfer(first, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed}, named("00000000000000000000b002"))
		time.Sleep(time.Until(a.CreationTimestamp.Add(time.Second + 50*time.Millisecond)))
		b := storeTransfer(second, payoutv1.TransferStatus{}, named("00000000000000000000b001"),
			func(t *payoutv1.Transfer) { t.Spec.Quote.TargetCurrency = "GBP" })
		Expect(b.CreationTimestamp.After(a.CreationTimestamp.Time)).To(BeTrue())

		out := succeeds("get", "transfers")
		lines := strings.Split(out, "\n")
		Expect(lines[0]).To(MatchRegexp(`^ID +ACCOUNT +STATUS +AMOUNT +CURRENCY +TOKEN +NETWORK +AGE$`))
		Expect(out).To(MatchRegexp(`(?m)^` + a.Name + ` +` + first + ` +failed +25\.00 +EUR +usdc +base +\S+$`))
		Expect(out).To(MatchRegexp(`(?m)^` + b.Name + ` +` + second + ` +<none> +25\.00 +GBP +usdc +base +\S+$`))
		Expect(strings.Index(out, a.Name)).To(BeNumerically("<", strings.Index(out, b.Name)))
	})

	It("says so when an account has no transfers", func() {
		account := newAccount("get")
		r := kubectlPayout("get", "transfers", "--account", account)
		Expect(r.Code).To(Equal(0))
		Expect(r.Stdout).To(BeEmpty())
		Expect(r.Stderr).To(Equal("No transfers found\n"))
	})

	It("refuses an account that does not exist", func() {
		account := uniqueName("nobody")
		fails(`error: account "`+account+`" does not exist`+"\n", "get", "transfers", "--account", account)
	})
})
