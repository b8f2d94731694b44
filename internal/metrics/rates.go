package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// WatchRatesAge makes payout_rates_age_seconds report age() at every scrape: the age of the
// live rates quotes are priced with, or -1 (ok false) before the first successful poll. Until
// it is called the gauge has no series (a snapshot's rates never age). A later call replaces
// the function.
//
// payoutd calls it with the live refresher (replacing its own registration of the gauge):
//
//	metrics.WatchRatesAge(r.Age)
//
// The gauge is registered on the first call, not before: until payoutd calls this, its own
// registration of payout_rates_age_seconds (cmd/payoutd/main.go) keeps working; calling both
// panics on the duplicate registration.
func WatchRatesAge(age func() (time.Duration, bool)) {
	ratesAge.fn.Store(&age)
	registerRatesAge.Do(func() { ctrlmetrics.Registry.MustRegister(ratesAge) })
}

var registerRatesAge sync.Once

// WatchSanctionsAge makes payout_sanctions_list_age_seconds report age() at every scrape: the
// time since the publish date of the sanctions list in force, or -1 (ok false) without a dated
// list. The facade calls it with its Screener's Age; a later call replaces the function.
func WatchSanctionsAge(age func() (time.Duration, bool)) {
	sanctionsAge.fn.Store(&age)
	registerSanctionsAge.Do(func() { ctrlmetrics.Registry.MustRegister(sanctionsAge) })
}

var registerSanctionsAge sync.Once

// optionalGauge is a gauge read from a function, with no series until the function is set.
type optionalGauge struct {
	desc *prometheus.Desc
	fn   atomic.Pointer[func() (time.Duration, bool)]
}

func (g *optionalGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *optionalGauge) Collect(ch chan<- prometheus.Metric) {
	fn := g.fn.Load()
	if fn == nil {
		return
	}
	v := -1.0
	if age, ok := (*fn)(); ok {
		v = age.Seconds()
	}
	ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v)
}
