package main_test

import (
	"encoding/json"
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
			"ID                         STATUS      AMOUNT   CURRENCY   NETWORK   RECIPIENT   AGE\n" +
				"00000000000000000000a001   completed   25.00    EUR        base      123456789   5m\n"))
		Expect(succeeds("get", "transfers", "--account", "get-table", "-o", "wide")).To(Equal(
			"ID                         STATUS      AMOUNT   CURRENCY   NETWORK   RECIPIENT   AGE   METHOD   TOKEN   ACCOUNT     ERROR\n" +
				"00000000000000000000a001   completed   25.00    EUR        base      123456789   5m    v1       usdc    get-table   <none>\n"))
	})

	It("prints the transfers as a List with -o json and -o yaml", func() {
		account := newAccount("get-json")
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed,
			Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected")})

		var list struct {
			APIVersion, Kind string
			Items            []payoutv1.Transfer
		}
		Expect(json.Unmarshal([]byte(succeeds("get", "transfers", "--account", account, "-o", "json")), &list)).To(Succeed())
		Expect(list.APIVersion).To(Equal("v1"))
		Expect(list.Kind).To(Equal("List"))
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].Kind).To(Equal("Transfer"))
		Expect(list.Items[0].APIVersion).To(Equal("payout.stablepay.dev/v1alpha1"))
		Expect(list.Items[0].Name).To(Equal(t.Name))
		Expect(list.Items[0].Status.Failure.Reason).To(Equal(payoutv1.FailurePayoutRejected))
		Expect(list.Items[0].ManagedFields).To(BeEmpty())

		out := succeeds("get", "transfers", "--account", account, "-o", "yaml")
		Expect(out).To(HavePrefix("apiVersion: v1\nitems:\n- apiVersion: payout.stablepay.dev/v1alpha1\n  kind: Transfer\n"))
		Expect(out).To(ContainSubstring("\n    name: " + t.Name + "\n"))
		Expect(out).To(HaveSuffix("kind: List\nmetadata:\n  resourceVersion: \"\"\n"))

		// an empty list is still a List, on stdout
		empty := newAccount("get-json")
		r := kubectlPayout("get", "transfers", "--account", empty, "-o", "json")
		Expect(r.Code).To(Equal(0))
		Expect(r.Stderr).To(BeEmpty())
		Expect(r.Stdout).To(MatchJSON(`{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}`))
	})

	It("refuses an output format it does not print", func() {
		fails("error: --output \"xml\" is not one of wide, json, yaml\nRun 'kubectl payout get transfers --help' for usage.\n",
			"get", "transfers", "-o", "xml")
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
		Expect(lines[0]).To(MatchRegexp(`^ID +STATUS +AMOUNT +CURRENCY +NETWORK +RECIPIENT +AGE$`))
		Expect(out).To(MatchRegexp(`(?m)^` + a.Name + ` +failed +25\.00 +EUR +base +123456789 +\S+$`))
		Expect(out).To(MatchRegexp(`(?m)^`+b.Name+` +ready_to_process +25\.00 +GBP +base +123456789 +\S+$`), "an unwritten status reads as the schema's default")
		wide := succeeds("get", "transfers", "-o", "wide")
		Expect(wide).To(MatchRegexp(`(?m)^` + a.Name + ` +failed +25\.00 +EUR +base +123456789 +\S+ +v1 +usdc +` + first + ` +<none>$`))
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
