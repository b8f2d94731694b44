package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The defaults of an account stored without quotas are checked by "checks account settings".
var _ = Describe("account quotas", func() {
	It("refuses claims below the open transfers and active recipients the other caps allow, and caps out of bounds", func() {
		a := testgen.Account("quota-claims", func(a *payoutv1.PayoutAccount) {
			a.Spec.Quotas = payoutv1.Quotas{MaxOpenV1Transfers: 10, MaxOpenV2Transfers: 10, MaxActiveRecipients: 10, MaxClaims: 29}
		})
		expectInvalid(env.Client.Create(ctx, a), "maxClaims must be at least maxOpenV1Transfers + maxOpenV2Transfers + maxActiveRecipients")
		a = testgen.Account("quota-bounds", func(a *payoutv1.PayoutAccount) { a.Spec.Quotas.MaxOpenV2Transfers = 100001 })
		expectInvalid(env.Client.Create(ctx, a), "spec.quotas.maxOpenV2Transfers")
		a = testgen.Account("quota-ok", func(a *payoutv1.PayoutAccount) {
			a.Spec.Quotas = payoutv1.Quotas{MaxOpenV1Transfers: 10, MaxOpenV2Transfers: 10, MaxActiveRecipients: 10, MaxClaims: 30}
		})
		Expect(env.Client.Create(ctx, a)).To(Succeed())
	})
})
