// Package transfer decides how a transfer moves through the status machine of spec section 3.
//
// Everything here is pure: given the transfer, what the controller observed (deposits on chain,
// the provider's answer, the recipient, the clock), Decide returns the next facts of the status,
// its Ready condition and the actions to take; PayoutStep says what to do about a stored payout
// intent given the provider's answer. The transfer controller gathers (reading only), pays as
// PayoutStep says, decides, and persists with its optimistic lock; it never branches on the
// public status, which Phase derives from the facts last.
package transfer
