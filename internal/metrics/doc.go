// Package metrics defines every Prometheus metric of the payout service, in one place, on
// controller-runtime's registry (sigs.k8s.io/controller-runtime/pkg/metrics.Registry): payoutd
// serves them on the manager's metrics endpoint (--metrics-bind-address, /metrics) beside
// controller-runtime's own (controller_runtime_reconcile_*, workqueue_*, rest_client_*).
//
// Other packages never create metrics; they call the functions here, which keep every label
// value inside a known, small set (an unknown value becomes "other"), so no caller input can
// grow the number of series.
//
// The metrics (Catalog lists them, with their types and labels, for the dashboard test and
// docs/operations/monitoring.md):
//
//	payout_transfers{status}                              gauge: transfers by status, counted in the informer cache at scrape time (CountTransfers)
//	payout_transfers_awaiting_chain{network}              gauge: v1 transfers past their expiry that wait for the watcher to pass it (CountTransfers)
//	payout_transfers_needing_attention{reason}            gauge: transfers whose payout the provider lost or the recipient's bank returned, unsettled (CountTransfers)
//	payout_transfer_oldest_in_status_seconds{status}      gauge: time the longest-waiting transfer has been in each status that is not an end (CountTransfers)
//	payout_transfer_transitions_total{from,to}            counter: status changes written by the transfer controller (TransferStatusChanged)
//	payout_transfer_status_duration_seconds{status}       histogram: time a transfer spent in a status, observed when it leaves it
//	payout_chain_head_block{network}                      gauge: the newest block the deposit watcher saw (ChainHead)
//	payout_chain_scanned_block{network}                   gauge: the newest block the watcher has scanned at confirmation depth
//	payout_chain_head_lag_blocks{network}                 gauge: head minus scanned (the confirmation depth plus any backlog)
//	payout_chain_detection_lag_seconds{network}           gauge: block time to recording, of the latest deposit recorded (DepositDetected)
//	payout_chain_deposits_total{network}                  counter: deposits recorded by the watcher
//	payout_chain_gap_blocks{network}                      gauge: blocks to scan again after the watcher lost its place, not scanned yet (ChainGap)
//	payout_chain_crosschecks_total{network,result}        counter: answers that credit money asked again of a second RPC endpoint (ChainCrossCheck)
//	payout_provider_requests_total{operation,outcome}     counter: calls to the fiat payout provider (ProviderCall, InstrumentProvider)
//	payout_provider_request_duration_seconds{operation}   histogram: their latency
//	payout_facade_requests_total{route,method,code}       counter: REST facade requests, by route template (FacadeRequest)
//	payout_facade_request_duration_seconds{route,method}  histogram: their latency
//	payout_facade_requests_in_flight                      gauge: requests being served
//	payout_facade_rate_limited_total{limit}               counter: 429 answers, by per-key budget or "auth-failures" (RateLimited)
//	payout_facade_auth_failures_total{reason}             counter: refused credentials: missing, malformed, invalid (AuthFailure)
//	payout_facade_limit_store_errors_total{limit}         counter: failed calls to the shared limits store (Redis), by limit (LimitStoreError)
//	payout_facade_busiest_client_share                    gauge: share of last minute's requests from the busiest client address (WatchBusiestClientShare)
//	payout_rates_age_seconds                              gauge: age of the live exchange rates, -1 before the first poll (WatchRatesAge)
//	payout_sanctions_list_age_seconds                     gauge: time since the screening list's publish date, -1 without a dated list (WatchSanctionsAge)
//	payout_ledger_invariant_failures{invariant}           gauge: failures of each invariant of the treasury's ledger at its last check (LedgerChecked)
//	payout_ledger_checked_timestamp_seconds               gauge: when the ledger's last complete check ran
//	payout_treasury_balance_base_units{network,token}     gauge: the treasury's token balance, read by the sweeper (Treasury)
//	payout_sweeper_gas_balance_wei{network}               gauge: the sweeper's gas wallet's native balance
//	payout_sweeper_gas_batches_left{network}              gauge: full sweep batches the gas wallet pays at the current fee cap
//
// Label values:
//
//	status     a transfer phase (ready_to_process ... refunded), or "none" before the first status
//	reason     (needing attention) payout_lost, payout_returned
//	network    arbitrum, avalanche, base, ethereum, polygon, solana, tron
//	token      usdc, usdt
//	operation  find, create, get (the methods of fiat.Provider)
//	outcome    success, transient, permanent, inconsistent
//	route      the facade's route template ("/api/payouts/recipients/{id}"), "other" for no route
//	method     GET, POST, PATCH, DELETE, ... ("OTHER" for anything else)
//	code       the HTTP status code
//	limit      a per-key budget of spec 8.1 (quote, transfer, recipients, ...) or "auth-failures";
//	           for the limit store's errors: "per-key" or "auth-failures"
//	reason     (auth failures) missing, malformed, invalid
//	result     agreed, disagreed, unchecked
//	invariant  CreditedArrived, SweptArrived, RefundOwed, PayoutFunded, PaidAsQuoted, ChainAgrees
package metrics
