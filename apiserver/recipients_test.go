package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/test/testgen"
)

type obj = map[string]any

func ibanBody(name string) obj {
	return obj{"currency": "EUR", "type": "iban", "accountHolderName": name,
		"details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}}
}

func sortCodeBody(name string) obj {
	return obj{"currency": "GBP", "type": "sort_code", "accountHolderName": name,
		"details": obj{"legalType": "PRIVATE", "sortCode": "040075", "accountNumber": "37618166"}}
}

func abaBody(name, country string) obj {
	return obj{"currency": "USD", "type": "aba", "accountHolderName": name,
		"details": obj{"legalType": "PRIVATE", "abartn": "026009593", "accountNumber": "12345678", "accountType": "CHECKING",
			"address": obj{"country": country, "city": "New York", "firstLine": "1 Main Street", "postCode": "10001", "state": "NY"}}}
}

func emailBody(name string) obj {
	return obj{"currency": "EUR", "type": "email_recipient", "accountHolderName": name, "details": obj{"email": "payee@example.com"}}
}

// create posts a recipient, expects 201 and returns it.
func (a *account) create(body obj) map[string]any {
	GinkgoHelper()
	r := a.c.post("/api/payouts/recipients", body)
	Expect(r.status).To(Equal(201), "%s", r)
	return r.json()
}

func idOf(m map[string]any) int64 {
	GinkgoHelper()
	n, err := m["id"].(json.Number).Int64()
	Expect(err).NotTo(HaveOccurred())
	return n
}

func rpath(id int64) string { return "/api/payouts/recipients/" + strconv.FormatInt(id, 10) }

// sameJSON compares a response's details with what was sent.
func sameJSON(got, want any) {
	GinkgoHelper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	Expect(string(g)).To(MatchJSON(string(w)))
}

var _ = Describe("recipients (spec 4.4 to 4.8)", func() {
	var acct *account
	BeforeEach(func() { acct = newAccount() })

	It("creates each documented type, echoes it and reads it back", func() {
		for _, body := range []obj{ibanBody("Iban Holder"), sortCodeBody("Sort Holder"), abaBody("Aba Holder", "US"), emailBody("Mail Holder")} {
			m := acct.create(body)
			Expect(m["accountHolderName"]).To(Equal(body["accountHolderName"]))
			Expect(m["currency"]).To(Equal(body["currency"]))
			Expect(m["type"]).To(Equal(body["type"]))
			Expect(m["active"]).To(BeTrue())
			sameJSON(m["details"], body["details"])
			Expect(idOf(m)).To(BeNumerically(">=", int64(1e12)))
			Expect(idOf(m)).To(BeNumerically("<=", payoutv1.MaxRecipientID))
			got := acct.c.get(rpath(idOf(m)))
			Expect(got.status).To(Equal(200))
			Expect(got.json()).To(Equal(m))
		}
		aba := acct.create(abaBody("Country Holder", "US"))
		Expect(aba["country"]).To(Equal("US"))
		Expect(acct.create(emailBody("No Country"))["country"]).To(BeNil())
		Expect(acct.create(ibanBody("Implied Country"))["country"]).To(Equal("DE"), "an IBAN implies its country")
	})

	It("lists only the account's active recipients", func() {
		other := newAccount()
		keep := idOf(acct.create(ibanBody("Keep Holder")))
		gone := idOf(acct.create(sortCodeBody("Gone Holder")))
		foreign := idOf(other.create(ibanBody("Other Holder")))
		Expect(acct.c.do("DELETE", rpath(gone), nil).status).To(Equal(200))
		var ids []int64
		for _, x := range acct.c.get("/api/payouts/recipients").json()["data"].([]any) {
			ids = append(ids, idOf(x.(map[string]any)))
		}
		Expect(ids).To(Equal([]int64{keep}))
		Expect(ids).NotTo(ContainElement(foreign))
	})

	It("answers another account's recipient with 403 and an unknown one with 404", func() {
		other := newAccount()
		id := idOf(acct.create(ibanBody("Owned Holder")))
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if method == "PATCH" {
				body = obj{"accountHolderName": "Hijack"}
			}
			errorText(other.c.do(method, rpath(id), body), 403)
			Expect(errorText(acct.c.do(method, rpath(987654321), body), 404)).To(ContainSubstring("not found"))
		}
		Expect(acct.c.get(rpath(id)).json()["active"]).To(BeTrue())
		// any integer names a recipient or none: those that cannot be ids are unknown recipients
		many := acct.c.on(openServer(baseCfg, unlimited)) // more requests than a minute's budget
		for _, unknown := range []string{"0", "-5", "+5", "0012", "-0", "9007199254740992", "99999999999999999999", "0" + strconv.FormatInt(id, 10)} {
			for _, method := range []string{"GET", "PATCH", "DELETE"} {
				var body any
				if method == "PATCH" {
					body = obj{"accountHolderName": "Nobody"}
				}
				Expect(errorText(many.do(method, "/api/payouts/recipients/"+unknown, body), 404)).To(ContainSubstring("not found"), "%s %s", method, unknown)
			}
		}
		for _, notInteger := range []string{"abc", "1.5", "1e3", "12a", "-"} {
			Expect(errorText(many.get("/api/payouts/recipients/"+notInteger), 400)).To(HavePrefix("id"), notInteger)
		}
	})

	It("refuses invalid recipients with 400 naming the field, creating nothing", func() {
		noCountry := abaBody("X Y", "US")
		delete(noCountry["details"].(obj)["address"].(obj), "country")
		cases := map[string]obj{
			"details.address.country": abaBody("X Y", "USA"),
			"currency":                {"type": "iban", "accountHolderName": "X Y", "details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}},
			"type":                    {"currency": "EUR", "accountHolderName": "X Y", "details": obj{}},
			"accountHolderName":       {"currency": "EUR", "type": "iban", "details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}},
			"details":                 {"currency": "EUR", "type": "iban", "accountHolderName": "X Y"},
			"details.iban":            {"currency": "EUR", "type": "iban", "accountHolderName": "X Y", "details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013001"}},
		}
		for field, body := range cases {
			Expect(errorText(acct.c.post("/api/payouts/recipients", body), 400)).To(HavePrefix(field), "case %s", field)
		}
		Expect(errorText(acct.c.post("/api/payouts/recipients", abaBody("X Y", "United States")), 400)).To(ContainSubstring("country"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", noCountry), 400)).To(ContainSubstring("country"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", obj{"currency": "GBP", "type": "email_recipient", "accountHolderName": "X Y", "details": obj{"email": "x@example.com"}}), 400)).To(ContainSubstring("EUR"))
		// the service's one e-mail check (internal/emailaddr), as for customer_email
		for _, bad := range []string{"a@b", "Ann <ann@example.com>", "a@example.com, b@example.com"} {
			Expect(errorText(acct.c.post("/api/payouts/recipients", obj{"currency": "EUR", "type": "email_recipient", "accountHolderName": "X Y", "details": obj{"email": bad}}), 400)).To(HavePrefix("details.email: "), bad)
		}
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(BeEmpty())
		list := &payoutv1.RecipientList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(payoutv1.AccountNamespace(acct.name)))).To(Succeed())
		Expect(list.Items).To(BeEmpty())
	})

	It("refuses control and bidi formatting characters in caller text with 400 naming the field, and takes any script (issue 25 item 10)", func() {
		const refused = ": must not hold control or bidirectional formatting characters, found U+"
		// ESC starts a terminal escape sequence, U+202E reverses what follows it on screen:
		// describe, events and mails would show both as they are
		for name, code := range map[string]string{"Ann\x1b[2J\x1b[HDoe": "001B", "Ann \u202eeoD": "202E", "Ann\nStatus: completed": "000A",
			"Ann\u0085": "0085", "Ann \u2066x\u2069": "2066", "Ann\u200f": "200F"} {
			Expect(errorText(acct.c.post("/api/payouts/recipients", ibanBody(name)), 400)).To(Equal("accountHolderName"+refused+code), "%q", name)
		}
		keep := idOf(acct.create(ibanBody("Plain Holder")))
		Expect(errorText(acct.c.do("PATCH", rpath(keep), obj{"accountHolderName": "Plain \u202eredloH"}), 400)).To(Equal("accountHolderName" + refused + "202E"))
		city := abaBody("City Holder", "US")
		city["details"].(obj)["address"].(obj)["city"] = "New York\x1b]8;;http://evil.example/\x07"
		Expect(errorText(acct.c.post("/api/payouts/recipients", city), 400)).To(Equal("details.address.city" + refused + "001B"))
		line := abaBody("Line Holder", "US")
		line["details"].(obj)["address"].(obj)["firstLine"] = "1 Main \u202eteertS"
		Expect(errorText(acct.c.post("/api/payouts/recipients", line), 400)).To(Equal("details.address.firstLine" + refused + "202E"))
		Expect(errorText(acct.c.do("PATCH", rpath(keep), obj{"details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000\u200e"}}), 400)).
			To(Equal("details.iban" + refused + "200E"))
		mail := emailBody("Mail Holder")
		mail["details"] = obj{"email": "payee\u202e@example.com"}
		Expect(errorText(acct.c.post("/api/payouts/recipients", mail), 400)).To(HavePrefix("details.email: "))
		list := &payoutv1.RecipientList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(payoutv1.AccountNamespace(acct.name)))).To(Succeed())
		Expect(list.Items).To(HaveLen(1), "nothing refused was stored")

		// letters of any script, accents, right-to-left text and joiners are names, not controls
		for _, name := range []string{"José Müller-Lüdenscheidt", "Zoë Ørsted Åberg", "王小明", "佐藤 花子", "محمد عبد الله", "דוד כהן", "Ivan Петров", "नेहा शर्मा", "Ann\u200dDoe"} {
			Expect(acct.create(ibanBody(name))["accountHolderName"]).To(Equal(name))
		}
		accented := abaBody("Zoë Ørsted", "US")
		accented["details"].(obj)["address"].(obj)["city"] = "São Paulo"
		accented["details"].(obj)["address"].(obj)["firstLine"] = "Rua Açaí 1"
		Expect(acct.create(accented)["details"].(map[string]any)["address"].(map[string]any)["city"]).To(Equal("São Paulo"))
	})

	It("reads null as absent and refuses a duplicate key inside details", func() {
		// null is "not given" in details, as validation reads it (spec 2.1.1)
		m := acct.create(obj{"currency": "EUR", "type": "iban", "accountHolderName": "Null Address",
			"details": obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000", "address": nil}})
		Expect(m["details"]).To(Equal(map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}))
		Expect(m["country"]).To(Equal("DE"))
		m = acct.create(obj{"currency": "USD", "type": "aba", "accountHolderName": "Null State",
			"details": obj{"legalType": "PRIVATE", "abartn": "026009593", "accountNumber": "12345678", "accountType": "CHECKING",
				"address": obj{"country": "DE", "city": "Berlin", "firstLine": "Unter den Linden 1", "postCode": "10117", "state": nil}}})
		Expect(m["details"].(map[string]any)["address"]).To(Equal(map[string]any{"country": "DE", "city": "Berlin", "firstLine": "Unter den Linden 1", "postCode": "10117"}))
		noAddress := abaBody("Null Aba", "US")
		noAddress["details"].(obj)["address"] = nil
		Expect(errorText(acct.c.post("/api/payouts/recipients", noAddress), 400)).To(HavePrefix("details.address.country"))

		// a duplicate key is a 400 at any depth (docs/api.md: request bodies), never last-one-wins
		dup := `{"currency":"EUR","type":"iban","accountHolderName":"Dup Holder","details":{"legalType":"PRIVATE","iban":"DE89370400440532013000","iban":"GB29NWBK60161331926819"}}`
		Expect(errorText(acct.c.post("/api/payouts/recipients", dup), 400)).To(Equal("details.iban: appears more than once"))
		nested := `{"currency":"USD","type":"aba","accountHolderName":"Dup Holder","details":{"legalType":"PRIVATE","abartn":"026009593","accountNumber":"12345678","accountType":"CHECKING",` +
			`"address":{"country":"US","city":"New York","firstLine":"1 Main Street","postCode":"10001","state":"NY","city":"Boston"}}}`
		Expect(errorText(acct.c.post("/api/payouts/recipients", nested), 400)).To(Equal("details.address.city: appears more than once"))
		id := idOf(acct.create(ibanBody("Dup Patch")))
		Expect(errorText(acct.c.do("PATCH", rpath(id), `{"details":{"legalType":"PRIVATE","legalType":"BUSINESS","iban":"DE89370400440532013000"}}`), 400)).
			To(Equal("details.legalType: appears more than once"))
		refresh := `{"type":"iban","details":{"legalType":"PRIVATE","legalType":"BUSINESS"}}`
		Expect(errorText(acct.c.post("/api/payouts/account-requirements?currency=EUR", refresh), 400)).To(Equal("details.legalType: appears more than once"))
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(HaveLen(3))
	})

	It("updates under a new id, keeping the stored country, and retires the old one", func() {
		body := abaBody("Patch Holder", "US")
		id := idOf(acct.create(body))
		r := acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Patched Holder"})
		Expect(r.status).To(Equal(200), "%s", r)
		m := r.json()
		id2 := idOf(m)
		Expect(id2).NotTo(Equal(id))
		Expect(m["accountHolderName"]).To(Equal("Patched Holder"))
		Expect(m["country"]).To(Equal("US"))
		sameJSON(m["details"], body["details"])
		old := acct.c.get(rpath(id)).json()
		Expect(old["active"]).To(BeFalse())
		Expect(old["accountHolderName"]).To(Equal("Patch Holder"))

		nd := body["details"].(obj)
		nd["accountNumber"] = "87654321"
		m = acct.c.do("PATCH", rpath(id2), obj{"details": nd}).json()
		Expect(m["details"].(map[string]any)["accountNumber"]).To(Equal("87654321"))
		id3 := idOf(m)

		errorText(acct.c.do("PATCH", rpath(id3), obj{}), 400)
		partial := obj{"accountNumber": "11112222"}
		Expect(errorText(acct.c.do("PATCH", rpath(id3), obj{"details": partial}), 400)).To(HavePrefix("details."))
		bad := obj{}
		for k, v := range nd {
			bad[k] = v
		}
		bad["address"] = obj{"country": "USA", "city": "New York", "firstLine": "1 Main Street", "postCode": "10001", "state": "NY"}
		Expect(errorText(acct.c.do("PATCH", rpath(id3), obj{"details": bad}), 400)).To(ContainSubstring("country"))
		// the replaced id names the latest one (spec 2.1: always use the id from the latest response)
		Expect(errorText(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Again"}), 409)).
			To(Equal(fmt.Sprintf("recipient %d was replaced by recipient %d in an update; use its latest id %d", id, id2, id3)))
		Expect(errorText(acct.c.do("PATCH", rpath(id2), obj{"accountHolderName": "Again"}), 409)).
			To(Equal(fmt.Sprintf("recipient %d was replaced by recipient %d in an update; use its latest id %d", id2, id3, id3)))
		Expect(acct.c.do("DELETE", rpath(id3), nil).status).To(Equal(200))
		Expect(errorText(acct.c.do("PATCH", rpath(id3), obj{"accountHolderName": "Again"}), 400)).To(ContainSubstring("deleted"))
		Expect(errorText(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Again"}), 409)).To(ContainSubstring(fmt.Sprintf("its latest id %d is deleted", id3)))
	})

	It("lets one of several concurrent updates of a recipient win, leaving one active recipient", func() {
		id := idOf(acct.create(ibanBody("Race Holder")))
		answers := make(chan *response, 5)
		for i := range 5 {
			go func() {
				defer GinkgoRecover()
				answers <- acct.c.do("PATCH", rpath(id), obj{"accountHolderName": fmt.Sprintf("Racer %c", 'A'+i)})
			}()
		}
		var won int64
		var lost []string
		for range 5 {
			r := <-answers
			Expect(r.status).To(BeElementOf(200, 409), "the losers are told the recipient was replaced: %s", r)
			if r.status == 200 {
				Expect(won).To(BeZero(), "one update wins")
				won = idOf(r.json())
			} else {
				lost = append(lost, errorText(r, 409))
			}
		}
		Expect(won).NotTo(BeZero())
		for _, msg := range lost {
			Expect(msg).To(Equal(fmt.Sprintf("recipient %d was replaced by recipient %d in an update; use its latest id %d", id, won, won)))
		}
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(HaveLen(1))
		expectNoDuplicates(acct, 2)
	})

	It("answers a recipient whose create's answer was lost after it was stored, and keeps its id's claim (issue 22 item 10)", func() {
		cfg := baseCfg
		cfg.Client = lostCreateAnswer{Client: baseCfg.Client, store: true}
		lossy := openServer(cfg)
		r := acct.c.on(lossy).post("/api/payouts/recipients", ibanBody("Lost Answer"))
		Expect(r.status).To(Equal(201), "the recipient is stored, so it is answered: %s", r)
		id := idOf(r.json())
		Expect(acct.c.get(rpath(id)).status).To(Equal(200))
		Expect(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimRecipientID, strconv.FormatInt(id, 10))), &payoutv1.Claim{})).
			To(Succeed(), "the id stays claimed while its recipient exists")
	})

	It("withdraws the replacement of an update that loses the race, leaving no duplicate and no claim", func() {
		id := idOf(acct.create(ibanBody("Loser Holder")))
		c := &Caller{Account: acct.model}
		stale, err := srv.findRecipient(ctx, c, strconv.FormatInt(id, 10))
		Expect(err).NotTo(HaveOccurred())
		stale = stale.DeepCopy()
		// the winner
		winner := idOf(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Winner Holder"}).json())
		// the loser, from the version it read before the winner's write
		next := stale.Spec.DeepCopy()
		next.ID, next.AccountHolderName = 0, "Loser Again"
		loser := &payoutv1.Recipient{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(),
			Labels: map[string]string{payoutv1.RecipientLineageLabel: stale.Lineage()}}, Spec: *next}
		claim, err := srv.createRecipient(ctx, c, loser)
		Expect(err).NotTo(HaveOccurred())
		err = srv.retire(ctx, stale, loser)
		Expect(apierror.CodeOf(err)).To(Equal(apierror.Conflict))
		Expect(err.Error()).To(Equal(fmt.Sprintf("recipient %d was replaced by recipient %d in an update; use its latest id %d", id, winner, winner)))
		srv.withdraw(ctx, loser, claim)
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(loser), &payoutv1.Recipient{}))).To(BeTrue(), "the replacement is gone")
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), &payoutv1.Claim{}))
		}).Should(BeTrue(), "its claim is released (by the claim controller, on the facade's request)")
		Expect(acct.c.get(rpath(loser.Spec.ID)).status).To(Equal(404))
		data := acct.c.get("/api/payouts/recipients").json()["data"].([]any)
		Expect(data).To(HaveLen(1))
		Expect(idOf(data[0].(map[string]any))).To(Equal(winner))
		expectNoDuplicates(acct, 2)
	})

	It("bounds the retries of a retirement that keeps conflicting, and withdraws its replacement", func() {
		id := idOf(acct.create(ibanBody("Hot Holder")))
		cfg := baseCfg
		cfg.Client = conflictingPatches{Client: baseCfg.Client}
		hot := openServer(cfg)
		start := time.Now()
		r := acct.c.on(hot).do("PATCH", rpath(id), obj{"accountHolderName": "Hot Again"})
		Expect(errorText(r, 503)).To(ContainSubstring("retry shortly"))
		Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second), "bounded")
		Expect(acct.c.get(rpath(id)).json()["active"]).To(BeTrue(), "the recipient is unchanged")
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(HaveLen(1))
		expectNoDuplicates(acct, 1)
	})

	It("deletes: inactive, unusable, and its transfers in progress failed and counted", func() {
		id := idOf(acct.create(ibanBody("Delete Holder")))
		ns := payoutv1.AccountNamespace(acct.name)
		ofRecipient := func(t *payoutv1.Transfer) {
			t.Spec.RecipientID = id
			t.Labels = map[string]string{payoutv1.RecipientLineageLabel: strconv.FormatInt(id, 10)}
		}
		open1 := testgen.Transfer(ns, "cccccccccccccccccccccc01", ofRecipient)
		open2 := testgen.Transfer(ns, "cccccccccccccccccccccc02", ofRecipient)
		done := testgen.Transfer(ns, "cccccccccccccccccccccc03", ofRecipient)
		for _, t := range []*payoutv1.Transfer{open1, open2, done} {
			Expect(env.Client.Create(ctx, t)).To(Succeed())
		}
		// the transfer controller opens transfers concurrently: write the terminal status on the
		// latest version
		Eventually(func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(done), done); err != nil {
				return err
			}
			done.Status.Deposit = testgen.Deposit()
			done.Status.Payout = &payoutv1.PayoutFacts{Reference: done.Name, Provider: "test", State: payoutv1.PayoutCompleted, RequestedAt: testgen.Epoch}
			done.Status.Phase = payoutv1.PhaseCompleted
			return env.Client.Status().Update(ctx, done)
		}).Should(Succeed())
		// wait until the facade's cache holds the three transfers, the completed one as such
		Eventually(func() payoutv1.TransferPhase {
			got := &payoutv1.Transfer{}
			for _, t := range []*payoutv1.Transfer{open1, open2} {
				if srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(t), got) != nil {
					return ""
				}
			}
			if srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(done), got) != nil {
				return ""
			}
			return got.Status.Phase
		}).Should(Equal(payoutv1.PhaseCompleted))

		r := acct.c.do("DELETE", rpath(id), nil)
		Expect(r.body).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":2}`, id)))
		Expect(acct.c.get(rpath(id)).json()["active"]).To(BeFalse())
		for _, t := range []*payoutv1.Transfer{open1, open2} {
			got := &payoutv1.Transfer{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
			Expect(got.Spec.Cancellation).NotTo(BeNil())
			Expect(got.Spec.Cancellation.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
			// the transfer controller, the one writer of status, fails it
			Eventually(func() *payoutv1.TransferFailure {
				Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
				return got.Status.Failure
			}).ShouldNot(BeNil())
			Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
			Expect(got.Status.Failure.Message).To(ContainSubstring("deleted"))
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(done), done)).To(Succeed())
		Expect(done.Spec.Cancellation).To(BeNil(), "a completed transfer is not cancelled")
		again := acct.c.do("DELETE", rpath(id), nil)
		Expect(again.body).To(MatchJSON(fmt.Sprintf(`{"deleted":true,"id":"%d","transfers_failed":0}`, id)))

		q := acct.c.get(quotePath("EUR", "20.00")).json()["quoteId"]
		tr := acct.c.post("/api/payouts/transfer", obj{"quote_id": q, "amount": json.Number("20.00"), "recipientId": id,
			"customer_uuid": "7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d", "customer_email": "a@example.com", "source_token": "usdc",
			"source_network": "base", "wallet_address": "0x8ba1f109551bD432803012645Ac136ddd64DBA72"})
		Expect(errorText(tr, 400)).To(ContainSubstring("deleted"))
	})
})

