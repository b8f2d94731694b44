package dashboard

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/skip2/go-qrcode"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

const senderWallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"

// withTransfers is withAPI with USDC on Base taking deposits (the option's controller's word,
// written here as it would).
func (s *site) withTransfers() {
	GinkgoHelper()
	s.withAPI()
	opt := &payoutv1.DepositOption{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.DepositOptionName(payoutv1.TokenUSDC, payoutv1.NetworkBase)},
		Spec: payoutv1.DepositOptionSpec{Token: payoutv1.TokenUSDC, Network: payoutv1.NetworkBase, Enabled: true}}
	if err := env.Client.Create(ctx, opt); err != nil {
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(opt), opt)).To(Succeed())
	}
	opt.Status.Available = true
	Expect(env.Client.Status().Update(ctx, opt)).To(Succeed())
	// and the watcher of base has read a head (a v2 transfer records it)
	cur := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "base"}, Spec: payoutv1.ChainCursorSpec{Network: payoutv1.NetworkBase}}
	if err := env.Client.Create(ctx, cur); err != nil {
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cur), cur)).To(Succeed())
	}
	beat := metav1.Now()
	cur.Status = payoutv1.ChainCursorStatus{Synced: true, HeartbeatAt: &beat, Head: 100}
	Expect(env.Client.Status().Update(ctx, cur)).To(Succeed())
	Eventually(func() int64 {
		c := &payoutv1.ChainCursor{}
		_ = cached.Get(ctx, client.ObjectKeyFromObject(cur), c)
		return c.Status.Head
	}).Should(BeNumerically(">=", 100))
	Eventually(func() bool {
		o := &payoutv1.DepositOption{}
		return cached.Get(ctx, client.ObjectKeyFromObject(opt), o) == nil && o.Status.Available
	}).Should(BeTrue())
}

// eurRecipient creates an EUR IBAN recipient through the recipients page and returns its id
// once the API's cache lists it.
func (s *site) eurRecipient(b *browser, csrf, holder string) int64 {
	GinkgoHelper()
	made := b.do("POST", s.url+"recipient?currency=EUR", ibanForm(csrf, holder, "DE89370400440532013000"))
	Expect(made.status).To(Equal(http.StatusSeeOther), made.body)
	var id int64
	for _, rc := range activeRecipients(s.accountOf(b)) {
		if rc.Spec.AccountHolderName == holder {
			id = rc.Spec.ID
		}
	}
	Expect(id).NotTo(BeZero())
	Eventually(func() string { return b.get(s.url + "transfer-new").body }).Should(ContainSubstring(`<option value="` + strconv.FormatInt(id, 10) + `"`))
	return id
}

// accountOf is the account the browser signed in to, read off its developer area.
func (s *site) accountOf(b *browser) string {
	GinkgoHelper()
	m := regexp.MustCompile(`Account <strong>([^<]+)</strong>`).FindStringSubmatch(b.get(s.url + "keys").body)
	Expect(m).NotTo(BeNil())
	return m[1]
}

// apiQuote is the facade's quote for user's browser caller, asked directly (not through a page).
func (s *site) apiQuote(account, query string) map[string]any {
	GinkgoHelper()
	acct := s.accounts[account]
	tok, err := s.keys.Issue(s.url, audience, "test", acct.Name, string(acct.UID), time.Now(), time.Minute)
	Expect(err).NotTo(HaveOccurred())
	req := httptest.NewRequestWithContext(ctx, "GET", "/api/payouts/quote?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	s.dash.api.ServeHTTP(rec, req)
	Expect(rec.Code).To(Equal(200), rec.Body.String())
	var q map[string]any
	d := json.NewDecoder(rec.Body)
	d.UseNumber()
	Expect(d.Decode(&q)).To(Succeed())
	return q
}

func transferValues(csrf, action string, recipient int64, amount string) url.Values {
	return url.Values{"csrf": {csrf}, "action": {action}, "recipientId": {strconv.FormatInt(recipient, 10)}, "amount": {amount},
		"option": {"usdc/base"}, "method": {"v1"}, "customer_email": {"payer@example.com"}, "wallet_address": {senderWallet}}
}

// createTransfer creates a v1 transfer through the form and returns its id.
func (s *site) createTransfer(b *browser, csrf string, recipient int64, amount string) string {
	GinkgoHelper()
	made := b.do("POST", s.url+"transfer-new", transferValues(csrf, "create", recipient, amount))
	Expect(made.status).To(Equal(http.StatusSeeOther), made.body)
	u, err := url.Parse(made.loc)
	Expect(err).NotTo(HaveOccurred())
	Expect(u.Path).To(Equal("/dashboard/transfer"))
	return u.Query().Get("id")
}

type statusJSON struct {
	Status, StatusLabel, Error, RefundTxHash string
	Ended                                    bool
	History                                  []struct{ Status, Label, At, Message string }
}

func (b *browser) status(u string) (int, statusJSON) {
	GinkgoHelper()
	r := b.get(u)
	var st statusJSON
	if r.status == 200 {
		Expect(r.header.Get("Content-Type")).To(HavePrefix("application/json"))
		Expect(json.Unmarshal([]byte(r.body), &st)).To(Succeed(), r.body)
	}
	return r.status, st
}

func transferOf(account, id string) *payoutv1.Transfer {
	GinkgoHelper()
	t := &payoutv1.Transfer{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(account), Name: id}, t)).To(Succeed())
	return t
}

