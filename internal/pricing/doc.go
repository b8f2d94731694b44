// Package pricing turns a USD source amount into a payout quote: the supported currencies and
// their minor units, USD exchange rates (an embedded snapshot or a live feed that fails closed
// when stale), the service's fee tariff, and the quote and platform-fee arithmetic of spec §2.4,
// §4.9, §4.13 and §4.14.
//
// Money is shopspring decimal throughout. Rates are read from the JSON text, never through
// float64, and every rounding step is named where it happens (see Price for the rules). The
// package does no I/O except in Refresher and LoadSnapshotFile, so quoting is a pure function of
// its inputs and can be replayed for audit from a stored QuoteInput.
//
// Errors meant for the API caller are *apierror.Error (400 for a bad parameter, naming it; 503
// for stale rates); any other error is a configuration or programming fault.
package pricing
