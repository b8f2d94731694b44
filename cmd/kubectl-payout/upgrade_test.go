package main_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testenv"
)

// markNewer writes testenv.NewerField into the spec of obj (of kind), again until the API server
// serves the newer schema.
func markNewer(kind string, obj client.Object) {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(payoutv1.GroupVersion.WithKind(kind))
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"`+testenv.NewerField+`":"kept"}}`))
	Eventually(func() string {
		Expect(k8s.Patch(ctx, u, patch)).To(Succeed())
		v, _, _ := unstructured.NestedString(u.Object, "spec", testenv.NewerField)
		return v
	}).Should(Equal("kept"), kind)
}

// newerKept reads testenv.NewerField from the spec of obj (of kind).
func newerKept(kind string, obj client.Object) string {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(payoutv1.GroupVersion.WithKind(kind))
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
	v, _, _ := unstructured.NestedString(u.Object, "spec", testenv.NewerField)
	return v
}

var _ = Describe("the plugin against a newer release's objects", Serial, func() {
	It("keeps a spec field it does not know of a key it revokes, a wallet it verifies and one it blocks", func() {
		// the CRDs of a newer release stay after a rollback to this one (docs/operations/upgrade.md)
		_, restore, err := env.WithNewerField(ctx, "spec")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(restore)

		acme := newAccount("newer")
		_, keyID := issueKey(acme)
		key := &payoutv1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: keyID}}
		known := &payoutv1.Wallet{
			ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.AccountNamespace(acme), Name: payoutv1.WalletName(lowerCase)},
			Spec:       payoutv1.WalletSpec{Address: lowerCase},
		}
		Expect(k8s.Create(ctx, known)).To(Succeed())
		blocked := "0x00000000000000000000000000000000000b10c4"
		succeeds("wallet", "block", blocked, "--reason", "first")
		block := &payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(blocked)}}
		for kind, obj := range map[string]client.Object{"APIKey": key, "Wallet": known, "BlockedWallet": block} {
			markNewer(kind, obj)
		}

		succeeds("apikey", "revoke", keyID)
		succeeds("wallet", "verify", checksummed, "--account", acme)
		succeeds("wallet", "block", blocked, "--reason", "second")
		Expect(getKey(keyID).Spec.Revoked).To(BeTrue())
		Expect(walletsOf(acme)).To(ConsistOf(HaveField("Spec.KYCVerified", true)))
		Expect(getBlocked(blocked).Spec.Reason).To(Equal("second"))
		for kind, obj := range map[string]client.Object{"APIKey": key, "Wallet": known, "BlockedWallet": block} {
			Expect(newerKept(kind, obj)).To(Equal("kept"), "the %s's newer field", kind)
		}
	})
})
