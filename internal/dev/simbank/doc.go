// Package simbank is a simulated bank: a real HTTP server that speaks the subset of Wise's
// platform API the wise client uses, so that make run and the tests pay out through real HTTP
// with no bank. It stands in for a bank because no bank can run here, and says so in its name.
//
// API (bearer token required; amounts are JSON numbers):
//
//	POST /v3/profiles/{profileId}/quotes                         quote; fixed targetAmount or sourceAmount
//	POST /v1/accounts                                            recipient account
//	POST /v1/transfers                                           transfer; idempotent by customerTransactionId (a UUID)
//	POST /v3/profiles/{profileId}/transfers/{transferId}/payments  fund from BALANCE; once (422 transfer.invalid-state after)
//	GET  /v1/transfers/{transferId}                              status
//	GET  /v1/transfers?profile=&createdDateStart=&createdDateEnd=&offset=&limit=&customerTransactionId=
//	                                                             list, newest first; the key filter is an extension
//
// and, outside the Wise shape and without a token, GET /ledger (every transfer, oldest first;
// ?reference= filters) and GET /healthz.
//
// Extensions to Wise's API, all documented where they are served: a quote request may carry
// "rate", the rate the service quoted its customer, which the bank then converts at (without it
// the bank prices from the embedded rate snapshot); the transfer list filters by
// customerTransactionId (unless Options.IgnoreKeyFilter, which serves the list as Wise does); a
// transfer carries "failureReason" once it bounces.
//
// Behaviour: a funded transfer goes processing → funds_converted (after half of SettleAfter) →
// outgoing_payment_sent (after SettleAfter). A transfer to an account held by exactly
// FailureName goes processing → bounced_back → cancelled instead, with a failureReason, and is
// never recorded as sent. A transfer to an account held by exactly ReturnName is sent, then
// returned by the recipient's bank Options.ReturnAfter later: bounced_back → cancelled →
// funds_refunded, recorded as sent and returned (Entry.ReturnedAt), as Wise reports a late
// bounce. Server.Lose makes the bank forget a transfer, as a provider that lost one would.
// Amounts are exact decimals in each currency's ISO 4217 minor units: a
// fixed target converts to a source of target ÷ rate rounded up to the source currency's
// minor unit. Every change is fsynced to a JSON-lines journal in Options.Dir before it is
// acknowledged, so a restarted bank keeps its ledger, still recognises every
// customerTransactionId and keeps settling payouts funded before the restart. Faults injects
// errors, timeouts and dropped answers (after acting) for the client's exactly-once tests.
package simbank
