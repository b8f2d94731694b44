package main_test

import (
	"encoding/json"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
)

var fullKeyLine = regexp.MustCompile(`^svc_live_([0-9a-f]{16})_([0-9a-f]{64})\n$`)

func getKey(keyID string) *payoutv1.APIKey {
	GinkgoHelper()
	k := &payoutv1.APIKey{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: keyID}, k)).To(Succeed())
	return k
}

// issueKey creates a key through the plugin and returns the full key and its id.
func issueKey(account string) (full, keyID string) {
	GinkgoHelper()
	out := succeeds("apikey", "create", "--account", account)
	m := fullKeyLine.FindStringSubmatch(out)
	Expect(m).NotTo(BeNil(), "stdout %q is not one key line", out)
	return strings.TrimSuffix(out, "\n"), m[1]
}

var _ = Describe("apikey create", func() {
	It("prints the key alone on stdout and stores only its hash", func() {
		account := newAccount("keys")
		r := kubectlPayout("apikey", "create", "--account", account)
		Expect(r.Code).To(Equal(0), r.Stderr)
		m := fullKeyLine.FindStringSubmatch(r.Stdout)
		Expect(m).NotTo(BeNil(), "stdout %q is not exactly one svc_live_<16 hex>_<64 hex> line", r.Stdout)
		full, keyID, secret := strings.TrimSuffix(r.Stdout, "\n"), m[1], m[2]
		Expect(r.Stderr).To(Equal("Created API key " + keyID + ` for account "` + account + `"; store it now, it is not shown again` + "\n"))

		k := getKey(keyID)
		Expect(k.Spec.Account).To(Equal(account))
		Expect(k.Spec.SecretHash).To(Equal(apikey.Hash(full)))
		Expect(k.Spec.Revoked).To(BeFalse())
		// bound to this account, not to its name, and deleted with it by the garbage collector
		acct := &payoutv1.PayoutAccount{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: account}, acct)).To(Succeed())
		Expect(k.Spec.AccountUID).To(Equal(string(acct.UID)))
		Expect(k.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
			APIVersion: payoutv1.GroupVersion.String(), Kind: "PayoutAccount", Name: account, UID: acct.UID,
		}))

		// The whole stored object, fields this client does not know included.
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(payoutv1.GroupVersion.WithKind("APIKey"))
		Expect(k8s.Get(ctx, client.ObjectKey{Name: keyID}, stored)).To(Succeed())
		raw, err := json.Marshal(stored.Object)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(ContainSubstring(keyID))
		Expect(string(raw)).NotTo(ContainSubstring(secret))
	})

	It("issues a different key each time", func() {
		account := newAccount("keys")
		first, firstID := issueKey(account)
		second, secondID := issueKey(account)
		Expect(second).NotTo(Equal(first))
		Expect(secondID).NotTo(Equal(firstID))
	})

	It("refuses an account that does not exist and stores nothing", func() {
		account := uniqueName("nobody")
		fails(`error: account "`+account+`" does not exist`+"\n", "apikey", "create", "--account", account)
		keys := &payoutv1.APIKeyList{}
		Expect(k8s.List(ctx, keys)).To(Succeed())
		for _, k := range keys.Items {
			Expect(k.Spec.Account).NotTo(Equal(account))
		}
	})

	It("needs --account", func() {
		fails("error: --account is required: the account the key authenticates as\nRun 'kubectl payout apikey create --help' for usage.\n",
			"apikey", "create")
	})
})

var _ = Describe("apikey revoke", func() {
	It("sets the revoked flag, keeps the record, and changes nothing the second time", func() {
		_, keyID := issueKey(newAccount("revoke"))

		Expect(succeeds("apikey", "revoke", keyID)).To(Equal("API key " + keyID + " is revoked\n"))
		revoked := getKey(keyID)
		Expect(revoked.Spec.Revoked).To(BeTrue())

		Expect(succeeds("apikey", "revoke", keyID)).To(Equal("API key " + keyID + " is revoked\n"))
		Expect(getKey(keyID).ResourceVersion).To(Equal(revoked.ResourceVersion))
	})

	It("refuses a key that does not exist", func() {
		fails("error: API key 00000000deadbeef does not exist\n", "apikey", "revoke", "00000000deadbeef")
	})

	It("refuses a full key without echoing its secret", func() {
		full, keyID := issueKey(newAccount("revoke"))
		r := kubectlPayout("apikey", "revoke", full)
		Expect(r.Code).To(Equal(1))
		Expect(r.Stderr).To(Equal(`error: invalid API key id "svc_live_` + keyID + `_…": that is a full key; pass only its key id ` +
			keyID + " (and treat the key as exposed)\n"))
		Expect(getKey(keyID).Spec.Revoked).To(BeFalse())
	})
})
