package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Names of the metrics.
const (
	TransfersName              = "payout_transfers"
	TransfersAwaitingChainName = "payout_transfers_awaiting_chain"
	TransfersAttentionName     = "payout_transfers_needing_attention"
	OldestInStatusName         = "payout_transfer_oldest_in_status_seconds"
	TransferTransitionsName    = "payout_transfer_transitions_total"
	TransferStatusDurationName = "payout_transfer_status_duration_seconds"
	ChainHeadBlockName         = "payout_chain_head_block"
	ChainScannedBlockName      = "payout_chain_scanned_block"
	ChainHeadLagName           = "payout_chain_head_lag_blocks"
	ChainDetectionLagName      = "payout_chain_detection_lag_seconds"
	ChainDepositsName          = "payout_chain_deposits_total"
	ChainGapName               = "payout_chain_gap_blocks"
	ChainCrossChecksName       = "payout_chain_crosschecks_total"
	ProviderRequestsName       = "payout_provider_requests_total"
	ProviderDurationName       = "payout_provider_request_duration_seconds"
	FacadeRequestsName         = "payout_facade_requests_total"
	FacadeDurationName         = "payout_facade_request_duration_seconds"
	FacadeInFlightName         = "payout_facade_requests_in_flight"
	FacadeRateLimitedName      = "payout_facade_rate_limited_total"
	FacadeAuthFailuresName     = "payout_facade_auth_failures_total"
	LimitStoreErrorsName       = "payout_facade_limit_store_errors_total"
	FacadeKeyReadsName         = "payout_facade_key_reads_total"
	FacadeBusiestClientName    = "payout_facade_busiest_client_share"
	RatesAgeName               = "payout_rates_age_seconds"
	SanctionsAgeName           = "payout_sanctions_list_age_seconds"
	LedgerFailuresName         = "payout_ledger_invariant_failures"
	LedgerCheckedName          = "payout_ledger_checked_timestamp_seconds"
	TreasuryBalanceName        = "payout_treasury_balance_base_units"
	SweeperGasBalanceName      = "payout_sweeper_gas_balance_wei"
	SweeperGasBatchesName      = "payout_sweeper_gas_batches_left"
)

// Type is a metric's Prometheus type.
type Type string

const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// Metric describes one metric of the service.
type Metric struct {
	Name   string
	Type   Type
	Labels []string
	Help   string
}

