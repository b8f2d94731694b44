package main

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
)

var _ = Describe("fresh compliance data (issue 25 item 1)", func() {
	It("fails closed past --sanctions-max-age and quotes from --rates-url", func() {
		// The suite's refdata serves the embedded release, published 2023-12-28: with the default
		// age limit of 7 days, screening must refuse to answer rather than clear anyone.
		acct := newAccount(startInProcess(env.Config, "--sanctions-max-age", "168h"))
		acct.must(503, "POST", "/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "email_recipient",
			"accountHolderName": "Anyone At All", "details": map[string]any{"email": "payee@example.com"}})
		// quotes come from --rates-url, polled before the facade opened
		acct.quote("10.00")
	})

	It("screens against a release published since, fetched from --sanctions-url by the refresher", func() {
		acct := newAccount(startInProcess(env.Config, "--sanctions-max-age", "0", "--sanctions-refresh-interval", "1m"))
		const listed = "Lemberg Orbital Shipping"
		acct.recipient(listed)
		refs.AddSanctionsEntry(sanctions.EmbeddedPublished.AddDate(0, 0, 7), 99999101, "LEMBERG ORBITAL SHIPPING", "Odesa 65000", "Ukraine")
		DeferCleanup(func() { refs.Reset() })
		Eventually(func() int {
			status, _ := acct.call("POST", "/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "iban", "accountHolderName": listed,
				"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}})
			return status
		}).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Equal(403))
	})
})