// expectNoDuplicates asserts, on the API server itself, that the account holds n recipients,
// at most one active per lineage, and that every recipient-id claim held in its namespace has
// its recipient.
func expectNoDuplicates(acct *account, n int) {
	GinkgoHelper()
	ns := payoutv1.AccountNamespace(acct.name)
	list := &payoutv1.RecipientList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	Expect(list.Items).To(HaveLen(n))
	active := map[string]int{}
	for _, rc := range list.Items {
		if !rc.Spec.Deactivated {
			active[rc.Lineage()]++
		}
	}
	for lineage, count := range active {
		Expect(count).To(Equal(1), "lineage %s has %d active recipients", lineage, count)
	}
	// the claim controller releases the ids the facade gave back a moment later (issue 25 item 13)
	Eventually(func(g Gomega) {
		claims := &payoutv1.ClaimList{}
		g.Expect(env.Client.List(ctx, claims)).To(Succeed())
		held := 0
		for _, cl := range claims.Items {
			if cl.Spec.Kind == payoutv1.ClaimRecipientID && cl.Spec.Holder.Namespace == ns {
				held++
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cl.Spec.Holder.Name}, &payoutv1.Recipient{})).To(Succeed(), "claim %s dangles", cl.Name)
			}
		}
		g.Expect(held).To(Equal(n))
	}).Should(Succeed())
}