// Catalog is every metric this package defines, in the order of the package documentation.
var Catalog = []Metric{
	{TransfersName, Gauge, []string{"status"}, "Transfers by status, counted in the informer cache at scrape time."},
	{TransfersAwaitingChainName, Gauge, []string{"network"}, "v1 transfers past their expiry on the clock, without their deposit, that wait for the network's watcher to scan past the expiry before they may fail (a lagging watcher or node)."},
	{TransfersAttentionName, Gauge, []string{"reason"}, "Transfers whose payout needs a person: payout_lost (the provider no longer knows a payout it accepted), payout_returned (the recipient's bank returned a completed payout whose deposit is not refunded yet)."},
	{OldestInStatusName, Gauge, []string{"status"}, "Seconds the longest-waiting transfer has been in each status that is not an end, at scrape time; 0 when none is in it."},
	{TransferTransitionsName, Counter, []string{"from", "to"}, "Transfer status changes written by the transfer controller."},
	{TransferStatusDurationName, Histogram, []string{"status"}, "Seconds a transfer spent in a status, observed when it left it."},
	{ChainHeadBlockName, Gauge, []string{"network"}, "Newest block number the deposit watcher read from the network."},
	{ChainScannedBlockName, Gauge, []string{"network"}, "Newest block number the deposit watcher has scanned at confirmation depth."},
	{ChainHeadLagName, Gauge, []string{"network"}, "Blocks between the head and the newest scanned block: the confirmation depth plus any backlog."},
	{ChainDetectionLagName, Gauge, []string{"network"}, "Seconds from the block time of the latest recorded deposit to its recording."},
	{ChainDepositsName, Counter, []string{"network"}, "Deposits recorded by the deposit watcher."},
	{ChainGapName, Gauge, []string{"network"}, "Blocks the deposit watcher must scan again after it lost its place (cursor deleted, chain id or genesis changed) and has not scanned yet; 0 when none."},
	{ChainCrossChecksName, Counter, []string{"network", "result"}, "Answers that credit money (a scanned range, a receipt at depth) asked again of a second RPC endpoint: agreed, disagreed (nothing credited) or unchecked (no other endpoint could be asked)."},
	{ProviderRequestsName, Counter, []string{"operation", "outcome"}, "Calls to the fiat payout provider, by operation and outcome."},
	{ProviderDurationName, Histogram, []string{"operation"}, "Latency of calls to the fiat payout provider in seconds."},
	{FacadeRequestsName, Counter, []string{"route", "method", "code"}, "REST facade requests by route template, method and status code."},
	{FacadeDurationName, Histogram, []string{"route", "method"}, "REST facade request latency in seconds."},
	{FacadeInFlightName, Gauge, nil, "REST facade requests being served."},
	{FacadeRateLimitedName, Counter, []string{"limit"}, "REST facade 429 answers by per-key budget, or auth-failures for an address over a brute-force limit."},
	{FacadeAuthFailuresName, Counter, []string{"reason"}, "REST facade requests refused for their credential: missing, malformed or invalid."},
	{FacadeKeyReadsName, Counter, []string{"result"}, "API keys the REST facade's cache did not hold, read from the API server: found, absent, or unread (the read budget was spent: the key was refused as unknown; while this grows, valid new keys may be refused, see docs/operations/keys.md)."},
	{LimitStoreErrorsName, Counter, []string{"limit"}, "Failed calls of the REST facade to the shared limits store (Redis), by limit: per-key or auth-failures; while they fail, the replica counts the limits on its own."},
	{FacadeBusiestClientName, Gauge, nil, "Share (0 to 1) of the REST facade's requests in the last complete minute that came from its busiest client address (an IPv4 address or IPv6 /64, as the brute-force limits count them), probes left out. Near 1 on a facade many tenants use, the facade sees a proxy's address instead of its callers' (--trusted-proxies), and one tenant's bad keys block them all."},
	{RatesAgeName, Gauge, nil, "Age of the exchange rates quotes are priced with; -1 before the first successful poll."},
	{LedgerFailuresName, Gauge, []string{"invariant"}, "Failures of each invariant of the treasury's ledger (docs/operations/ledger.md) at its last complete check; 0 when it holds."},
	{LedgerCheckedName, Gauge, nil, "Unix time of the last complete check of the treasury's ledger (every fact read, the chain's balances of the deposit addresses among them)."},
	{TreasuryBalanceName, Gauge, []string{"network", "token"}, "Token balance of the network's treasury address in base units (6 decimals), read by the sweeper at each pass."},
	{SweeperGasBalanceName, Gauge, []string{"network"}, "Native balance of the sweeper's gas wallet on the network in wei (1e-18 of the native coin), read by the sweeper at each pass."},
	{SweeperGasBatchesName, Gauge, []string{"network"}, "Full sweep batches (--sweep-max-batch deposit addresses each) the sweeper's gas wallet can still pay at the network's current fee cap; below 1 no batch is signed until it is funded."},
	{SanctionsAgeName, Gauge, nil, "Time since the publish date of the sanctions list recipients are screened against; -1 while no list is loaded or its date is unknown. Screening answers 503 past --sanctions-max-age."},
}

func help(name string) string {
	for _, m := range Catalog {
		if m.Name == name {
			return m.Help
		}
	}
	panic("metrics: no catalog entry for " + name)
}

func labels(name string) []string {
	for _, m := range Catalog {
		if m.Name == name {
			return m.Labels
		}
	}
	panic("metrics: no catalog entry for " + name)
}

func newCounterVec(name string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help(name)}, labels(name))
}

func newGaugeVec(name string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help(name)}, labels(name))
}

func newDesc(name string) *prometheus.Desc {
	return prometheus.NewDesc(name, help(name), labels(name), nil)
}

func newHistogramVec(name string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help(name), Buckets: buckets}, labels(name))
}

