package dashboard

import (
	"net/http"
	"net/url"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
)

var _ = Describe("the developer area's last used", func() {
	It("shows when the facade last recorded the key's use, and never before it did", func() {
		s := newSite()
		b := newBrowser()
		keys := s.signIn(b, "alice", "alice-pw")
		created := b.do("POST", s.url+"keys", url.Values{"csrf": {csrfOf(keys)}})
		Expect(created.status).To(Equal(http.StatusCreated), created.body)
		id, ok := apikey.ParseKey(fullKey.FindString(created.body))
		Expect(ok).To(BeTrue())
		row := func() string {
			return regexp.MustCompile(`(?s)<code>` + id + `</code>.*?</tr>`).FindString(b.get(s.url + "keys").body)
		}
		Eventually(row).Should(ContainSubstring("<td>never</td>"))

		// what the facade's last-use recorder (internal/keyuse) writes
		k := &payoutv1.APIKey{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: id}, k)).To(Succeed())
		patch := client.MergeFrom(k.DeepCopy())
		k.Annotations = map[string]string{payoutv1.APIKeyLastUsedAnnotation: "2026-11-26T07:45:09Z"}
		Expect(env.Client.Patch(ctx, k, patch)).To(Succeed())
		Eventually(row).Should(ContainSubstring("<td>2026-11-26 07:45 UTC</td>"))
	})
})
