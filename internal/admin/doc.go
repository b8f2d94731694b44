// Package admin holds the operator actions of the service: creating accounts, issuing and
// revoking API keys, verifying and blocking wallets and requesting refunds. The kubectl-payout
// plugin and the local dev environment (`make run` provisions the `default` account) both call
// these functions, so an account made either way is the same account.
//
// Every function checks its input before it calls the API server and says in plain words what
// is wrong; it returns once its change is stored. Mutations only record intent on a resource
// (a revoked flag, a refund request): the controllers and the REST facade act on it.
package admin
