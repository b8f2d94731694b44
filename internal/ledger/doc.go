// Package ledger is the treasury's double-entry view of every movement of money (issue 27): it
// takes plain facts (deposits seen at depth, what each transfer credited, refunds, sweeps,
// payouts as the provider answered them) and returns a report that balances, or says which
// invariant does not hold and why. It reads nothing and writes nothing: the gatherers
// (FactsOf here for the API objects, internal/ledger/gather for the cluster and the archive)
// feed it, and `kubectl payout ledger` and payoutd's periodic check print and count its answer.
//
// Tokens are counted in base units (big.Int), per network and token, at the deposit addresses:
//
//	opening + received ─▶ swept + closing            (per address, and added up per line)
//	received = credited + overpaid + stray            (every log, split by what it pays)
//
// Refunds are a line of their own: the refund wallet sends them (internal/refund), so a
// refunded deposit stays at its deposit address until it is swept like any other; counting it
// as gone from there would make the chain's balances disagree with the ledger.
//
// Fiat is counted per currency in decimal: what the quotes promised for the amounts collected
// (pricing.PayoutTarget) against what the provider says it paid, and the fees charged.
package ledger
