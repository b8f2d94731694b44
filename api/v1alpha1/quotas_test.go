package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("account quotas", func() {
	It("fills in the defaults of Quotas.Limits for an account stored without quotas", func() {
		// an account written before quotas existed, as raw JSON without the field
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": payoutv1.GroupVersion.String(), "kind": "PayoutAccount",
			"metadata": map[string]any{"name": "quota-defaults"},
			"spec":     map[string]any{"email": "ops@example.com"},
		}}
		Expect(env.Client.Create(ctx, u)).To(Succeed())
		got := &payoutv1.PayoutAccount{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "quota-defaults"}, got)).To(Succeed())
		Expect(got.Spec.Quotas).To(Equal(payoutv1.Quotas{}.Limits()))
		Expect(got.Spec.Quotas).To(Equal(payoutv1.Quotas{MaxOpenV1Transfers: payoutv1.DefaultMaxOpenV1Transfers,
			MaxOpenV2Transfers: payoutv1.DefaultMaxOpenV2Transfers, MaxActiveRecipients: payoutv1.DefaultMaxActiveRecipients,
			MaxClaims: payoutv1.DefaultMaxClaims}))
	})

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
