// Package transfer decides how a transfer moves through the status machine of spec section 3.
//
// Everything here is pure: given the transfer, what the controller observed (deposits on chain,
// the provider's answer, the recipient, the clock), Decide returns the next facts of the status
// and the actions to take. The transfer controller gathers, performs the actions whose intent is
// already persisted, decides, and persists with its optimistic lock; it never branches on the
// public status, which Phase derives from the facts last.
package transfer