// Buckets.
var (
	// statusBuckets span a second (a decision in the same pass) to a day (the v1 deposit expiry).
	statusBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400}
	// providerBuckets span a fast API answer to the provider client's deadline and retries.
	providerBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	// facadeBuckets span a cache read to a write that waits for the cache (up to 2 s) and more.
	facadeBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// The collectors.
var (
	transferTransitions    = newCounterVec(TransferTransitionsName)
	transferStatusDuration = newHistogramVec(TransferStatusDurationName, statusBuckets)
	chainHeadBlock         = newGaugeVec(ChainHeadBlockName)
	chainScannedBlock      = newGaugeVec(ChainScannedBlockName)
	chainHeadLag           = newGaugeVec(ChainHeadLagName)
	chainDetectionLag      = newGaugeVec(ChainDetectionLagName)
	chainDeposits          = newCounterVec(ChainDepositsName)
	chainGap               = newGaugeVec(ChainGapName)
	chainCrossChecks       = newCounterVec(ChainCrossChecksName)
	providerRequests       = newCounterVec(ProviderRequestsName)
	providerDuration       = newHistogramVec(ProviderDurationName, providerBuckets)
	facadeRequests         = newCounterVec(FacadeRequestsName)
	facadeDuration         = newHistogramVec(FacadeDurationName, facadeBuckets)
	facadeInFlight         = prometheus.NewGauge(prometheus.GaugeOpts{Name: FacadeInFlightName, Help: help(FacadeInFlightName)})
	facadeRateLimited      = newCounterVec(FacadeRateLimitedName)
	facadeAuthFailures     = newCounterVec(FacadeAuthFailuresName)
	limitStoreErrors       = newCounterVec(LimitStoreErrorsName)
	facadeKeyReads         = newCounterVec(FacadeKeyReadsName)
	facadeBusiestClient    = &funcGauge{desc: newDesc(FacadeBusiestClientName)}
	transfers              = newTransferCounter()
	ratesAge               = &optionalGauge{desc: prometheus.NewDesc(RatesAgeName, help(RatesAgeName), nil, nil)}
	sanctionsAge           = &optionalGauge{desc: prometheus.NewDesc(SanctionsAgeName, help(SanctionsAgeName), nil, nil)}
	ledgerFailures         = newGaugeVec(LedgerFailuresName)
	ledgerChecked          = prometheus.NewGauge(prometheus.GaugeOpts{Name: LedgerCheckedName, Help: help(LedgerCheckedName)})
	treasuryBalance        = newGaugeVec(TreasuryBalanceName)
	sweeperGasBalance      = newGaugeVec(SweeperGasBalanceName)
	sweeperGasBatches      = newGaugeVec(SweeperGasBatchesName)
)

func init() {
	ctrlmetrics.Registry.MustRegister(
		transfers, transferTransitions, transferStatusDuration,
		chainHeadBlock, chainScannedBlock, chainHeadLag, chainDetectionLag, chainDeposits, chainGap, chainCrossChecks,
		providerRequests, providerDuration,
		facadeRequests, facadeDuration, facadeInFlight, facadeRateLimited, facadeAuthFailures, facadeKeyReads,
		limitStoreErrors, facadeBusiestClient,
		ledgerFailures, ledgerChecked,
		treasuryBalance, sweeperGasBalance, sweeperGasBatches,
	)
	// ratesAge is registered by WatchRatesAge, sanctionsAge by WatchSanctionsAge
	// Counters of a known, small label set start at 0, so that rate() and increase() see the
	// first event instead of a series that appears with it.
	for _, r := range []string{authMissing, authMalformed, authInvalid} {
		facadeAuthFailures.WithLabelValues(r)
	}
	for _, l := range []string{LimitStorePerKey, LimitAuthFailures} {
		limitStoreErrors.WithLabelValues(l)
	}
	for _, r := range []string{KeyReadFound, KeyReadAbsent, KeyReadUnread} {
		facadeKeyReads.WithLabelValues(r)
	}
}

// other replaces a label value outside its known set.
const other = "other"

// oneOf returns v when it is in allowed, else "other".
func oneOf(v string, allowed map[string]bool) string {
	if allowed[v] {
		return v
	}
	return other
}

func set(values ...string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}