func accountTransfers(account string) []payoutv1.Transfer {
	GinkgoHelper()
	var list payoutv1.TransferList
	Expect(env.Client.List(ctx, &list, client.InNamespace(payoutv1.AccountNamespace(account)))).To(Succeed())
	return list.Items
}

var _ = Describe("the quote and transfer pages", func() {
	It("shows the API's quote with its fees, creates a v1 transfer through the API's create, and shows its address, amount and QR code", func() {
		s := newSite()
		s.withTransfers()
		b := newBrowser()
		csrf := csrfOf(s.signIn(b, "alice", "alice-pw"))
		rid := s.eurRecipient(b, csrf, "Erika Mustermann")

		form := b.get(s.url + "transfer-new")
		Expect(form.status).To(Equal(200), form.body)
		Expect(form.body).To(ContainSubstring(`<option value="usdc/base">USDC on Base</option>`), "the deposit options of GET deposit-options")
		Expect(form.body).NotTo(ContainSubstring(`id="quote"`))
		for _, id := range []string{"recipientId", "amount", "option", "customer_email", "wallet_address"} {
			Expect(form.body).To(ContainSubstring(`<label for="`+id+`">`), "a label for #%s", id)
		}
		first := regexp.MustCompile(`<button type="submit" name="action" value="(\w+)"`).FindStringSubmatch(form.body)
		Expect(first).To(Equal([]string{first[0], "quote"}), "Enter in a field asks for a quote, it creates nothing")

		By("the quote: the API's figures for the recipient's currency, fees included")
		want := s.apiQuote(s.user1, "targetCurrency=EUR&sourceAmount=25.00")
		Expect(want).NotTo(HaveKey("quoteId"), "a browser caller's quote (spec 5.6)")
		inner := want["quote"].(map[string]any)
		quoted := b.do("POST", s.url+"transfer-new", transferValues(csrf, "quote", rid, "25.00"))
		Expect(quoted.status).To(Equal(200), quoted.body)
		Expect(quoted.body).To(ContainSubstring(`id="quote"`))
		Expect(quoted.body).To(ContainSubstring(`<dd id="quote-target-amount">` + fmt.Sprint(inner["targetAmount"]) + ` EUR</dd>`))
		Expect(quoted.body).To(ContainSubstring(`<dd id="quote-transfer-fee">` + fmt.Sprint(inner["transferFee"]) + ` EUR`))
		Expect(quoted.body).To(ContainSubstring(`<dd id="quote-rate">1 USD = ` + fmt.Sprint(want["usdToTargetRate"]) + ` EUR</dd>`))
		Expect(quoted.body).To(ContainSubstring(`<dd id="quote-service-fee">` + fmt.Sprint(want["serviceFeePercent"]) + ` %`))
		Expect(accountTransfers(s.user1)).To(BeEmpty(), "a quote creates nothing")

		By("the API's refusal beside the field it names")
		tooMuch := b.do("POST", s.url+"transfer-new", transferValues(csrf, "quote", rid, "2000000"))
		Expect(tooMuch.status).To(Equal(http.StatusBadRequest), tooMuch.body)
		Expect(tooMuch.body).To(MatchRegexp(`<p class="error" id="amount-error">sourceAmount: [^<]+</p>`))
		noWallet := transferValues(csrf, "create", rid, "25.00")
		noWallet.Set("wallet_address", "")
		refused := b.do("POST", s.url+"transfer-new", noWallet)
		Expect(refused.status).To(Equal(http.StatusBadRequest), refused.body)
		Expect(refused.body).To(ContainSubstring(`id="wallet_address-error"`))
		Expect(accountTransfers(s.user1)).To(BeEmpty())

		By("the create: the API's, priced as the quote was")
		id := s.createTransfer(b, csrf, rid, "25.00")
		Expect(id).To(MatchRegexp(`^[0-9a-f]{24}$`))
		t := transferOf(s.user1, id)
		Expect(t.Spec.Method).To(Equal(payoutv1.TransferV1))
		Expect(t.Spec.Amount).To(Equal(payoutv1.USDAmount("25.00")))
		Expect(t.Spec.RecipientID).To(Equal(rid))
		Expect(string(t.Spec.Quote.TargetAmount)).To(Equal(fmt.Sprint(inner["targetAmount"])))
		Expect(string(t.Spec.Quote.TransferFee)).To(Equal(fmt.Sprint(inner["transferFee"])))
		Expect(t.Name).To(Equal(payoutv1.TransferNameForQuote(t.Spec.QuoteID)), "named by its quote, as an API key's transfer")
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Spec.QuoteID}, &payoutv1.Quote{})).To(Succeed(), "the quote it was priced on is stored")

		By("the transfer's page: the exact amount, the deposit address and its QR code")
		p := b.get(s.url + "transfer?id=" + id)
		Expect(p.status).To(Equal(200), p.body)
		Expect(p.body).To(ContainSubstring(`<strong id="transfer-amount">25.00</strong>`))
		Expect(p.body).To(ContainSubstring(`<code id="deposit-address">` + t.Spec.DepositAddress + `</code>`))
		Expect(p.body).To(ContainSubstring(`<img id="deposit-qr" src="transfer-qr?id=` + id + `"`))
		Expect(p.body).To(ContainSubstring(`data-status="ready_to_process"`))
		Expect(p.body).NotTo(ContainSubstring("<script>"))
		qr := b.get(s.url + "transfer-qr?id=" + id)
		Expect(qr.status).To(Equal(200))
		Expect(qr.header.Get("Content-Type")).To(Equal("image/png"))
		img, err := png.Decode(strings.NewReader(qr.body))
		Expect(err).NotTo(HaveOccurred(), "a valid PNG")
		Expect(img.Bounds().Dx()).To(Equal(256))
		// no QR decoder is served; the code drawn for the address, byte for byte, is the check
		want256, err := qrcode.Encode(t.Spec.DepositAddress, qrcode.Medium, 256)
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Equal([]byte(qr.body), want256)).To(BeTrue(), "the QR code of the deposit address")

		By("the status endpoint the page's script polls follows the transfer to its end")
		code, st := b.status(s.url + "transfer-status?id=" + id)
		Expect(code).To(Equal(200))
		Expect(st.Status).To(Equal("ready_to_process"))
		Expect(st.Ended).To(BeFalse())
		// what the transfer controller writes on a failure and the refund after it
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, Message: "no deposit arrived before the address expired", At: metav1.Now()}
		t.Status.History = append(t.Status.History, payoutv1.StatusChange{Status: payoutv1.PhaseFailed, At: metav1.Now(), Reason: "Expired", Message: "no deposit arrived before the address expired"})
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
		Eventually(func() string { _, st = b.status(s.url + "transfer-status?id=" + id); return st.Status }).Should(Equal("failed"))
		Expect(st.Error).To(Equal("no deposit arrived before the address expired"))
		Expect(st.Ended).To(BeTrue())
		Expect(st.History).To(HaveLen(1))
		Expect(st.History[0].Label).To(Equal("Failed"))
		t = transferOf(s.user1, id)
		hash := "0x" + strings.Repeat("ab", 32)
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: hash, ConfirmedAt: metav1.Now()}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
		Eventually(func() string { _, st = b.status(s.url + "transfer-status?id=" + id); return st.Status }).Should(Equal("refunded"))
		Expect(st.RefundTxHash).To(Equal(hash))
		p = b.get(s.url + "transfer?id=" + id)
		Expect(p.body).To(ContainSubstring(`data-ended="true"`))
		Expect(p.body).To(ContainSubstring(`<p class="error" id="transfer-error">no deposit arrived before the address expired</p>`))
		Expect(p.body).To(ContainSubstring(`<code>` + hash + `</code>`))
	})

	It("creates a v2 transfer and confirms its hash through the API, its refusals shown on the page", func() {
		s := newSite()
		s.withTransfers()
		b := newBrowser()
		csrf := csrfOf(s.signIn(b, "alice", "alice-pw"))
		v2 := transferValues(csrf, "create", s.eurRecipient(b, csrf, "Erika Mustermann"), "25.00")
		v2.Set("method", "v2")
		made := b.do("POST", s.url+"transfer-new", v2)
		Expect(made.status).To(Equal(http.StatusSeeOther), made.body)
		id := strings.TrimPrefix(made.loc, s.url+"transfer?id=")
		t := transferOf(s.user1, id)
		Expect(t.Spec.Method).To(Equal(payoutv1.TransferV2))
		p := b.get(made.loc)
		Expect(p.status).To(Equal(200), p.body)
		Expect(p.body).To(ContainSubstring(`<code id="deposit-address">` + t.Spec.DepositAddress + `</code>`))
		Expect(p.body).To(ContainSubstring(`id="confirm-form"`))

		bad := b.do("POST", s.url+"transfer-confirm?id="+id, url.Values{"csrf": {csrf}, "tx_hash": {"0x1234"}})
		Expect(bad.status).To(Equal(http.StatusBadRequest), bad.body)
		Expect(bad.body).To(MatchRegexp(`<p class="error" role="alert" id="confirm-error">tx_hash: [^<]+</p>`))
		Expect(transferOf(s.user1, id).Spec.TxHash).To(BeEmpty())
		hash := "0x" + strings.Repeat("5a", 32)
		Expect(b.do("POST", s.url+"transfer-confirm?id="+id, url.Values{"csrf": {csrf}, "tx_hash": {hash}}).status).To(Equal(http.StatusSeeOther))
		Expect(transferOf(s.user1, id).Spec.TxHash).To(Equal(hash))
		Expect(b.do("POST", s.url+"transfer-confirm?id="+id, url.Values{"tx_hash": {hash}}).status).To(Equal(http.StatusForbidden), "the confirm needs the CSRF token")
	})

	It("refuses a create without the session's CSRF token", func() {
		s := newSite()
		s.withTransfers()
		b := newBrowser()
		csrf := csrfOf(s.signIn(b, "alice", "alice-pw"))
		rid := s.eurRecipient(b, csrf, "Erika Mustermann")
		for _, token := range []string{"", "not-the-token"} {
			r := b.do("POST", s.url+"transfer-new", transferValues(token, "create", rid, "25.00"))
			Expect(r.status).To(Equal(http.StatusForbidden), r.body)
		}
		Expect(accountTransfers(s.user1)).To(BeEmpty())
		s.createTransfer(b, csrf, rid, "25.00")
		Expect(accountTransfers(s.user1)).To(HaveLen(1))
	})

	It("keeps user 2 away from user 1's transfers: page, status, QR code, confirm and list", func() {
		s := newSite()
		s.withTransfers()
		alice, bob := newBrowser(), newBrowser()
		ac := csrfOf(s.signIn(alice, "alice", "alice-pw"))
		id := s.createTransfer(alice, ac, s.eurRecipient(alice, ac, "Erika Mustermann"), "25.00")
		Eventually(func() string { return alice.get(s.url + "transfers").body }).Should(ContainSubstring(id))
		bc := csrfOf(s.signIn(bob, "bob", "bob-pw"))
		for _, path := range []string{"transfer?id=", "transfer-status?id=", "transfer-qr?id="} {
			r := bob.get(s.url + path + id)
			Expect(r.status).To(Equal(http.StatusNotFound), "%s: %s", path, r.body)
			Expect(r.body).NotTo(ContainSubstring(transferOf(s.user1, id).Spec.DepositAddress))
		}
		Expect(bob.do("POST", s.url+"transfer-confirm?id="+id, url.Values{"csrf": {bc}, "tx_hash": {"0x" + strings.Repeat("cd", 32)}}).status).To(Equal(http.StatusNotFound))
		Expect(transferOf(s.user1, id).Spec.TxHash).To(BeEmpty())
		Expect(bob.get(s.url + "transfers").body).NotTo(ContainSubstring(id))
		Expect(alice.get(s.url + "transfer?id=" + id).status).To(Equal(200))
	})
})

