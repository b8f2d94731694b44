package apiserver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the error model (spec 7)", func() {
	var acct *account
	BeforeEach(func() { acct = newAccount() })

	It("answers unknown paths with a JSON 404 and other methods with a JSON 405", func() {
		Expect(errorText(acct.c.get("/api/payouts/nothing-here"), 404)).To(ContainSubstring("no such endpoint"))
		Expect(errorText(newCaller("").get("/nope"), 404)).NotTo(BeEmpty())
		r := acct.c.do("PUT", "/api/payouts/quote", nil)
		errorText(r, 405)
		Expect(r.header.Get("Allow")).To(Equal("GET"))
		r = acct.c.do("DELETE", "/api/payouts/recipients", nil)
		Expect(r.header.Get("Allow")).To(Equal("GET, POST"))
	})

	It("answers malformed JSON and wrong types with 400 naming the field", func() {
		Expect(errorText(acct.c.post("/api/payouts/recipients", `{"currency":`), 400)).To(ContainSubstring("malformed JSON"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", `[1,2]`), 400)).To(ContainSubstring("JSON object"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", ``), 400)).To(ContainSubstring("empty"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", `{"currency": 978}`), 400)).To(HavePrefix("currency: must be a string"))
		// a transfer's recipient is judged (rule 5) before its other fields (rule 6)
		Expect(errorText(acct.c.post("/api/payouts/transfer", `{"amount": "25.00"}`), 400)).To(HavePrefix("recipientId: is required"))
		Expect(errorText(acct.c.post("/api/payouts/transfer", `{"recipientId": 1.5}`), 400)).To(HavePrefix("recipientId: must be an integer"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", `{"currency":"EUR","currency":"GBP"}`), 400)).To(ContainSubstring("more than once"))
		Expect(errorText(acct.c.post("/api/payouts/recipients", `{"currency":"EUR","type":"iban","accountHolderName":"A B","details":{},"colour":"red"}`), 400)).To(HavePrefix("colour: unknown field"))
	})

	It("answers an oversized body with 413 and the same body shape", func() {
		big := `{"accountHolderName":"` + strings.Repeat("x", 70<<10) + `"}`
		Expect(errorText(acct.c.post("/api/payouts/recipients", big), 413)).To(ContainSubstring("too large"))
	})

	It("leaks nothing of an internal error", func() {
		r := acct.c.get("/api/payouts/transfer/" + strings.Repeat("a", 24))
		Expect(errorText(r, 404)).To(Equal("transfer not found"))
	})
})

var _ = Describe("probes and the OpenAPI document", func() {
	It("serve without authentication", func() {
		c := newCaller("")
		Expect(c.get("/healthz").body).To(MatchJSON(`{"status":"ok"}`))
		Expect(c.get("/readyz").body).To(MatchJSON(`{"status":"ready"}`))
		doc := c.get("/openapi.json")
		Expect(doc.status).To(Equal(200))
		Expect(doc.json()).To(HaveKeyWithValue("openapi", "3.0.3"))
		Expect(doc.header.Get("X-Request-Id")).NotTo(BeEmpty())
	})
})

var _ = Describe("a panicking handler", func() {
	It("is answered 500 with the error body, logged, and the server stays up", func() {
		var logged bytes.Buffer
		log := logr.FromSlogHandler(newTextHandler(&logged))
		calls := 0
		h := observe(log, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls == 1 {
				panic("boom at secret place")
			}
			writeJSON(w, 200, map[string]string{"status": "ok"})
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
		Expect(rec.Code).To(Equal(500))
		Expect(rec.Body.String()).To(MatchJSON(`{"error":"internal error"}`))
		Expect(rec.Body.String()).NotTo(ContainSubstring("boom"))
		Expect(logged.String()).To(ContainSubstring("boom at secret place"))

		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
		Expect(rec.Code).To(Equal(200))
	})
})
