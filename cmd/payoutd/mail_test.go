package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
)

var _ = Describe("mail abuse (issue 25 item 11)", func() {
	It("mails no failure for a transfer cancelled at once before any deposit, and caps the mail to one address", func() {
		acct := newAccount(startInProcess(env.Config, "--smtp-max-per-address", "2"))
		stored := func(id string) *payoutv1.Transfer {
			GinkgoHelper()
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: id}, t)).To(Succeed())
			return t
		}
		mailsTo := func(addr string) int {
			GinkgoHelper()
			msgs, err := smtpsink.ReadDir(filepath.Join(workdir, "mail"))
			Expect(err).NotTo(HaveOccurred())
			n := 0
			for _, m := range msgs {
				for _, to := range m.To() {
					if strings.EqualFold(to, addr) {
						n++
					}
				}
			}
			return n
		}

		// create, then delete the recipient: the transfer fails at once, and mails no one
		quietTo := "quiet+" + uuid.NewString()[:8] + "@example.com"
		rid := acct.recipient("Quiet Holder")
		body := transferBody(acct.quote("12.00"), "12.00", rid, false)
		body["customer_email"] = quietTo
		quiet := acct.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)["id"].(string)
		acct.must(200, "DELETE", fmt.Sprintf("/api/payouts/recipients/%d", rid), nil)
		Eventually(func() string { s, _ := acct.status(quiet); return s }).Should(Equal("failed"))
		// the failure and its mail are decided in one write: none was
		Expect(stored(quiet).Status.Notifications).To(BeEmpty())

		// three failures that saw their deposit, to one address: two mails, the third refused
		loudTo := "loud+" + uuid.NewString()[:8] + "@example.com"
		var loud []string
		for range 3 {
			rid := acct.recipient("Simulated Failure")
			body := transferBody(acct.quote("11.00"), "11.00", rid, false)
			body["customer_email"] = loudTo
			tr := acct.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)
			deposit(tr["deposit_address"].(string), "11.00")
			loud = append(loud, tr["id"].(string))
		}
		states := func() []payoutv1.NotificationState {
			var out []payoutv1.NotificationState
			for _, id := range loud {
				for _, n := range stored(id).Status.Notifications {
					out = append(out, n.State)
				}
			}
			return out
		}
		Eventually(states).WithTimeout(120 * time.Second).Should(ConsistOf(payoutv1.NotificationSent, payoutv1.NotificationSent, payoutv1.NotificationRefused))
		Expect(mailsTo(loudTo)).To(Equal(2))
		// mailed in order of their decisions: the quiet failure, decided first, never was
		Expect(mailsTo(quietTo)).To(BeZero())
	})
})