var _ = Describe("the transfers list", func() {
	// transfers of account made as the facade makes them (the fixture's), recipient rid and
	// failed when failed, so that the list has rows of every kind without a create for each
	made := func(account string, rid int64, failed bool) string {
		GinkgoHelper()
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte(rand.IntN(256))
		}
		id := hex.EncodeToString(b)
		t := testgen.Transfer(payoutv1.AccountNamespace(account), id, func(t *payoutv1.Transfer) {
			t.Spec.Account, t.Spec.RecipientID, t.Spec.Recipient.ID = account, rid, rid
			t.Spec.CustomerUUID = fmt.Sprintf("7d0e1c55-8d0f-4d4e-9f59-%012x", rand.Int64N(1<<48))
		})
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		if failed {
			t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailureExpired, Message: "expired", At: metav1.Now()}
			Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
		}
		return id
	}
	rowsOf := func(body string) []string {
		var ids []string
		for _, m := range regexp.MustCompile(`<tr data-transfer-id="([0-9a-f]{24})">`).FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		return ids
	}

	It("lists the account's transfers newest first, filtered by status, date and recipient, a page at a time", func() {
		s := newSite()
		s.withAPI()
		b := newBrowser()
		s.signIn(b, "alice", "alice-pw")
		var all, failed, toFive []string
		for i := range 5 {
			rid := int64(5 + i%2) // recipients 5 and 6
			id := made(s.user1, rid, i%2 == 1)
			all = append(all, id)
			if i%2 == 1 {
				failed = append(failed, id)
			}
			if rid == 5 {
				toFive = append(toFive, id)
			}
		}
		other := made(s.user2, 5, false)
		Eventually(func() []string { return rowsOf(b.get(s.url + "transfers").body) }).Should(HaveLen(5))

		list := b.get(s.url + "transfers")
		Expect(list.status).To(Equal(200), list.body)
		Expect(rowsOf(list.body)).To(ConsistOf(all), "the account's transfers, no other account's")
		Expect(list.body).NotTo(ContainSubstring(other))
		for _, id := range []string{"filter-status", "filter-from", "filter-to", "filter-recipient", "filter-size"} {
			Expect(list.body).To(ContainSubstring(`<label for="`+id+`">`), "a label for #%s", id)
		}
		// newest first, then by id
		var objs []payoutv1.Transfer
		for _, id := range rowsOf(list.body) {
			objs = append(objs, *transferOf(s.user1, id))
		}
		for i := 1; i < len(objs); i++ {
			a, c := objs[i-1], objs[i]
			Expect(a.CreationTimestamp.After(c.CreationTimestamp.Time) ||
				(a.CreationTimestamp.Equal(&c.CreationTimestamp) && a.Name < c.Name)).To(BeTrue(), "%s before %s", a.Name, c.Name)
		}

		By("filters")
		Expect(rowsOf(b.get(s.url + "transfers?status=failed").body)).To(ConsistOf(failed))
		Expect(rowsOf(b.get(s.url + "transfers?status=ready_to_process").body)).To(HaveLen(len(all) - len(failed)))
		Expect(rowsOf(b.get(s.url + "transfers?recipient=5").body)).To(ConsistOf(toFive))
		Expect(rowsOf(b.get(s.url + "transfers?recipient=5&status=failed").body)).To(BeEmpty())
		today := time.Now().UTC()
		day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
		Expect(rowsOf(b.get(s.url + "transfers?from=" + day(0) + "&to=" + day(0)).body)).To(ConsistOf(all))
		Expect(rowsOf(b.get(s.url + "transfers?to=" + day(-1)).body)).To(BeEmpty())
		Expect(rowsOf(b.get(s.url + "transfers?from=" + day(1)).body)).To(BeEmpty())
		bad := b.get(s.url + "transfers?from=yesterday")
		Expect(bad.status).To(Equal(http.StatusBadRequest))
		Expect(bad.body).To(ContainSubstring(`id="list-error"`))

		By("pages of two, each after the last row of the one before, the filters kept")
		var paged []string
		next := s.url + "transfers?size=2"
		for pages := 0; next != ""; pages++ {
			Expect(pages).To(BeNumerically("<", 3))
			p := b.get(next)
			Expect(p.status).To(Equal(200), p.body)
			rows := rowsOf(p.body)
			Expect(len(rows)).To(BeNumerically("<=", 2))
			paged = append(paged, rows...)
			next = ""
			if m := regexp.MustCompile(`<a id="next-page" href="([^"]+)"`).FindStringSubmatch(p.body); m != nil {
				next = s.url + html.UnescapeString(m[1])
				Expect(next).To(ContainSubstring("size=2"))
			}
		}
		Expect(paged).To(Equal(rowsOf(list.body)), "the pages, one after the other, are the list")
		onePage := b.get(s.url + "transfers?status=failed&size=1")
		m := regexp.MustCompile(`<a id="next-page" href="([^"]+)"`).FindStringSubmatch(onePage.body)
		Expect(m).NotTo(BeNil())
		second := b.get(s.url + html.UnescapeString(m[1]))
		Expect(append(rowsOf(onePage.body), rowsOf(second.body)...)).To(ConsistOf(failed))
		Expect(b.get(s.url + "transfers?after=not-a-cursor").status).To(Equal(http.StatusBadRequest))
	})
})
