package dashboard

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// withAPI gives the site's dashboard a REST facade accepting its browser tokens, as payoutd
// wires them, and makes the accounts' namespaces (the account controller's work, not running
// here).
func (s *site) withAPI() {
	GinkgoHelper()
	_, xpub, err := depositkey.Generate()
	Expect(err).NotTo(HaveOccurred())
	pub, err := depositkey.NewPublic(xpub)
	Expect(err).NotTo(HaveOccurred())
	chains, err := chainconfig.Parse([]byte("networks:\n  base:\n    rpc: [http://127.0.0.1:1]\n    tokens:\n      usdc:\n        contract: \"0x00000000000000000000000000000000000000c1\"\n        platformAddress: \"0x00000000000000000000000000000000000000f2\"\n"))
	Expect(err).NotTo(HaveOccurred())
	rates, err := pricing.NewSnapshot()
	Expect(err).NotTo(HaveOccurred())
	facade, err := apiserver.New(apiserver.Config{
		Client: cached, APIReader: env.Client, Informers: informers, Catalog: bankaccount.Default(),
		Sanctions: sanctions.NewScreener(sanctions.Embedded), KYC: kyc.Store{Reader: cached},
		WalletScreen: walletscreen.LocalList{Reader: cached}, Rates: rates,
		Deposits: depositkey.Addresses{Public: pub, Config: chains},
		Browser:  apiserver.BrowserCallers{Keys: s.keys, Issuer: s.url, Audience: audience},
		Log:      GinkgoLogr, Dashboard: s.dash,
	})
	Expect(err).NotTo(HaveOccurred())
	s.dash.SetAPI(facade.Handler())
	for _, name := range []string{s.user1, s.user2} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.AccountNamespace(name)}}
		Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, ns))).To(Succeed())
	}
}

// activeRecipients are the account's active recipients, read past the cache.
func activeRecipients(account string) []payoutv1.Recipient {
	GinkgoHelper()
	var list payoutv1.RecipientList
	Expect(env.Client.List(ctx, &list, client.InNamespace(payoutv1.AccountNamespace(account)))).To(Succeed())
	var out []payoutv1.Recipient
	for _, rc := range list.Items {
		if !rc.Spec.Deactivated {
			out = append(out, rc)
		}
	}
	return out
}

