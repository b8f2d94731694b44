package metrics

import "time"

// LedgerInvariants are the invariants of the treasury's ledger (internal/ledger.Invariants),
// the values of payout_ledger_invariant_failures's label.
var LedgerInvariants = []string{"CreditedArrived", "SweptArrived", "RefundOwed", "PayoutFunded", "PaidAsQuoted", "ChainAgrees"}

var ledgerInvariants = set(LedgerInvariants...)

// LedgerChecked records a check of the treasury's ledger that read every fact: its failures by
// invariant (every invariant gets its series, 0 when it holds) and when it ran.
//
// payoutd's periodic check (gather.Checker) calls it after each complete check:
//
//	metrics.LedgerChecked(failures, now)
func LedgerChecked(failures map[string]int, at time.Time) {
	ledgerFailures.DeletePartialMatch(nil) // "other" too: a check counts afresh
	for _, inv := range LedgerInvariants {
		ledgerFailures.WithLabelValues(inv).Set(0)
	}
	for inv, n := range failures {
		ledgerFailures.WithLabelValues(oneOf(inv, ledgerInvariants)).Add(float64(n))
	}
	ledgerChecked.Set(float64(at.Unix()))
}
