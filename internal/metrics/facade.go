package metrics

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RouteOther is the route label of a request that matched no route (a 404, a 405, or a
// request refused before routing).
const RouteOther = "other"

// LimitAuthFailures is the limit label of a 429 answered to an address over a brute-force
// limit of spec 5.3; the per-key budgets of spec 8.1 use their own names.
const LimitAuthFailures = "auth-failures"

// LimitStorePerKey is the limit label of payout_facade_limit_store_errors_total for the per-key
// rate limits of spec 8.1 (LimitAuthFailures for the brute-force limits of spec 5.3).
const LimitStorePerKey = "per-key"

// Reasons of payout_facade_auth_failures_total.
const (
	authMissing   = "missing"
	authMalformed = "malformed"
	authInvalid   = "invalid"
)

// AuthReason is a kind of refused credential.
type AuthReason string

const (
	// AuthMissing: no Authorization header, or not a Bearer credential.
	AuthMissing AuthReason = authMissing
	// AuthMalformed: a Bearer value that is not an API key.
	AuthMalformed AuthReason = authMalformed
	// AuthInvalid: an unknown, unmatched or revoked key, or a key of a deleted account.
	AuthInvalid AuthReason = authInvalid
)

var (
	methods = set(http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace)

	// declareMu orders FacadeRoutes' calls; declared is what they declared: read by every
	// request (knownRoute), so a copy is replaced whole rather than a map guarded by a lock.
	declareMu sync.Mutex
	declared  atomic.Pointer[labelValues]
)

// labelValues are the route templates the facade declared (FacadeRoutes), the only route
// labels, and the budget names it declared with LimitAuthFailures, the only limit labels. Never
// changed once stored.
type labelValues struct {
	routes, limits map[string]bool
}

func init() {
	declared.Store(&labelValues{routes: map[string]bool{}, limits: map[string]bool{LimitAuthFailures: true}})
}

// FacadeRoutes declares the facade's route templates and rate-limit budget names: the only
// route and limit label values (anything else is "other"), so that no request can add a
// series. The facade calls it when it is built; calls add to what earlier ones declared.
func FacadeRoutes(templates, budgets []string) {
	declareMu.Lock()
	defer declareMu.Unlock()
	old := declared.Load()
	next := &labelValues{routes: maps.Clone(old.routes), limits: maps.Clone(old.limits)}
	for _, t := range templates {
		next.routes[t] = true
	}
	for _, b := range budgets {
		next.limits[b] = true
	}
	declared.Store(next)
}

// knownRoute is route when the facade declared it, else "other".
func knownRoute(route string) string { return oneOf(route, declared.Load().routes) }

// knownLimit is limit when the facade declared it, else "other".
func knownLimit(limit string) string { return oneOf(limit, declared.Load().limits) }

// MethodLabel is method when it is a standard HTTP method, else "OTHER".
func MethodLabel(method string) string {
	if methods[method] {
		return method
	}
	return "OTHER"
}

// FacadeRequest records one answered request: its route template (declared with
// FacadeRoutes), method, status code and latency.
func FacadeRequest(route, method string, code int, d time.Duration) {
	s := facadeSeries{knownRoute(route), MethodLabel(method), code}
	c, ok := facadeSeen.Load(s)
	if !ok {
		c, _ = facadeSeen.LoadOrStore(s, facadeChildren{
			requests: facadeRequests.WithLabelValues(s.route, s.method, strconv.Itoa(code)),
			duration: facadeDuration.WithLabelValues(s.route, s.method),
		})
	}
	c.(facadeChildren).requests.Inc()
	c.(facadeChildren).duration.Observe(d.Seconds())
}

// facadeSeen keeps the series of each (route, method, status) once made: every request counts
// in them, and a vector's lookup hashes and compares its label values each time. Bounded: the
// routes and methods are the known ones, the statuses those the facade answers.
var facadeSeen sync.Map // facadeSeries: facadeChildren

type facadeSeries struct {
	route, method string
	code          int
}

type facadeChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// FacadeInFlight adds delta (+1 when a request starts, -1 when it ends) to the requests being
// served.
func FacadeInFlight(delta float64) { facadeInFlight.Add(delta) }

// RateLimited counts a 429: limit is the per-key budget that was spent, or LimitAuthFailures.
func RateLimited(limit string) {
	facadeRateLimited.WithLabelValues(knownLimit(limit)).Inc()
}

// AuthFailure counts a request refused for its credential.
func AuthFailure(reason AuthReason) {
	facadeAuthFailures.WithLabelValues(oneOf(string(reason), set(authMissing, authMalformed, authInvalid))).Inc()
}

// Results of payout_facade_key_reads_total.
const (
	KeyReadFound  = "found"
	KeyReadAbsent = "absent"
	KeyReadUnread = "unread"
)

// KeyRead counts a read past the facade's cache of an API key it did not hold: result is
// KeyReadFound, KeyReadAbsent or KeyReadUnread.
func KeyRead(result string) {
	facadeKeyReads.WithLabelValues(oneOf(result, set(KeyReadFound, KeyReadAbsent, KeyReadUnread))).Inc()
}

// LimitStoreError counts a failed call to the shared limits store: limit is LimitStorePerKey or
// LimitAuthFailures.
func LimitStoreError(limit string) {
	limitStoreErrors.WithLabelValues(oneOf(limit, set(LimitStorePerKey, LimitAuthFailures))).Inc()
}

// WatchBusiestClientShare makes payout_facade_busiest_client_share report share() at every
// scrape: the facade's measure of how much of its traffic its busiest client address sends.
// Until it is called the gauge has no series (payoutd without the facade); a later call replaces
// the function (tests build one facade after another in one process).
func WatchBusiestClientShare(share func() float64) { facadeBusiestClient.fn.Store(&share) }

// funcGauge is a gauge read from a function at scrape time, with no series until the function
// is set.
type funcGauge struct {
	desc *prometheus.Desc
	fn   atomic.Pointer[func() float64]
}

func (g *funcGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *funcGauge) Collect(ch chan<- prometheus.Metric) {
	if fn := g.fn.Load(); fn != nil {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, (*fn)())
	}
}
