// Package fiat is the boundary between the transfer controller and a fiat payout provider: the
// Provider interface, the request and result of a payout, and the classification of the
// provider's errors. Implementations live in subpackages (wise: a client of a Wise-style HTTP
// API; simbank: the simulated bank that serves that API for make run and the tests).
//
// # Exactly once
//
// A payout is money leaving the company; it must happen once per transfer, whatever crashes,
// timeouts or retries occur. The provider makes this possible with an idempotency key (the
// Reference, the transfer id) and a lookup by that key; the caller must follow this protocol:
//
//  1. Persist the intent (reference, provider name, time) on the transfer before the first
//     Create. A transfer with no persisted intent has, by construction, no payout.
//  2. Call Create with a request rebuilt from the transfer alone, so a retry sends the same
//     request. Create is idempotent by Reference: a repeat returns the payout the first call
//     made (and funds it if it was left unfunded) and never makes a second one.
//  3. On a Transient error the payout may or may not exist: requeue and call Create again, or
//     Find first. Never pick a new reference, and never fail the transfer or refund the deposit
//     on a Transient or Inconsistent error.
//  4. After a restart with an intent but no provider id, Find by reference: found means record
//     it (and, if still StatePending, call Create to fund it); not found means Create.
//  5. Once the provider id is recorded, poll Get by that id (never Find: a lookup by reference
//     may cost a search) until StateCompleted or StateRejected. Only a Permanent error from
//     Create, or a payout in StateRejected, proves that no money went out and lets the transfer
//     fail. An id the provider no longer knows (Inconsistent) is asked by reference once more;
//     still unknown, the payout is lost: never created again, a case for a person.
//  6. After StateCompleted, keep asking Get, rarely, for ReturnWindow: a payout returned by the
//     recipient's bank reads StateRejected, and the money it paid is owed again.
//
// Amounts are shopspring decimals in currency units (not integer minor units), with at most the
// currency's ISO 4217 minor units of decimals (pricing.MinorUnits); nothing here passes through
// float64.
package fiat
