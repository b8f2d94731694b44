package main_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// userKubeconfig adds a user to the test API server (a client certificate; in no group but
// system:authenticated) and returns a kubeconfig of that user.
func userKubeconfig(name string) string {
	GinkgoHelper()
	u, err := env.AddUser(envtest.User{Name: name}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), name+".kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// grant binds a new ClusterRole of rules to user.
func grant(user string, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-" + user}, Rules: rules}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
}

// forbidden is the error line of a refusal for lack of rights.
func forbidden(user, verb, resource, where string) string {
	return "error: user \"" + user + "\" may not " + verb + " " + resource + where +
		": the cluster's RBAC forbids it; a cluster administrator can grant it by binding the ClusterRole payout-operator-role to user \"" + user + "\"\n"
}

var _ = Describe("missing permissions", func() {
	It("names the user, the verb and the resource the API server refused", func() {
		nobody := userKubeconfig("nobody")
		failsAs := func(kubeconfig, stderr string, args ...string) {
			GinkgoHelper()
			r := kubectlPayoutWith(kubeconfig, args...)
			Expect(r.Code).To(Equal(1))
			Expect(r.Stdout).To(BeEmpty())
			Expect(r.Stderr).To(Equal(stderr))
		}
		failsAs(nobody, forbidden("nobody", "list", "transfers.payout.stablepay.dev", " in all namespaces"), "get", "transfers")
		failsAs(nobody, forbidden("nobody", "create", "payoutaccounts.payout.stablepay.dev", ""), "account", "create", uniqueName("denied"))
		failsAs(nobody, forbidden("nobody", "get", "payoutaccounts.payout.stablepay.dev", ""), "get", "transfers", "--account", "acme")
		failsAs(nobody, forbidden("nobody", "list", "transfers.payout.stablepay.dev", " in all namespaces"), "describe", "transfer", "0000000000000000deadbeef")

		// a user who may look transfers up, but not request refunds or read events
		clerk := userKubeconfig("clerk")
		grant("clerk", rbacv1.PolicyRule{APIGroups: []string{payoutv1.GroupVersion.Group}, Resources: []string{"transfers"}, Verbs: []string{"list"}})
		account := newAccount("forbidden")
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed,
			Failure: failure(payoutv1.FailurePayoutRejected, "payout rejected"), Deposit: arrivedDeposit()})
		Eventually(func() int { return kubectlPayoutWith(clerk, "get", "transfers").Code }).Should(Equal(0))
		failsAs(clerk, forbidden("clerk", "list", "deposits.payout.stablepay.dev", " in namespace "+t.Namespace), "refund", t.Name)
		failsAs(clerk, forbidden("clerk", "list", "events.events.k8s.io", " in namespace "+t.Namespace), "describe", "transfer", t.Name)
		noRefund := &payoutv1.Refund{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), noRefund)).NotTo(Succeed())
	})
})