// labelOf finds a field's label text on a page ("State (required)").
func labelOf(body, id string) string {
	m := regexp.MustCompile(`<label for="` + id + `">([^<]*)</label>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

var ibanForm = func(csrf, holder, iban string) url.Values {
	return url.Values{"csrf": {csrf}, "action": {"save"}, "type": {"iban"}, "accountHolderName": {holder},
		"d.legalType": {"PRIVATE"}, "d.iban": {iban}}
}

var _ = Describe("the recipients pages", func() {
	It("creates an EUR IBAN and a USD ABA recipient through the forms account-requirements gives, edits and deletes them", func() {
		s := newSite()
		s.withAPI()
		b := newBrowser()
		csrf := csrfOf(s.signIn(b, "alice", "alice-pw"))
		catalog := bankaccount.Default()

		list := b.get(s.url + "recipients")
		Expect(list.status).To(Equal(200), list.body)
		Expect(list.body).To(ContainSubstring("No recipients yet."))
		Expect(strings.Count(list.body, "<option value=")).To(Equal(len(catalog.Currencies())), "every currency of the catalog is offered")
		Expect(list.header.Get("Content-Security-Policy")).NotTo(ContainSubstring("unsafe-inline"))

		By("EUR: the IBAN form, a bad IBAN refused with the API's message beside the field")
		eur := b.get(s.url + "recipient?currency=EUR")
		Expect(eur.status).To(Equal(200), eur.body)
		Expect(eur.body).To(ContainSubstring(`name="d.iban"`))
		Expect(eur.body).To(MatchRegexp(`<select id="d-legalType" name="d.legalType" data-refresh`), "legalType refreshes the form on change")
		Expect(eur.body).To(ContainSubstring(`value="email_recipient"`), "EUR's e-mail recipients too")
		Expect(eur.body).NotTo(ContainSubstring("<script>"))
		first := regexp.MustCompile(`<button type="submit" name="action" value="(\w+)"`).FindStringSubmatch(eur.body)
		Expect(first).NotTo(BeNil())
		Expect(first[1]).To(Equal("save"), "Enter in a field saves: the form's first submit button is a save")
		_, badErr := catalog.Validate("EUR", "iban", map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013001"})
		Expect(badErr).To(HaveOccurred())
		bad := b.do("POST", s.url+"recipient?currency=EUR", ibanForm(csrf, "Erika Mustermann", "DE89370400440532013001"))
		Expect(bad.status).To(Equal(http.StatusBadRequest), bad.body)
		Expect(bad.body).To(ContainSubstring(`<p class="error" id="d-iban-error">` + html.EscapeString(badErr.Error()) + `</p>`))
		Expect(bad.body).To(ContainSubstring(`value="DE89370400440532013001"`), "what was typed is kept")
		Expect(activeRecipients(s.user1)).To(BeEmpty())

		made := b.do("POST", s.url+"recipient?currency=EUR", ibanForm(csrf, "Erika Mustermann", "DE89370400440532013000"))
		Expect(made.status).To(Equal(http.StatusSeeOther), made.body)
		Expect(made.loc).To(Equal(s.url + "recipients"))
		Expect(activeRecipients(s.user1)).To(HaveLen(1))
		ibanRc := activeRecipients(s.user1)[0]
		Expect(ibanRc.Spec.Details.IBAN).To(Equal("DE89370400440532013000"))

		By("USD: the ABA form, refreshed when the country changes")
		base, err := catalog.Requirements("USD")
		Expect(err).NotTo(HaveOccurred())
		refreshed, err := catalog.Refresh("USD", "aba", map[string]any{"legalType": "PRIVATE", "address": map[string]any{"country": "US"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(stateRequired(base, "aba")).To(BeFalse())
		Expect(stateRequired(refreshed, "aba")).To(BeTrue(), "the catalog requires the state of a US address")
		usd := b.get(s.url + "recipient?currency=USD&type=aba")
		Expect(usd.status).To(Equal(200), usd.body)
		Expect(usd.body).To(MatchRegexp(`<select id="d-address-country" name="d.address.country" data-refresh`))
		Expect(labelOf(usd.body, "d-address-state")).To(Equal("State"))
		Expect(labelOf(usd.body, "d-abartn")).To(HaveSuffix("(required)"))
		aba := url.Values{"csrf": {csrf}, "action": {"refresh"}, "type": {"aba"}, "accountHolderName": {"Acme Widgets Inc"},
			"d.legalType": {"PRIVATE"}, "d.abartn": {"021000021"}, "d.accountNumber": {"123456789"}, "d.accountType": {"CHECKING"},
			"d.address.country": {"US"}, "d.address.city": {"New York"}, "d.address.postCode": {"10001"}, "d.address.firstLine": {"1 Main Street"}}
		again := b.do("POST", s.url+"recipient?currency=USD", aba)
		Expect(again.status).To(Equal(200), again.body)
		Expect(labelOf(again.body, "d-address-state")).To(Equal("State (required)"), "the refreshed requirements")
		Expect(again.body).To(ContainSubstring(`value="021000021"`), "the details so far are kept")
		Expect(activeRecipients(s.user1)).To(HaveLen(1), "a refresh creates nothing")
		aba.Set("action", "save")
		noState := b.do("POST", s.url+"recipient?currency=USD", aba)
		Expect(noState.status).To(Equal(http.StatusBadRequest), noState.body)
		Expect(noState.body).To(ContainSubstring(`id="d-address-state-error"`), "the API's message beside the state")
		aba.Set("d.address.state", "NY")
		made = b.do("POST", s.url+"recipient?currency=USD", aba)
		Expect(made.status).To(Equal(http.StatusSeeOther), made.body)
		Expect(activeRecipients(s.user1)).To(HaveLen(2))

		Eventually(func() string { return b.get(s.url + "recipients").body }).Should(And(ContainSubstring("Erika Mustermann"), ContainSubstring("Acme Widgets Inc")))

		By("editing the EUR recipient: its form filled from GET recipients/{id}, saved with PATCH")
		id := strconv.FormatInt(ibanRc.Spec.ID, 10)
		var edit reply
		Eventually(func() int { edit = b.get(s.url + "recipient?id=" + id); return edit.status }).Should(Equal(200))
		Expect(edit.body).To(ContainSubstring(`value="Erika Mustermann"`))
		Expect(edit.body).To(ContainSubstring(`value="DE89370400440532013000"`))
		saved := b.do("POST", s.url+"recipient?id="+id, ibanForm(csrf, "Erika Musterfrau", "DE89370400440532013000"))
		Expect(saved.status).To(Equal(http.StatusSeeOther), saved.body)
		var edited *payoutv1.Recipient
		for _, rc := range activeRecipients(s.user1) {
			if rc.Spec.AccountHolderName == "Erika Musterfrau" {
				edited = &rc
			}
			Expect(rc.Spec.AccountHolderName).NotTo(Equal("Erika Mustermann"), "the old one is replaced")
		}
		Expect(edited).NotTo(BeNil())

		By("deleting it")
		newID := strconv.FormatInt(edited.Spec.ID, 10)
		Eventually(func() int { return b.get(s.url + "recipient?id=" + newID).status }).Should(Equal(200))
		gone := b.do("POST", s.url+"recipient-delete?id="+newID, url.Values{"csrf": {csrf}})
		Expect(gone.status).To(Equal(http.StatusSeeOther), gone.body)
		Expect(activeRecipients(s.user1)).To(HaveLen(1))
		Expect(activeRecipients(s.user1)[0].Spec.AccountHolderName).To(Equal("Acme Widgets Inc"))
		Eventually(func() string { return b.get(s.url + "recipients").body }).ShouldNot(ContainSubstring("Erika"))
	})

	It("refuses creates, edits and deletes without the session's CSRF token", func() {
		s := newSite()
		s.withAPI()
		b := newBrowser()
		csrf := csrfOf(s.signIn(b, "alice", "alice-pw"))
		for _, token := range []string{"", "not-the-token"} {
			r := b.do("POST", s.url+"recipient?currency=EUR", ibanForm(token, "Erika Mustermann", "DE89370400440532013000"))
			Expect(r.status).To(Equal(http.StatusForbidden), r.body)
		}
		Expect(activeRecipients(s.user1)).To(BeEmpty())
		Expect(b.do("POST", s.url+"recipient?currency=EUR", ibanForm(csrf, "Erika Mustermann", "DE89370400440532013000")).status).To(Equal(http.StatusSeeOther))
		rc := activeRecipients(s.user1)
		Expect(rc).To(HaveLen(1))
		id := strconv.FormatInt(rc[0].Spec.ID, 10)
		Expect(b.do("POST", s.url+"recipient?id="+id, ibanForm("", "Someone Else", "DE89370400440532013000")).status).To(Equal(http.StatusForbidden))
		Expect(b.do("POST", s.url+"recipient-delete?id="+id, url.Values{}).status).To(Equal(http.StatusForbidden))
		Expect(activeRecipients(s.user1)).To(HaveLen(1))
		Expect(activeRecipients(s.user1)[0].Spec.AccountHolderName).To(Equal("Erika Mustermann"))
	})

	It("keeps user 2 away from user 1's recipients: the API's refusal on every page", func() {
		s := newSite()
		s.withAPI()
		alice, bob := newBrowser(), newBrowser()
		ac := csrfOf(s.signIn(alice, "alice", "alice-pw"))
		Expect(alice.do("POST", s.url+"recipient?currency=EUR", ibanForm(ac, "Erika Mustermann", "DE89370400440532013000")).status).To(Equal(http.StatusSeeOther))
		id := strconv.FormatInt(activeRecipients(s.user1)[0].Spec.ID, 10)
		bc := csrfOf(s.signIn(bob, "bob", "bob-pw"))
		Consistently(func() string { return bob.get(s.url + "recipients").body }, "500ms", "100ms").ShouldNot(ContainSubstring("Erika"))
		Expect(bob.get(s.url + "recipient?id=" + id).status).To(Equal(http.StatusForbidden))
		Expect(bob.do("POST", s.url+"recipient?id="+id, ibanForm(bc, "Mallory", "DE89370400440532013000")).status).To(Equal(http.StatusForbidden))
		Expect(bob.do("POST", s.url+"recipient-delete?id="+id, url.Values{"csrf": {bc}}).status).To(Equal(http.StatusForbidden))
		Expect(activeRecipients(s.user1)).To(HaveLen(1))
		Expect(activeRecipients(s.user1)[0].Spec.AccountHolderName).To(Equal("Erika Mustermann"))
	})
})

// stateRequired says whether typ's address.state is required in types.
func stateRequired(types []bankaccount.AccountType, typ string) bool {
	for _, t := range types {
		if t.Type != typ {
			continue
		}
		for _, g := range t.Fields {
			for _, f := range g.Group {
				if f.Key == "address.state" {
					return f.Required
				}
			}
		}
	}
	return false
}
