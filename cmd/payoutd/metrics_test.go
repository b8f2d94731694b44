package main

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/test/metricstest"
)

var _ = Describe("the metrics endpoint", func() {
	It("shows a completed transfer in the transfer, provider, chain and facade metrics", func() {
		metricsAddr := freeAddr()
		// plain HTTP: what is shown is tested here; who may see it, in config (TestDeployOnEmptyCluster)
		acct := newAccount(startInProcess(env.Config, "--metrics-bind-address", metricsAddr, "--metrics-secure=false"))
		scrape := func() metricstest.Samples {
			GinkgoHelper()
			s, err := metricstest.Scrape(context.Background(), "http://"+metricsAddr+"/metrics")
			Expect(err).NotTo(HaveOccurred())
			return s
		}
		rid := acct.recipient("Metered Payee")
		before := scrape()
		tr := acct.must(200, "POST", "/api/payouts/transfer", transferBody(acct.quote("19.99"), "19.99", rid, false))["transfer"].(map[string]any)
		deposit(tr["deposit_address"].(string), "19.99")
		Eventually(func() string { s, _ := acct.status(tr["id"].(string)); return s }).Should(Equal("completed"))

		var after metricstest.Samples
		Eventually(func() float64 {
			after = scrape()
			return after.Delta(before, "payout_transfer_transitions_total", "to", "completed")
		}).Should(BeNumerically(">=", 1))
		Expect(after.Delta(before, "payout_transfer_transitions_total", "to", "processing")).To(BeNumerically(">=", 1))
		Expect(after.Sum("payout_transfers", "status", "completed")).To(BeNumerically(">=", 1))
		Expect(after.Delta(before, "payout_transfer_status_duration_seconds_count", "status", "processing")).To(BeNumerically(">=", 1))
		Expect(after.Delta(before, "payout_provider_requests_total")).To(BeNumerically(">=", 2), "find and create at least")
		Expect(after.Delta(before, "payout_chain_deposits_total", "network", "base")).To(BeNumerically(">=", 1))
		Expect(after.Sum("payout_chain_head_block", "network", "base")).To(BeNumerically(">", 0))
		Expect(after.Delta(before, "payout_facade_requests_total", "route", "/api/payouts/transfer", "code", "200")).To(BeNumerically(">=", 1))
		Expect(after.Delta(before, "payout_facade_requests_total", "route", "/api/payouts/transfer/{transfer_id}")).To(BeNumerically(">=", 1))
	})
})