// conflictingPatches is a client whose patches of recipients always conflict, as on an object
// that another writer keeps changing.
type conflictingPatches struct{ client.Client }

func (c conflictingPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if rc, ok := obj.(*payoutv1.Recipient); ok {
		return apierrors.NewConflict(payoutv1.GroupVersion.WithResource("recipients").GroupResource(), rc.Name, errors.New("changed meanwhile"))
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

var _ = Describe("KYC wallets (spec 4.5 rule 1)", func() {
	It("requires a wallet verified for this account", func() {
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true })
		other := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true })
		wallet := "0x8ba1f109551bD432803012645Ac136ddd64DBA72" // EIP-55 spelling
		body := ibanBody("Kyc Holder")
		Expect(errorText(acct.c.post("/api/payouts/recipients", body), 400)).To(HavePrefix("wallet"))
		body["wallet"] = "not-a-wallet"
		Expect(errorText(acct.c.post("/api/payouts/recipients", body), 400)).To(HavePrefix("wallet"))
		body["wallet"] = wallet
		Expect(errorText(acct.c.post("/api/payouts/recipients", body), 403)).To(ContainSubstring("KYC"))

		Expect(env.Client.Create(ctx, testgen.Wallet(payoutv1.AccountNamespace(acct.name), strings.ToLower(wallet)))).To(Succeed())
		var r *response
		Eventually(func() int { r = acct.c.post("/api/payouts/recipients", body); return r.status }).Should(Equal(201))
		id := idOf(r.json())
		errorText(other.c.post("/api/payouts/recipients", body), 403)
		// a single case carries no checksum and is the same wallet
		for _, spelling := range []string{strings.ToLower(wallet), "0x" + strings.ToUpper(wallet[2:])} {
			body["wallet"] = spelling
			Expect(acct.c.post("/api/payouts/recipients", body).status).To(Equal(201), spelling)
		}
		// mixed case with a wrong EIP-55 checksum (one letter's case flipped) is refused
		body["wallet"] = "0x8Ba1f109551bD432803012645Ac136ddd64DBA72"
		Expect(errorText(acct.c.post("/api/payouts/recipients", body), 400)).To(Equal("wallet: " + chain.ErrEVMChecksum.Error()))
		Expect(errorText(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Kyc Again", "wallet": "0x8Ba1f109551bD432803012645Ac136ddd64DBA72"}), 400)).
			To(Equal("wallet: " + chain.ErrEVMChecksum.Error()))
		Expect(errorText(acct.c.do("DELETE", rpath(id)+"?wallet=0x8Ba1f109551bD432803012645Ac136ddd64DBA72", nil), 400)).To(HavePrefix("wallet"))

		errorText(acct.c.do("DELETE", rpath(id), nil), 400)
		errorText(acct.c.do("DELETE", rpath(id)+"?wallet=0x0000000000000000000000000000000000000001", nil), 403)
		Expect(acct.c.do("DELETE", rpath(id)+"?wallet="+wallet, nil).status).To(Equal(200))
	})

	It("refuses a mixed-case wallet with a wrong checksum also where KYC is off", func() {
		acct := newAccount()
		body := ibanBody("Free Holder")
		body["wallet"] = "0x8Ba1f109551bD432803012645Ac136ddd64DBA72"
		Expect(errorText(acct.c.post("/api/payouts/recipients", body), 400)).To(Equal("wallet: " + chain.ErrEVMChecksum.Error()))
		body["wallet"] = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
		Expect(acct.create(body)["active"]).To(BeTrue())
	})

	It("fails closed with 503 when the verification service cannot answer", func() {
		cfg := baseCfg
		cfg.KYC = kyc.HTTP{Service: remote.Service{BaseURL: "http://127.0.0.1:1", Timeout: time.Second}}
		down := openServer(cfg)
		acct := newAccount(func(a *payoutv1.PayoutAccount) { a.Spec.KYCRequired = true })
		body := ibanBody("Kyc Holder")
		body["wallet"] = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", down.URL()+"/api/payouts/recipients", strings.NewReader(string(data)))
		req.Header.Set("Authorization", acct.c.auth)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(503))
	})
})

