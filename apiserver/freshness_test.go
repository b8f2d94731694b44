package apiserver

import (
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/dev/refdata"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// testClock is a clock for the refreshed data's age, apart from the suite's facade clock.
type testClock struct{ t atomic.Pointer[time.Time] }

func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.set(t)
	return c
}

func (c *testClock) set(t time.Time)     { c.t.Store(&t) }
func (c *testClock) now() time.Time      { return *c.t.Load() }
func (c *testClock) add(d time.Duration) { c.set(c.now().Add(d)) }

var _ = Describe("fresh compliance data (issue 25 item 1)", func() {
	var data *refdata.Server
	BeforeEach(func() {
		var err error
		data, err = refdata.Start("127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(data.Close)
	})

	It("refuses a name of a newer list once it is refreshed, keeps the list on a bad release, and answers 503 past the list's age", func() {
		const week = 7 * 24 * time.Hour
		clock := newTestClock(sanctions.EmbeddedPublished.Add(24 * time.Hour))
		feed, err := sanctions.NewFeed(sanctions.Feed{SDNURL: data.SanctionsURL()})
		Expect(err).NotTo(HaveOccurred())
		screener := sanctions.NewScreener(feed.Load, sanctions.WithMaxAge(week), sanctions.WithClock(clock.now))
		Expect(screener.LastError()).NotTo(HaveOccurred())
		cfg := baseCfg
		cfg.Sanctions = screener
		facade := openServer(cfg)
		acct := newAccount()
		acct.c.base = facade.URL()

		const listed = "Volkhov Maritime Logistics"
		acct.create(emailBody(listed))
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody("Banco Nacional de Cuba")), 403)).To(ContainSubstring("sanctions"))

		newer := sanctions.EmbeddedPublished.AddDate(0, 0, 5)
		data.AddSanctionsEntry(newer, 99999001, "VOLKHOV MARITIME LOGISTICS", "Saint Petersburg 190000", "Russia")
		Expect(screener.Reload()).To(Succeed())
		Expect(screener.List().Published()).To(Equal(newer))
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody(listed)), 403)).To(ContainSubstring("sanctions"))

		// a truncated release is refused and the refreshed list stays in force
		data.SetSanctionsFile(sanctions.SDNFile, sanctions.EmbeddedFile(sanctions.SDNFile)[:100000])
		Expect(screener.Reload()).To(MatchError(ContainSubstring("sdn.csv")))
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody(listed)), 403)).To(ContainSubstring("sanctions"))

		// within the age the list screens; past it, screening fails closed
		clock.set(newer.Add(week - time.Minute))
		acct.create(emailBody("Anyone At All"))
		clock.add(2 * time.Minute)
		Expect(errorText(acct.c.post("/api/payouts/recipients", emailBody("Anyone At All")), 503)).To(ContainSubstring("sanctions screening data unavailable"))
	})

	It("answers 503 to quotes once the live rates are older than their maximum age", func() {
		clock := newTestClock(time.Now())
		rates, err := pricing.NewRefresher(pricing.RefresherConfig{URL: data.RatesURL(), MaxAge: time.Hour, Now: clock.now})
		Expect(err).NotTo(HaveOccurred())
		cfg := baseCfg
		cfg.Rates = rates
		facade := openServer(cfg)
		acct := newAccount()
		acct.c.base = facade.URL()

		Expect(errorText(acct.c.get(quotePath("EUR", "25.00")), 503)).To(ContainSubstring("not available yet"))
		Expect(rates.Refresh(ctx)).To(Succeed())
		r := acct.c.get(quotePath("EUR", "25.00"))
		Expect(r.status).To(Equal(200), "%s", r)
		clock.add(time.Hour - time.Second)
		Expect(acct.c.get(quotePath("EUR", "25.00")).status).To(Equal(200))
		clock.add(2 * time.Second)
		Expect(errorText(acct.c.get(quotePath("EUR", "25.00")), 503)).To(ContainSubstring("stale"))
		// a successful poll brings quotes back
		Expect(rates.Refresh(ctx)).To(Succeed())
		Expect(acct.c.get(quotePath("EUR", "25.00")).status).To(Equal(200))
	})
})
