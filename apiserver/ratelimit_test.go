package apiserver

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/ulule/limiter/v3"
)

var _ = Describe("rate limits (spec 8.1)", func() {
	It("carry the per-endpoint limit on every authenticated answer", func() {
		acct := newAccount()
		unknown := "/api/payouts/recipients/987654321"
		cases := []struct {
			method, path string
			body         any
			limit        int
		}{
			{"GET", "/api/payouts/account-requirements?currency=EUR", nil, 500},
			{"POST", "/api/payouts/account-requirements?currency=EUR", map[string]any{"type": "iban", "details": map[string]any{"legalType": "PRIVATE"}}, 500},
			{"GET", "/api/payouts/deposit-options", nil, 60},
			{"GET", "/api/payouts/fee?amount=10", nil, 60},
			{"GET", "/api/payouts/amount-limits", nil, 60},
			{"GET", "/api/payouts/quote?targetCurrency=EUR&sourceAmount=10", nil, 20},
			{"POST", "/api/payouts/transfer", map[string]any{}, 20},
			{"POST", "/api/payouts/transfer/v2", map[string]any{}, 20},
			{"POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{}, 20},
			{"GET", "/api/payouts/transfer/" + strings.Repeat("0", 24), nil, 30},
			{"GET", "/api/payouts/recipients", nil, 30},
			{"POST", "/api/payouts/recipients", map[string]any{}, 30},
			{"GET", unknown, nil, 30},
			{"PATCH", unknown, map[string]any{"accountHolderName": "Nobody"}, 30},
			{"DELETE", unknown, nil, 30},
		}
		now := time.Now().Unix()
		for _, tc := range cases {
			r := acct.c.do(tc.method, tc.path, tc.body)
			Expect(r.status).To(BeNumerically("<", 500), "%s %s: %s", tc.method, tc.path, r)
			Expect(r.status).NotTo(Equal(401))
			Expect(r.header.Get("X-RateLimit-Limit")).To(Equal(strconv.Itoa(tc.limit)), "%s %s", tc.method, tc.path)
			rem, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
			Expect(err).NotTo(HaveOccurred())
			Expect(rem).To(BeNumerically("<", tc.limit))
			reset, err := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			Expect(reset).To(BeNumerically("~", now+60, 5))
		}
	})

	It("refuses the 21st quote of a key in a minute with 429 and the headers", func() {
		acct := newAccount()
		for i := range 20 {
			r := acct.c.get("/api/payouts/quote?targetCurrency=EUR&sourceAmount=10")
			Expect(r.status).To(Equal(200), "quote %d: %s", i+1, r)
			Expect(r.header.Get("X-RateLimit-Remaining")).To(Equal(strconv.Itoa(19 - i)))
		}
		r := acct.c.get("/api/payouts/quote?targetCurrency=EUR&sourceAmount=10")
		Expect(errorText(r, 429)).To(ContainSubstring("rate limit"))
		Expect(r.header.Get("X-RateLimit-Limit")).To(Equal("20"))
		Expect(r.header.Get("X-RateLimit-Remaining")).To(Equal("0"))
		Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())

		// budgets are per key and per endpoint
		Expect(acct.c.get("/api/payouts/amount-limits").status).To(Equal(200))
		other := issueKey(acct.name)
		c := newCaller("Bearer " + other.Full)
		Eventually(func() int { return c.get("/api/payouts/quote?targetCurrency=EUR&sourceAmount=10").status }).
			WithTimeout(10 * time.Second).Should(Equal(200))
	})
})

// TestResetIsWhenTheWindowOpens: a client that waits until X-RateLimit-Reset finds the next
// window open (spec 8.1), so Reset is the window's end rounded up, never down; Retry-After
// likewise. Windows of one second keep the test short.
func TestResetIsWhenTheWindowOpens(t *testing.T) {
	kl := newKeyLimitsPer(map[string]int64{"b": 2}, time.Second, nil)
	ctx := context.Background()
	for round := range 3 {
		key := "k" + strconv.Itoa(round) // each round on a fresh window
		var reset int64
		for i := range 3 {
			rec := httptest.NewRecorder()
			ok, err := kl.take(ctx, rec, "b", key)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (i < 2) {
				t.Fatalf("round %d request %d: allowed %v", round, i+1, ok)
			}
			reset, _ = strconv.ParseInt(rec.Header().Get("X-RateLimit-Reset"), 10, 64)
			if i == 2 {
				retry, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
				if time.Now().Add(time.Duration(retry)*time.Second).Unix() < reset {
					t.Errorf("round %d: Retry-After %d ends before Reset %d", round, retry, reset)
				}
			}
		}
		time.Sleep(time.Until(time.Unix(reset, 0)))
		if ok, _ := kl.take(ctx, httptest.NewRecorder(), "b", key); !ok {
			t.Fatalf("round %d: a request at X-RateLimit-Reset %d (now %s) was refused", round, reset, time.Now().Format(time.RFC3339Nano))
		}
	}
}

// TestPeekSpendsNothing: the headers of an answer that must not spend the budget.
func TestPeekSpendsNothing(t *testing.T) {
	kl := newKeyLimits(map[string]int64{"b": 5})
	ctx := context.Background()
	rec := httptest.NewRecorder()
	if err := kl.peek(ctx, rec, "b", "k"); err != nil || rec.Header().Get("X-RateLimit-Remaining") != "5" {
		t.Fatalf("peek before any request: %v, remaining %q", err, rec.Header().Get("X-RateLimit-Remaining"))
	}
	if _, err := kl.take(ctx, httptest.NewRecorder(), "b", "k"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rec = httptest.NewRecorder()
		if err := kl.peek(ctx, rec, "b", "k"); err != nil || rec.Header().Get("X-RateLimit-Remaining") != "4" {
			t.Fatalf("peek after one request: %v, remaining %q", err, rec.Header().Get("X-RateLimit-Remaining"))
		}
	}
}

// TestSetRateHeadersAreReadableByName: the headers of spec 8.1 are written straight into the
// header map, so their keys must be what Header.Get looks up for the spec's spelling.
func TestSetRateHeadersAreReadableByName(t *testing.T) {
	rec := httptest.NewRecorder()
	setRateHeaders(rec, limiter.Context{Limit: 600, Remaining: 599, Reset: 1764000000})
	for name, want := range map[string]string{"X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "599", "X-RateLimit-Reset": "1764000001"} {
		if got := rec.Header().Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %q, want [%q]", name, got, want)
		}
	}
	if n := len(rec.Header()); n != 3 {
		t.Errorf("%d headers, want 3: %v", n, rec.Header())
	}
}