var _ = Describe("sanctions screening (spec 4.5 rule 3, 4.7)", func() {
	It("refuses a sanctioned holder on create and on rename, leaving the recipient unchanged", func() {
		acct := newAccount()
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody("Banco Nacional de Cuba")), 403)).To(ContainSubstring("sanctions"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody("BANCO nacional DE cuba")), 403)).To(ContainSubstring("sanctions"))
		id := idOf(acct.create(emailBody("Screened Holder")))
		errorText(acct.c.do("PATCH", rpath(id), obj{"accountHolderName": "Banco Nacional de Cuba"}), 403)
		got := acct.c.get(rpath(id)).json()
		Expect(got["accountHolderName"]).To(Equal("Screened Holder"))
		Expect(got["active"]).To(BeTrue())
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(HaveLen(1))
	})

	It("refuses a listed name spelled with look-alike letters of other scripts (issue 25 item 2)", func() {
		acct := newAccount()
		for _, name := range []string{
			"B\u0430nco N\u0430cion\u0430l d\u0435 Cub\u0430",                               // Cyrillic а, е
			"\u0392\u0391\u039DC\u039F \u039D\u0391C\u0399\u039F\u039D\u0391L DE CUBA",      // Greek Β, Α, Ν, Ο, Ι
			"Banc\u0585 Naci\u0585nal de C\u057Dba",                                         // Armenian օ, ս
			"\u13F4\u13AAN\u13DFO N\u13AA\u13DFION\u13AAL \u13A0\u13AC \u13DFU\u13F4\u13AA", // Cherokee Ᏼ, Ꭺ, Ꮯ, Ꭰ, Ꭼ
		} {
			Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody(name)), 403)).To(ContainSubstring("sanctions"), name)
		}
		// a name in another script that passes for no listed one is created
		acct.create(emailBody("\u0418\u0432\u0430\u043D \u041F\u0435\u0442\u0440\u043E\u0432"))
		Expect(acct.c.get("/api/payouts/recipients").json()["data"]).To(HaveLen(1))
	})

	It("weighs country and address when both sides have them", func() {
		acct := newAccount()
		business := func(country, city, street, post string) obj {
			return obj{"currency": "EUR", "type": "iban", "accountHolderName": "Mounir El Motassadeq",
				"details": obj{"legalType": "BUSINESS", "iban": "DE89370400440532013000",
					"address": obj{"country": country, "city": city, "firstLine": street, "postCode": post}}}
		}
		errorText(acct.c.post("/api/payouts/recipients", business("DE", "Hamburg", "Goschenstasse 13", "21073")), 403)
		Expect(acct.c.post("/api/payouts/recipients", business("FR", "Paris", "1 Rue de Rivoli", "75001")).status).To(Equal(201))
	})

	It("takes an optional address on a person's iban, sort_code and philippines recipient and screens with it", func() {
		acct := newAccount()
		// spec 2.1.1 lists legalType and the account fields alone: a business needs no address
		biz := obj{"currency": "EUR", "type": "iban", "accountHolderName": "Business Holder", "details": obj{"legalType": "BUSINESS", "iban": "DE89370400440532013000"}}
		m := acct.create(biz)
		sameJSON(m["details"], biz["details"])
		Expect(m["country"]).To(Equal("DE"), "the IBAN's country")
		person := func(details obj) obj {
			return obj{"currency": "EUR", "type": "iban", "accountHolderName": "Mounir El Motassadeq", "details": details}
		}
		withAddress := func(country, city, street, post string) obj {
			return person(obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000",
				"address": obj{"country": country, "city": city, "firstLine": street, "postCode": post}})
		}
		// the SDN record has an address: without one on the recipient, the name alone decides
		Expect(errorText(acct.c.post("/api/payouts/recipients", person(obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000"})), 403)).To(ContainSubstring("sanctions"))
		// with one, it is weighed (spec 4.5 rule 3): another country and street clear the holder
		fr := withAddress("FR", "Paris", "1 Rue de Rivoli", "75001")
		m = acct.create(fr)
		Expect(m["country"]).To(Equal("FR"), "details.address.country")
		sameJSON(m["details"], fr["details"])
		errorText(acct.c.post("/api/payouts/recipients", withAddress("DE", "Hamburg", "Goschenstasse 13", "21073")), 403)

		for _, body := range []obj{
			{"currency": "GBP", "type": "sort_code", "accountHolderName": "Sort Person", "details": obj{"legalType": "PRIVATE", "sortCode": "040075", "accountNumber": "37618166", "address": obj{"country": "GB", "city": "London"}}},
			{"currency": "GBP", "type": "sort_code", "accountHolderName": "Sort Business", "details": obj{"legalType": "BUSINESS", "sortCode": "040075", "accountNumber": "37618166"}},
			{"currency": "PHP", "type": "philippines", "accountHolderName": "Peso Person", "details": obj{"legalType": "PRIVATE", "bankCode": "BDO", "accountNumber": "001234567890", "address": obj{"country": "PH"}}},
			{"currency": "PHP", "type": "philippines", "accountHolderName": "Peso Business", "details": obj{"legalType": "BUSINESS", "bankCode": "BDO", "accountNumber": "001234567890"}},
		} {
			sameJSON(acct.create(body)["details"], body["details"])
		}
		noCountry := person(obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000", "address": obj{"city": "Paris"}})
		Expect(errorText(acct.c.post("/api/payouts/recipients", noCountry), 400)).To(HavePrefix("details.address.country"))
		alpha3 := person(obj{"legalType": "PRIVATE", "iban": "DE89370400440532013000", "address": obj{"country": "FRA"}})
		Expect(errorText(acct.c.post("/api/payouts/recipients", alpha3), 400)).To(HavePrefix("details.address.country"))
	})

	It("fails closed with 503 when the screening data cannot be loaded", func() {
		cfg := baseCfg
		cfg.Sanctions = sanctions.NewScreener(func() (*sanctions.List, error) { return nil, errors.New("no data") })
		down := openServer(cfg)
		acct := newAccount()
		data, _ := json.Marshal(emailBody("Anyone At All"))
		req, _ := http.NewRequest("POST", down.URL()+"/api/payouts/recipients", strings.NewReader(string(data)))
		req.Header.Set("Authorization", acct.c.auth)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(503))
	})
})
